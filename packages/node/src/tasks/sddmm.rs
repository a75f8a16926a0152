//! The SDDMM on tensors: `out[b] = alpha * (X Y)[block b of the pattern] + beta * out[b]`, X, Y
//! and `out` `NativeTensor`s on the pattern's device, read and written in place. As an
//! AsyncTask and synchronously, with the same claims and device rules as `matmul_into.rs` (the
//! TypeScript layer copies array operands into tensors first).

use std::sync::Arc;

use bsrmm::{BsrMatrix, Device, SddmmOptions};
use napi::bindgen_prelude::AsyncTask;
use napi::{Env, Task};
use napi_derive::napi;

use crate::device;
use crate::error::{invalid, to_napi, IntoNapi};
use crate::matrix::{with_matrix, AnyMatrix, NativeBsrMatrix};
use crate::tensor::{present, present_mut, Claim, NativeTensor, TensorElement, TensorInner};

/// One SDDMM into a tensor, holding its operands until it settles.
pub struct SddmmTask {
    pattern: Arc<AnyMatrix>,
    x: Claim,
    y: Claim,
    out: Claim,
    options: SddmmOptions,
}

fn same(a: &Arc<TensorInner>, b: &Arc<TensorInner>) -> bool {
    Arc::ptr_eq(a, b)
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

    fn run(&self, synchronize: bool) -> napi::Result<()> {
        with_matrix!(&*self.pattern, |p| self.run_typed(p, synchronize))
    }

    fn run_typed<T: TensorElement>(&self, pattern: &BsrMatrix<T>, synchronize: bool) -> napi::Result<()> {
        let device = pattern.device();
        for (what, claim) in [("X", &self.x), ("Y", &self.y), ("out", &self.out)] {
            let shape = &claim.tensor.shape;
            if shape.device != device {
                return Err(invalid(format!(
                    "{what} is on {} but the pattern is on {device}: every tensor operand must be on the pattern's device",
                    shape.device
                )));
            }
            if shape.dtype != T::DTYPE {
                return Err(to_napi(bsrmm::Error::new(
                    bsrmm::Status::Unsupported,
                    format!("mixed dtypes are not supported: the pattern is {}, {what} is a {} tensor", T::DTYPE.name(), shape.dtype.name()),
                )));
            }
        }
        let (x_data, y_data) = (self.x.tensor.read(), self.y.tensor.read());
        let mut out_data = self.out.tensor.write();
        // dtypes were checked above: these lookups cannot miss.
        let typed = |what: &str| invalid(format!("{what}: storage does not hold {} elements", T::DTYPE.name()));
        let x = T::storage(present(&x_data, "X")?).ok_or_else(|| typed("X"))?.view(&self.x.tensor.shape).napi()?;
        let y = T::storage(present(&y_data, "Y")?).ok_or_else(|| typed("Y"))?.view(&self.y.tensor.shape).napi()?;
        let out_shape = self.out.tensor.shape;
        let out = T::storage_mut(present_mut(&mut out_data, "out")?).ok_or_else(|| typed("out"))?.view_mut(&out_shape).napi()?;
        let ctx = device::context(device)?;
        bsrmm::sddmm_into(&ctx, pattern, x, y, out, &self.options).napi()?;
        if synchronize && device != Device::Cpu {
            ctx.synchronize().napi()?;
        }
        Ok(())
    }
}

impl Task for SddmmTask {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        self.run(true)
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}

/// `out = alpha * (X Y)[the pattern's blocks] + beta * out` on a worker thread (`out`: nnzb x
/// bh * bw, row-major); resolves when `out` holds the result. The tensors are claimed until then.
#[napi(ts_return_type = "Promise<void>")]
pub fn sddmm_into(pattern: &NativeBsrMatrix, x: &NativeTensor, y: &NativeTensor, out: &NativeTensor, alpha: f64, beta: f64) -> napi::Result<AsyncTask<SddmmTask>> {
    Ok(AsyncTask::new(SddmmTask::new(pattern, x, y, out, alpha, beta)?))
}

/// The same SDDMM on the calling thread; on a CUDA device it is only enqueued.
#[napi]
pub fn sddmm_into_sync(pattern: &NativeBsrMatrix, x: &NativeTensor, y: &NativeTensor, out: &NativeTensor, alpha: f64, beta: f64) -> napi::Result<()> {
    SddmmTask::new(pattern, x, y, out, alpha, beta)?.run(false)
}
