//! Burn backend extension for bsrmm: block-sparse (BSR) x dense matmul as a Burn op, with
//! gradients, and a [`BsrLinear`] layer whose weight is block-sparse.
//!
//! Burn 0.22 tensors are runtime-dispatched: the op is declared once as a backend-extension
//! trait ([`BsrBackend`]) and implemented for
//! - Flex, Burn's CPU backend (burn-ndarray is deprecated in 0.22 in favour of it): the
//!   operands are read on the host and multiplied by bsrmm's CPU backend;
//! - Cube on CUDA (cargo feature `cuda`): bsrmm runs on the device pointers of Burn's own
//!   tensors;
//! - Autodiff over either: gradients for the values and for the dense input.
//!
//! ```
//! use burn::tensor::{Device, Tensor};
//! use burn_bsrmm::{bsr_matmul, BsrPattern};
//!
//! let device = Device::flex();
//! // 4x4 with 2x2 blocks on the diagonal.
//! let pattern = BsrPattern::from_block_fn(4, 4, (2, 2), |r, c| r == c)?;
//! let values = Tensor::<3>::ones(pattern.values_shape(), &device);
//! let dense = Tensor::<2>::ones([4, 3], &device);
//! let out = bsr_matmul(&pattern, values, dense, false)?;
//! assert_eq!(out.dims(), [4, 3]);
//! assert_eq!(out.into_data().try_to_vec::<f32>().unwrap(), vec![2.0; 12]);
//! # Ok::<(), bsrmm::Error>(())
//! ```

mod autodiff;
#[cfg(feature = "cuda")]
mod cuda;
mod host;
mod linear;
mod pattern;
mod prune;
mod record;

use burn::backend::tensor::FloatTensor;
use burn::backend::{backend_extension, Dispatch, Flex, TensorMetadata};
use burn::tensor::{Shape, Tensor};

pub use linear::{BsrLinear, BsrLinearConfig};
pub use pattern::BsrPattern;
pub use prune::Keep;

