//! The multiply on tensors: B, the bias and `out` are `NativeTensor`s on A's device, read and
//! written in place (nothing is copied across the bus). As an AsyncTask and synchronously.
//!
//! The async form holds claims on its tensors (see tensor.rs) from submission until it settles,
//! and waits for the device on the worker thread, so the Promise resolves when `out` holds the
//! product. The sync form on a CUDA device only enqueues the work on the device's stream (as a
//! CUDA call does): `toArray()` and `synchronize()` wait for it.

use std::sync::Arc;

use bsrmm::{Activation, BsrMatrix, Device, MatmulOptions, Op};
use napi::bindgen_prelude::AsyncTask;
use napi_derive::napi;

use crate::device;
use crate::error::{invalid, IntoNapi};
use crate::matrix::{with_matrix, AnyMatrix, NativeBsrMatrix};
use crate::tasks::in_place::{check_operands, not_typed, same, settle, InPlace, InPlaceTask};
use crate::tasks::matmul::parse_activation;
use crate::tensor::{present, present_mut, Claim, NativeTensor, TensorElement};

/// The epilogue, as the TypeScript layer passes it (already checked there).
#[napi(object)]
pub struct NativeEpilogue {
    /// Multiply by A transposed.
    pub transpose: bool,
    pub alpha: f64,
    /// Scale of `out`'s current contents.
    pub beta: f64,
    /// "none", "relu", "gelu" or "silu".
    pub activation: String,
}

/// One multiply into a tensor, holding its operands until it settles.
pub struct MatmulIntoTask {
    a: Arc<AnyMatrix>,
    b: Claim,
    bias: Option<Claim>,
    out: Claim,
    op: Op,
    alpha: f64,
    beta: f64,
    activation: Activation,
}

impl MatmulIntoTask {
    fn new(a: &NativeBsrMatrix, b: &NativeTensor, out: &NativeTensor, bias: Option<&NativeTensor>, epilogue: NativeEpilogue) -> napi::Result<Self> {
        if same(&b.inner, &out.inner) {
            return Err(invalid("out is also B: the multiply would overwrite B while reading it"));
        }
        if bias.is_some_and(|bias| same(&bias.inner, &out.inner)) {
            return Err(invalid("out is also the bias: the multiply would overwrite the bias while reading it"));
        }
        let activation = parse_activation(&epilogue.activation)?;
        // A claim refused here releases the ones taken before it (Drop).
        let out = Claim::write(&out.inner, "out")?;
        let b = Claim::read(&b.inner, "B")?;
        let bias = bias.map(|bias| Claim::read(&bias.inner, "bias")).transpose()?;
        Ok(MatmulIntoTask {
            a: a.matrix()?,
            b,
            bias,
            out,
            op: if epilogue.transpose { Op::Transpose } else { Op::None },
            alpha: epilogue.alpha,
            beta: epilogue.beta,
            activation,
        })
    }

    fn run_typed<T: TensorElement>(&self, a: &BsrMatrix<T>, synchronize: bool) -> napi::Result<()> {
        let device = a.device();
        check_operands::<T>("A", device, &[("B", Some(&self.b)), ("bias", self.bias.as_ref()), ("out", Some(&self.out))])?;
        let b_data = self.b.tensor.read();
        let bias_data = self.bias.as_ref().map(|bias| bias.tensor.read());
        let mut out_data = self.out.tensor.write();
        // dtypes were checked above: these lookups cannot miss.
        let typed = not_typed::<T>;
        let b_view = T::storage(present(&b_data, "B")?).ok_or_else(|| typed("B"))?.view(&self.b.tensor.shape).napi()?;
        let mut options = MatmulOptions::<T>::new().op(self.op).alpha(self.alpha).beta(self.beta).activation(self.activation);
        if let (Some(bias), Some(data)) = (&self.bias, &bias_data) {
            let shape = &bias.tensor.shape;
            let len = shape.rows * shape.cols;
            options = options.bias(T::storage(present(data, "bias")?).ok_or_else(|| typed("bias"))?.vector(len).napi()?);
        }
        let out_shape = self.out.tensor.shape;
        let out_view = T::storage_mut(present_mut(&mut out_data, "out")?).ok_or_else(|| typed("out"))?.view_mut(&out_shape).napi()?;
        let ctx = device::context(device)?;
        bsrmm::matmul_into(&ctx, a, b_view, out_view, &options).napi()?;
        settle(&ctx, device, synchronize)
    }
}

impl InPlace for MatmulIntoTask {
    fn run(&self, synchronize: bool) -> napi::Result<()> {
        with_matrix!(&*self.a, |a| self.run_typed(a, synchronize))
    }
}

/// `out = alpha * op(A) * B + beta * out` (+ bias, activation) on a worker thread; resolves
/// when `out` holds the result. The tensors are claimed until then.
#[napi(ts_return_type = "Promise<void>")]
pub fn matmul_into(
    a: &NativeBsrMatrix,
    b: &NativeTensor,
    out: &NativeTensor,
    bias: Option<&NativeTensor>,
    epilogue: NativeEpilogue,
) -> napi::Result<AsyncTask<InPlaceTask<MatmulIntoTask>>> {
    Ok(AsyncTask::new(InPlaceTask(MatmulIntoTask::new(a, b, out, bias, epilogue)?)))
}

/// The same multiply on the calling thread; on a CUDA device it is only enqueued.
#[napi]
pub fn matmul_into_sync(
    a: &NativeBsrMatrix,
    b: &NativeTensor,
    out: &NativeTensor,
    bias: Option<&NativeTensor>,
    epilogue: NativeEpilogue,
) -> napi::Result<()> {
    MatmulIntoTask::new(a, b, out, bias, epilogue)?.run(false)
}

/// Waits until the work queued on `device` is done (nothing to wait for on "cpu").
#[napi]
pub fn synchronize(device: String) -> napi::Result<()> {
    match device::parse(&device)? {
        Device::Cpu => Ok(()),
        cuda => device::context(cuda)?.synchronize().napi(),
    }
}
