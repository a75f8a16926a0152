//! The native half of the `bsrmm` npm package: a translation layer from JS values to the
//! `bsrmm` Rust crate. Argument checks that JS can do (types, lengths, shapes) live in the
//! TypeScript layer; everything here still refuses bad input with an error, never a crash.
//!
//! Errors reach JS with the message `"<C status name>: <core message>"`; the TypeScript layer
//! turns that into a `BsrmmError` with a `code`.

mod device;
mod dtype;
mod error;
mod fp8;
mod matrix;
mod tasks;
mod tensor;

pub use fp8::{fp8_decode, fp8_encode};
pub use matrix::NativeBsrMatrix;
pub use tasks::in_place::InPlaceTask;
pub use tasks::matmul::{matmul, matmul_sync, MatmulTask};
pub use tasks::matmul_into::{matmul_into, matmul_into_sync, synchronize, MatmulIntoTask};
pub use tasks::sddmm::{sddmm_into, sddmm_into_sync, SddmmTask};
pub use tensor::NativeTensor;

use napi_derive::napi;

/// The core's version.
#[napi]
pub fn version() -> String {
    bsrmm::version()
}

/// Whether the core was built with CUDA kernels.
#[napi]
pub fn cuda_compiled() -> bool {
    bsrmm::cuda_compiled()
}

/// Usable CUDA devices (0 when there are none, for whatever reason).
#[napi]
pub fn cuda_device_count() -> u32 {
    bsrmm::cuda_device_count().map_or(0, |n| n as u32)
}

/// Kernel variants compiled into the core: the matmul ones, then the SDDMM ones; `kind`
/// ("matmul" or "sddmm") lists one operation's.
#[napi]
pub fn variants(kind: Option<String>) -> napi::Result<Vec<String>> {
    match kind.as_deref() {
        None => Ok(bsrmm::variants()),
        Some("matmul") => Ok(bsrmm::variants_of(bsrmm::VariantKind::Matmul)),
        Some("sddmm") => Ok(bsrmm::variants_of(bsrmm::VariantKind::Sddmm)),
        Some(other) => Err(error::invalid(format!("kind must be \"matmul\", \"sddmm\" or undefined; got {other:?}"))),
    }
}