/// The backend operation: `op(A) * dense`, where A has the structure `pattern` and the values
/// `values` (`[nnzb, block_height, block_width]`), and `dense` is `[rows of op(A)^T, n]`.
///
/// Use [`bsr_matmul`], which checks shapes first; backends assume checked shapes.
#[backend_extension(Flex, Cube: cfg(feature = "cuda"), Autodiff)]
pub trait BsrBackend: burn::backend::Backend {
    /// `op(A) * dense` as a new `[rows of op(A), n]` tensor.
    fn bsr_matmul(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self>;

    /// `op(A) * dense + bias` with `bias` (`[rows of op(A)]`) added to each row: the core's
    /// epilogue. This default adds it as a separate op; Flex overrides it with one fused call
    /// and Autodiff with the inner backend's call plus the bias's gradient. Cube keeps the
    /// default (its launch passes no bias yet).
    /// The SDDMM: the stored blocks of `x * y` at `pattern`, as a `[nnzb, block_height,
    /// block_width]` tensor, where `x` is `[rows, t]` and `y` is `[t, cols]` of the pattern's
    /// `rows x cols` (the weight gradient of `C = A B` is `sddmm(dC, B^T)`). Never a dense
    /// `rows x cols` product nor a gather of the operands' rows.
    fn bsr_sddmm(x: FloatTensor<Self>, y: FloatTensor<Self>, pattern: BsrPattern) -> FloatTensor<Self>;

    fn bsr_matmul_bias(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self> {
        let rows = bias.shape()[0];
        let product = Self::bsr_matmul(values, dense, pattern, transpose);
        Self::float_add(product, Self::float_reshape(bias, Shape::new([rows, 1])))
    }
}

impl BsrBackend for Flex {
    fn bsr_matmul(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self> {
        host::flex_bsr_matmul(values, dense, None, &pattern, transpose)
    }

    fn bsr_matmul_bias(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        bias: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self> {
        host::flex_bsr_matmul(values, dense, Some(bias), &pattern, transpose)
    }

    fn bsr_sddmm(x: FloatTensor<Self>, y: FloatTensor<Self>, pattern: BsrPattern) -> FloatTensor<Self> {
        host::flex_bsr_sddmm(x, y, &pattern)
    }
}

/// `op(A) * dense` for a block-sparse A (`pattern` + `values`), differentiable in both `values`
/// and `dense`.
///
/// `values` is `[nnzb, block_height, block_width]` (each block row-major), `dense` is
/// `[k, n]` with `k` the column count of `op(A)`; the result is `[rows of op(A), n]`, on the
/// device and in the dtype of `values`. Mismatched shapes, devices or dtypes are an
/// `Err(BSRMM_STATUS_INVALID_ARGUMENT)` naming the argument.
pub fn bsr_matmul(
    pattern: &BsrPattern,
    values: Tensor<3>,
    dense: Tensor<2>,
    transpose: bool,
) -> bsrmm::Result<Tensor<2>> {
    check_operands(pattern, &values, &dense, transpose)?;
    let out = Dispatch::bsr_matmul(values.into_dispatch(), dense.into_dispatch(), pattern.clone(), transpose);
    Ok(Tensor::from_dispatch(out))
}

/// [`bsr_matmul`] plus `bias` (`[rows of op(A)]`) added to every column of the product, in
/// the multiply's epilogue where the backend fuses it (see [`BsrBackend::bsr_matmul_bias`]);
/// differentiable in `values`, `dense` and `bias`.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use burn_bsrmm::{bsr_matmul_bias, BsrPattern};
///
/// let device = Device::flex();
/// let pattern = BsrPattern::from_block_fn(4, 4, (2, 2), |r, c| r == c)?;
/// let values = Tensor::<3>::ones(pattern.values_shape(), &device);
/// let bias = Tensor::<1>::from_floats([1.0, 2.0, 3.0, 4.0], &device);
/// let out = bsr_matmul_bias(&pattern, values, Tensor::<2>::ones([4, 1], &device), bias, false)?;
/// assert_eq!(out.into_data().try_to_vec::<f32>().unwrap(), vec![3.0, 4.0, 5.0, 6.0]);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub fn bsr_matmul_bias(
    pattern: &BsrPattern,
    values: Tensor<3>,
    dense: Tensor<2>,
    bias: Tensor<1>,
    transpose: bool,
) -> bsrmm::Result<Tensor<2>> {
    check_operands(pattern, &values, &dense, transpose)?;
    let (m, _) = pattern.op_shape(transpose);
    if bias.dims() != [m] {
        return Err(invalid(format!("bias has shape {:?}, op(A) has {m} rows: it needs [{m}]", bias.dims())));
    }
    if bias.device() != values.device() {
        return Err(invalid(format!("bias is on {:?} but values are on {:?}", bias.device(), values.device())));
    }
    if bias.dtype() != values.dtype() {
        return Err(invalid(format!("bias is {:?} but values are {:?}", bias.dtype(), values.dtype())));
    }
    let out = Dispatch::bsr_matmul_bias(values.into_dispatch(), dense.into_dispatch(), bias.into_dispatch(), pattern.clone(), transpose);
    Ok(Tensor::from_dispatch(out))
}

/// The SDDMM: `x * y` (`[rows, t]` times `[t, cols]`, for a pattern of `rows x cols`) at the
/// pattern's stored blocks, as a `[nnzb, block_height, block_width]` tensor on the device and in
/// the dtype of `x`; differentiable in `x` and `y`. It is the weight gradient of a block-sparse
/// layer: for `C = A B`, `dA`'s stored blocks are `bsr_sddmm(pattern, dC, B^T)`. Mismatched
/// shapes, devices or dtypes are an `Err(BSRMM_STATUS_INVALID_ARGUMENT)` naming the argument.
///
/// ```
/// use burn::tensor::{Device, Tensor};
/// use burn_bsrmm::{bsr_sddmm, BsrPattern};
///
/// let device = Device::flex();
/// let pattern = BsrPattern::from_block_fn(4, 4, (2, 2), |r, c| r != c)?; // the off-diagonal blocks
/// let x = Tensor::<2>::ones([4, 3], &device);
/// let values = bsr_sddmm(&pattern, x.clone(), x.transpose())?;
/// assert_eq!(values.dims(), [2, 2, 2]);
/// assert_eq!(values.into_data().try_to_vec::<f32>().unwrap(), vec![3.0; 8]);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub fn bsr_sddmm(pattern: &BsrPattern, x: Tensor<2>, y: Tensor<2>) -> bsrmm::Result<Tensor<3>> {
    let ([x_rows, t], [y_rows, y_cols]) = (x.dims(), y.dims());
    if x_rows != pattern.rows() {
        return Err(invalid(format!("x has {x_rows} rows, the pattern ({pattern}) has {}", pattern.rows())));
    }
    if y_cols != pattern.cols() {
        return Err(invalid(format!("y has {y_cols} columns, the pattern ({pattern}) has {}", pattern.cols())));
    }
    if y_rows != t {
        return Err(invalid(format!("x is [{x_rows}, {t}] and y is [{y_rows}, {y_cols}]: x's columns must be y's rows")));
    }
    if x.device() != y.device() {
        return Err(invalid(format!("x is on {:?} but y is on {:?}", x.device(), y.device())));
    }
    if x.dtype() != y.dtype() {
        return Err(invalid(format!("x is {:?} but y is {:?}", x.dtype(), y.dtype())));
    }
    Ok(Tensor::from_dispatch(Dispatch::bsr_sddmm(x.into_dispatch(), y.into_dispatch(), pattern.clone())))
}

fn invalid(message: String) -> bsrmm::Error {
    bsrmm::Error::invalid_argument(message)
}

fn check_operands(pattern: &BsrPattern, values: &Tensor<3>, dense: &Tensor<2>, transpose: bool) -> bsrmm::Result<()> {
    if values.dims() != pattern.values_shape() {
        return Err(invalid(format!(
            "values has shape {:?}, the pattern needs [nnzb, block_height, block_width] = {:?}",
            values.dims(),
            pattern.values_shape()
        )));
    }
    let (_, k) = pattern.op_shape(transpose);
    if dense.dims()[0] != k {
        return Err(invalid(format!(
            "dense has {} rows, op(A) ({}x{}{}) has {k} columns",
            dense.dims()[0],
            pattern.rows(),
            pattern.cols(),
            if transpose { ", transposed" } else { "" }
        )));
    }
    if values.device() != dense.device() {
        return Err(invalid(format!("values are on {:?} but dense is on {:?}", values.device(), dense.device())));
    }
    if values.dtype() != dense.dtype() {
        return Err(invalid(format!("values are {:?} but dense is {:?}", values.dtype(), dense.dtype())));
    }
    Ok(())
}
