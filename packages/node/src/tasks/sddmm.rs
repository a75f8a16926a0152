//! The SDDMM on tensors: `out[b] = alpha * (X Y)[block b of the pattern] + beta * out[b]`, X, Y
//! and `out` `NativeTensor`s on the pattern's device, read and written in place. As an
//! AsyncTask and synchronously, with the same claims and device rules as `matmul_into.rs` (the
//! TypeScript layer copies array operands into tensors first).

use std::sync::Arc;

use bsrmm::{BsrMatrix, SddmmOptions};
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;

use crate::device;
use crate::error::{invalid, IntoNapi};
use crate::matrix::{with_matrix, AnyMatrix, NativeBsrMatrix};
use crate::tasks::in_place::{check_operands, not_typed, same, settle, InPlace, InPlaceTask};
use crate::tensor::{present, present_mut, Claim, NativeTensor, TensorElement};

/// One SDDMM into a tensor, holding its operands until it settles.
pub struct SddmmTask {
    pattern: Arc<AnyMatrix>,
    x: Claim,
    y: Claim,
    out: Claim,
    options: SddmmOptions,
}

impl SddmmTask {
    fn new(pattern: &NativeBsrMatrix, x: &NativeTensor, y: &NativeTensor, out: &NativeTensor, alpha: f64, beta: f64) -> napi::Result<Self> {
        for (what, operand) in [("X", x), ("Y", y)] {
            if same(&operand.inner, &out.inner) {
                return Err(invalid(format!("out is also {what}: the SDDMM would overwrite {what} while reading it")));
            }
        }
        // A claim refused here releases the ones taken before it (Drop).
        let out = Claim::write(&out.inner, "out")?;
        let x = Claim::read(&x.inner, "X")?;
        let y = Claim::read(&y.inner, "Y")?;
        Ok(SddmmTask { pattern: pattern.matrix()?, x, y, out, options: SddmmOptions::new().alpha(alpha).beta(beta) })
    }

    fn run_typed<T: TensorElement>(&self, pattern: &BsrMatrix<T>, synchronize: bool) -> napi::Result<()> {
        let device = pattern.device();
        check_operands::<T>("the pattern", device, &[("X", Some(&self.x)), ("Y", Some(&self.y)), ("out", Some(&self.out))])?;
        let (x_data, y_data) = (self.x.tensor.read(), self.y.tensor.read());
        let mut out_data = self.out.tensor.write();
        // dtypes were checked above: these lookups cannot miss.
        let typed = not_typed::<T>;
        let x = T::storage(present(&x_data, "X")?).ok_or_else(|| typed("X"))?.view(&self.x.tensor.shape).napi()?;
        let y = T::storage(present(&y_data, "Y")?).ok_or_else(|| typed("Y"))?.view(&self.y.tensor.shape).napi()?;
        let out_shape = self.out.tensor.shape;
        let out = T::storage_mut(present_mut(&mut out_data, "out")?).ok_or_else(|| typed("out"))?.view_mut(&out_shape).napi()?;
        let ctx = device::context(device)?;
        bsrmm::sddmm_into(&ctx, pattern, x, y, out, &self.options).napi()?;
        settle(&ctx, device, synchronize)
    }
}

impl InPlace for SddmmTask {
    fn run(&self, synchronize: bool) -> napi::Result<()> {
        with_matrix!(&*self.pattern, |p| self.run_typed(p, synchronize))
    }
}

/// `out = alpha * (X Y)[the pattern's blocks] + beta * out` on a worker thread (`out`: nnzb x
/// bh * bw, row-major); resolves when `out` holds the result. The tensors are claimed until then.
#[napi(ts_return_type = "Promise<void>")]
pub fn sddmm_into(pattern: &NativeBsrMatrix, x: &NativeTensor, y: &NativeTensor, out: &NativeTensor, alpha: f64, beta: f64) -> napi::Result<AsyncTask<InPlaceTask<SddmmTask>>> {
    Ok(AsyncTask::new(InPlaceTask(SddmmTask::new(pattern, x, y, out, alpha, beta)?)))
}

/// The same SDDMM on the calling thread; on a CUDA device it is only enqueued.
#[napi]
pub fn sddmm_into_sync(pattern: &NativeBsrMatrix, x: &NativeTensor, y: &NativeTensor, out: &NativeTensor, alpha: f64, beta: f64) -> napi::Result<()> {
    SddmmTask::new(pattern, x, y, out, alpha, beta)?.run(false)
}
