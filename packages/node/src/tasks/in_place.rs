//! What the tasks that write a tensor in place share (matmul_into.rs, sddmm.rs): one claim per
//! tensor operand, checked against the matrix's device and dtype; the wait for the device after
//! an async run; and the AsyncTask whose Promise resolves when `out` holds the result.

use std::sync::Arc;

use bsrmm::{Context, Device};
use napi::{Env, Task};

use crate::error::{invalid, to_napi, IntoNapi};
use crate::tensor::{Claim, TensorElement, TensorInner};

/// Whether two tensor handles share one tensor (an output that is also an input).
pub fn same(a: &Arc<TensorInner>, b: &Arc<TensorInner>) -> bool {
    Arc::ptr_eq(a, b)
}

/// Every claimed operand must be on `device` and hold `T`, the dtype of the matrix `owner` ("A",
/// "the pattern"); a missing optional operand (`None`) is skipped.
pub fn check_operands<T: TensorElement>(owner: &str, device: Device, operands: &[(&str, Option<&Claim>)]) -> napi::Result<()> {
    for &(what, claim) in operands {
        let Some(claim) = claim else { continue };
        let shape = &claim.tensor.shape;
        if shape.device != device {
            return Err(invalid(format!(
                "{what} is on {} but {owner} is on {device}: every tensor operand must be on {owner}'s device",
                shape.device
            )));
        }
        if shape.dtype != T::DTYPE {
            return Err(to_napi(bsrmm::Error::new(
                bsrmm::Status::Unsupported,
                format!("mixed dtypes are not supported: {owner} is {}, {what} is a {} tensor", T::DTYPE.name(), shape.dtype.name()),
            )));
        }
    }
    Ok(())
}

/// The error for a storage that does not hold `T` (the dtype checks above make it unreachable).
pub fn not_typed<T: TensorElement>(what: &str) -> napi::Error {
    invalid(format!("{what}: storage does not hold {} elements", T::DTYPE.name()))
}

/// After the work is queued on `ctx`: an async run waits for the device, so that its Promise
/// resolves with the result in place; a sync run on a CUDA device only enqueues (the CPU is done).
pub fn settle(ctx: &Context, device: Device, synchronize: bool) -> napi::Result<()> {
    if synchronize && device != Device::Cpu {
        ctx.synchronize().napi()?;
    }
    Ok(())
}

/// A task that writes a tensor in place, run on the calling thread (`synchronize` false) or on a
/// worker as an [`InPlaceTask`] (true).
pub trait InPlace: Send + 'static {
    fn run(&self, synchronize: bool) -> napi::Result<()>;
}

/// The AsyncTask of an in-place task: runs it on the libuv worker and waits for the device.
pub struct InPlaceTask<J>(pub J);

impl<J: InPlace> Task for InPlaceTask<J> {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        self.0.run(true)
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}
