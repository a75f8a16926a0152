//! bsrmm: block-sparse (BSR) x dense matrix multiply, on NVIDIA GPUs and the CPU.
//!
//! ```text
//! C = alpha * op(A) * B + beta * C      A: BSR (square or rectangular blocks), B and C: dense
//! values[b] = alpha * (X * Y)[block b of A] + beta * values[b]     SDDMM: [`sddmm_into`]
//! ```
//!
//! A safe layer over the C++/CUDA core (through `bsrmm-sys`): owned [`BsrMatrix`] values, views
//! of dense operands ([`DenseRef`], [`DenseMut`]) in row- or column-major order, and
//! `Result<_, `[`Error`]`>` everywhere (bad input never panics; the error's
//! [`code`](Error::code) is the C status name and its message names the argument and the rule).
//!
//! Element types: `f32`, `f64`, `half::f16`, `half::bf16` (see [`Element`]); fp8
//! (`F8E4M3`, `F8E5M2`, re-exported from `float8`) for A's values and B with fp32 [`Scales`]:
//! [`BsrMatrix::from_bsr_scaled`] and [`matmul_fp8_into`].
//!
//! ```
//! use bsrmm::{matmul, BsrMatrix, Context, Dense, Layout, MatmulOptions};
//!
//! let ctx = Context::cpu()?;
//! // A 4x4 matrix of 2x2 blocks, with blocks at (0, 0) and (1, 1): the identity times 2.
//! let a = BsrMatrix::<f32>::from_bsr(
//!     &ctx, 4, 4, (2, 2),
//!     &[0i32, 1, 2], &[0, 1],
//!     &[2., 0., 0., 2., 2., 0., 0., 2.],
//!     Default::default(),
//! )?;
//! let b = Dense::from_fn(4, 3, Layout::RowMajor, |i, j| (i * 3 + j) as f32);
//! let c = matmul(&ctx, &a, b.view(), Layout::RowMajor, &MatmulOptions::new())?;
//! assert_eq!(c.get(3, 2), 2.0 * 11.0);
//!
//! // Bad input is an error, not a panic.
//! let err = BsrMatrix::<f32>::from_bsr(&ctx, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 5], &[0.; 8], Default::default())
//!     .unwrap_err();
//! assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT");
//! # Ok::<(), bsrmm::Error>(())
//! ```
//!
//! GPU operands are passed as raw device pointers through the `unsafe`
//! [`DenseRef::from_raw_parts`] / [`DenseMut::from_raw_parts`] constructors, or held in a
//! [`DeviceBuffer`] (a minimal owned CUDA allocation with checked views), with a context on
//! `Device::Cuda(n)`; the multiply is enqueued on the context's stream.
//!
//! Cargo feature `ndarray`: `DenseRef`/`DenseMut` from ndarray's 2-D views (`TryFrom`, without a
//! copy, for row- and column-major views and slices of them), `ArrayView2` from a host
//! `DenseRef`, and `Array2` from a `Dense` (`From`).

mod context;
mod dense;
mod device;
mod device_buffer;
mod element;
mod error;
mod matmul;
mod matrix;
mod scales;
mod sddmm;
#[cfg(feature = "ndarray")]
mod ndarray_interop;

pub use context::{Context, F32Mode, TuningMode};
pub use dense::{try_filled, Dense, DenseMut, DenseRef, Layout};
pub use device::Device;
pub use device_buffer::DeviceBuffer;
pub use element::{DType, Element, Fp8Element, Index};
pub use float8::{F8E4M3, F8E5M2};
pub use error::{Error, Result, Status};
pub use half::{bf16, f16};
pub use matmul::{matmul, matmul_fp8, matmul_fp8_into, matmul_into, Activation, MatmulOptions, Op};
pub use matrix::{BsrMatrix, BsrParts, CreateOptions};
pub use scales::{ScaleKind, Scales};
pub use sddmm::{sddmm, sddmm_into, SddmmOptions};

/// The core's version, e.g. "0.1.0".
pub fn version() -> String {
    bsrmm_sys::ffi::version()
}

/// Whether the core was built with CUDA kernels.
pub fn cuda_compiled() -> bool {
    bsrmm_sys::ffi::cuda_compiled()
}

/// The number of usable CUDA devices; `Err` with `BSRMM_STATUS_NO_DEVICE` (and the reason) when
/// there are none.
pub fn cuda_device_count() -> Result<usize> {
    Ok(bsrmm_sys::ffi::cuda_device_count()?.max(0) as usize)
}

/// Why CUDA device 0 cannot be used, or `None` when it can: the core was built without CUDA,
/// it reports no device, or the driver's reason. For skipping GPU work with a visible reason.
///
/// ```
/// match bsrmm::cuda_unavailable_reason() {
///     None => println!("multiplying on cuda:0"),
///     Some(why) => println!("CPU only: {why}"),
/// }
/// ```
pub fn cuda_unavailable_reason() -> Option<String> {
    if !cuda_compiled() {
        return Some("bsrmm was built without CUDA (no nvcc found at build time)".to_owned());
    }
    match cuda_device_count() {
        Ok(n) if n > 0 => None,
        Ok(_) => Some("the core reports 0 CUDA devices".to_owned()),
        Err(e) => Some(format!("no CUDA device ({e})")),
    }
}

/// The kernel variants compiled into the core (CPU ones included), CUTLASS-style names: the
/// matmul variants, then the SDDMM ones (`variants_of` lists one kind).
pub fn variants() -> Vec<String> {
    (0..bsrmm_sys::ffi::variant_count()).map(bsrmm_sys::ffi::variant_name).collect()
}

/// The operation a kernel variant runs. `Context::set_variant` forces either kind: `matmul`
/// runs a forced matmul variant and `sddmm` a forced SDDMM variant; each returns an
/// `INVALID_ARGUMENT` error for a forced variant of the other kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VariantKind {
    Matmul,
    Sddmm,
}

/// The variants of one kind, in `variants()`'s order.
pub fn variants_of(kind: VariantKind) -> Vec<String> {
    (0..bsrmm_sys::ffi::variant_count())
        .filter(|&index| {
            // Indices below variant_count() always have a kind.
            let sddmm = bsrmm_sys::ffi::variant_is_sddmm(index).unwrap_or(false);
            sddmm == (kind == VariantKind::Sddmm)
        })
        .map(bsrmm_sys::ffi::variant_name)
        .collect()
}
