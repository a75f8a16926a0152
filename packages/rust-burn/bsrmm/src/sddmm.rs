//! The sampled dense-dense multiply (SDDMM): the product of two dense matrices, computed only at
//! the stored blocks of a pattern. It is the weight gradient of a block-sparse layer: for
//! `Y = W X`, `dW = sddmm(W, dY, X^T)`.
//!
//! ```text
//! values[b] = alpha * (X * Y)[rows and columns of block b] + beta * values[b]
//! ```

use crate::context::Context;
use crate::dense::{try_filled, DenseMut, DenseRef, Layout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::matrix::BsrMatrix;

/// Everything about one SDDMM besides the operands. The default is `values = X * Y` at the
/// pattern's blocks.
///
/// ```
/// use bsrmm::SddmmOptions;
/// let opts = SddmmOptions::new().alpha(0.5).beta(1.0);
/// assert_eq!((opts.alpha_value(), opts.beta_value()), (0.5, 1.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SddmmOptions {
    alpha: f64,
    beta: f64,
}

impl Default for SddmmOptions {
    fn default() -> Self {
        SddmmOptions { alpha: 1.0, beta: 0.0 }
    }
}

impl SddmmOptions {
    /// `values = X * Y` at the pattern's blocks.
    pub fn new() -> Self {
        Self::default()
    }
    /// Scale of the product.
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = alpha;
        self
    }
    /// Scale of the existing values (0: they are only written, NaN there does not propagate).
    pub fn beta(mut self, beta: f64) -> Self {
        self.beta = beta;
        self
    }
    /// The alpha set.
    pub fn alpha_value(&self) -> f64 {
        self.alpha
    }
    /// The beta set.
    pub fn beta_value(&self) -> f64 {
        self.beta
    }
}

/// `values[b] = alpha * (X * Y)[block b of pattern] + beta * values[b]` into an existing
/// `values` view.
///
/// `pattern` is `M x K` (its own values are not read), `x` is `M x T`, `y` is `T x K` (either
/// layout, any leading dimension: a transposed matrix is a column-major view of it), and
/// `values` is `nnzb x (block_height * block_width)`, row-major: one row per stored block, in
/// the pattern's order (as [`BsrMatrix::export`] lists them), each block row-major. Everything
/// must be on `ctx`'s device; on a CUDA context the work is only enqueued on its stream.
///
/// ```
/// use bsrmm::{sddmm_into, BsrMatrix, Context, DenseMut, DenseRef, Layout, SddmmOptions};
/// let ctx = Context::cpu()?;
/// // 2x4 with 1x2 blocks at (0, 1) and (1, 0).
/// let w = BsrMatrix::<f64>::from_bsr(&ctx, 2, 4, (1, 2), &[0i32, 1, 2], &[1, 0], &[0.0; 4], Default::default())?;
/// let x = [1.0, 2.0];                    // 2x1
/// let y = [1.0, 10.0, 100.0, 1000.0];    // 1x4
/// let mut values = [f64::NAN; 4];
/// sddmm_into(
///     &ctx, &w,
///     DenseRef::packed(&x, 2, 1, Layout::RowMajor)?,
///     DenseRef::packed(&y, 1, 4, Layout::RowMajor)?,
///     DenseMut::packed(&mut values, 2, 2, Layout::RowMajor)?,
///     &SddmmOptions::new(),
/// )?;
/// assert_eq!(values, [100.0, 1000.0, 2.0, 20.0]);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub fn sddmm_into<T: Element>(
    ctx: &Context,
    pattern: &BsrMatrix<T>,
    x: DenseRef<'_, T>,
    y: DenseRef<'_, T>,
    values: DenseMut<'_, T>,
    options: &SddmmOptions,
) -> Result<()> {
    let native = bsrmm_sys::ffi::SddmmOptions { alpha: options.alpha, beta: options.beta };
    let mut guard = ctx.lock();
    // SAFETY: X and Y are readable and `values` writable for their whole spans (checked for
    // host slices, promised by from_raw_parts for device memory), borrowed for this call; a
    // DenseMut is an exclusive borrow, so it cannot overlap the shared borrows X and Y. The
    // core rejects shapes, dtypes and devices that disagree.
    unsafe { bsrmm_sys::ffi::sddmm(guard.pin_mut(), pattern.native(), &x.to_c(), &y.to_c(), &values.to_c(), &native)? };
    Ok(())
}

/// `alpha * (X * Y)` at the stored blocks of `pattern`, as a new host vector of
/// [`nnz`](BsrMatrix::nnz) values in the pattern's block order (what
/// [`BsrMatrix::with_values`] takes). The context must be a CPU context (on a GPU, allocate the
/// values yourself and use [`sddmm_into`]). A result that cannot be allocated is
/// `BSRMM_STATUS_OUT_OF_MEMORY`.
pub fn sddmm<T: Element>(
    ctx: &Context,
    pattern: &BsrMatrix<T>,
    x: DenseRef<'_, T>,
    y: DenseRef<'_, T>,
    options: &SddmmOptions,
) -> Result<Vec<T>> {
    let (bh, bw) = pattern.block_shape();
    let mut values = try_filled(pattern.nnz(), T::default(), "the SDDMM values")
        .map_err(|e| Error::new(e.status(), format!("{} ({} blocks of {bh}x{bw})", e.message(), pattern.nnzb())))?;
    let view = DenseMut::packed(&mut values, pattern.nnzb(), bh * bw, Layout::RowMajor)?;
    sddmm_into(ctx, pattern, x, y, view, &options.beta(0.0))?;
    Ok(values)
}

impl<T: Element> BsrMatrix<T> {
    /// A matrix with this one's structure whose values are `alpha * (X * Y)` at its blocks
    /// ([`sddmm`], then [`with_values`](Self::with_values)): e.g. the weight gradient of a
    /// block-sparse layer as a matrix of the weight's shape. This matrix must be on the host.
    ///
    /// ```
    /// use bsrmm::{BsrMatrix, Context, DenseRef, Layout, SddmmOptions};
    /// let ctx = Context::cpu()?;
    /// let w = BsrMatrix::<f32>::from_bsr(&ctx, 2, 2, (1, 1), &[0i32, 1, 1], &[1], &[7.0], Default::default())?;
    /// let ones = [1.0f32; 6];
    /// let x = DenseRef::packed(&ones, 2, 3, Layout::RowMajor)?;
    /// let grad = w.with_sddmm_values(x, DenseRef::packed(&ones, 3, 2, Layout::RowMajor)?, &SddmmOptions::new())?;
    /// assert_eq!(grad.export::<i32>()?.values, vec![3.0]);
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn with_sddmm_values(&self, x: DenseRef<'_, T>, y: DenseRef<'_, T>, options: &SddmmOptions) -> Result<Self> {
        let values = sddmm(self.context(), self, x, y, options)?;
        self.with_values(&values)
    }
}
