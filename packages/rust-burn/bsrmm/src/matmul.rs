//! The multiply: `C = alpha * op(A) * B + beta * C`, then a per-row bias and an activation.

use crate::context::Context;
use crate::dense::{Dense, DenseMut, DenseRef, Layout};
use crate::element::Element;
use crate::error::{Error, Result};
use crate::element::Fp8Element;
use crate::matrix::BsrMatrix;
use crate::scales::Scales;

/// `op(A)`: A as stored, or transposed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Op {
    /// A.
    #[default]
    None,
    /// A transposed.
    Transpose,
}

/// The activation applied last, elementwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Activation {
    /// None.
    #[default]
    None,
    /// max(x, 0).
    Relu,
    /// GELU, tanh approximation.
    Gelu,
    /// x * sigmoid(x).
    Silu,
}

/// Everything about one multiply besides the operands. The default is `C = A * B`.
///
/// ```
/// use bsrmm::{Activation, MatmulOptions, Op};
/// let opts = MatmulOptions::<f32>::new().op(Op::Transpose).alpha(2.0).activation(Activation::Relu);
/// assert_eq!(opts.alpha_value(), 2.0);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct MatmulOptions<'a, T: Element> {
    op: Op,
    alpha: f64,
    beta: f64,
    bias: Option<DenseRef<'a, T>>,
    activation: Activation,
    b_scales: Option<Scales<'a>>,
}

impl<T: Element> Default for MatmulOptions<'_, T> {
    fn default() -> Self {
        MatmulOptions { op: Op::None, alpha: 1.0, beta: 0.0, bias: None, activation: Activation::None, b_scales: None }
    }
}

impl<'a, T: Element> MatmulOptions<'a, T> {
    /// `C = A * B`.
    pub fn new() -> Self {
        Self::default()
    }
    /// Use `op(A)`.
    pub fn op(mut self, op: Op) -> Self {
        self.op = op;
        self
    }
    /// Use A transposed.
    pub fn transpose(self) -> Self {
        self.op(Op::Transpose)
    }
    /// Scale of the product.
    pub fn alpha(mut self, alpha: f64) -> Self {
        self.alpha = alpha;
        self
    }
    /// Scale of the existing C (0: C is only written, NaN in it does not propagate).
    pub fn beta(mut self, beta: f64) -> Self {
        self.beta = beta;
        self
    }
    /// A per-row bias of C (`C.rows x 1`, C's dtype and device), added before the activation.
    pub fn bias(mut self, bias: DenseRef<'a, T>) -> Self {
        self.bias = Some(bias);
        self
    }
    /// The activation applied last.
    pub fn activation(mut self, activation: Activation) -> Self {
        self.activation = activation;
        self
    }
    /// B's scales, required when B is fp8 ([`matmul_fp8_into`]): per tensor or per column
    /// (on a CUDA context per-column scales must be on B's device: [`Scales::from_raw_parts`]).
    pub fn b_scales(mut self, scales: Scales<'a>) -> Self {
        self.b_scales = Some(scales);
        self
    }
    /// The alpha set.
    pub fn alpha_value(&self) -> f64 {
        self.alpha
    }
    /// The op set.
    pub fn op_value(&self) -> Op {
        self.op
    }
}

/// `C = alpha * op(A) * B + beta * C` (+ bias, activation) into an existing `c`.
///
/// A, B and C must be on `ctx`'s device. On a CUDA context the work is only enqueued on the
/// context's stream (call [`Context::synchronize`] before reading C on the host).
///
/// ```
/// use bsrmm::{matmul_into, BsrMatrix, Context, Dense, Layout, MatmulOptions};
/// let ctx = Context::cpu()?;
/// let a = BsrMatrix::<f64>::from_bsr(&ctx, 2, 2, (1, 1), &[0i32, 1, 2], &[0, 1], &[2.0, 3.0], Default::default())?;
/// let b = Dense::from_vec(vec![1.0, 1.0, 1.0, 1.0], 2, 2, Layout::RowMajor)?;
/// let mut c = Dense::from_vec(vec![10.0; 4], 2, 2, Layout::RowMajor)?;
/// matmul_into(&ctx, &a, b.view(), c.view_mut(), &MatmulOptions::new().beta(1.0))?;
/// assert_eq!(c.data(), &[12.0, 12.0, 13.0, 13.0]);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub fn matmul_into<T: Element>(
    ctx: &Context,
    a: &BsrMatrix<T>,
    b: DenseRef<'_, T>,
    c: DenseMut<'_, T>,
    options: &MatmulOptions<'_, T>,
) -> Result<()> {
    multiply(ctx, a, b, c, options)
}

/// The fp8 multiply: `C = alpha * A * B + beta * C` (+ bias, activation) with A and B in fp8
/// (`float8::F8E4M3` / `F8E5M2`, any pairing), each element standing for its value times its
/// scale (A's are the matrix's, [`BsrMatrix::from_bsr_scaled`]; B's are
/// [`MatmulOptions::b_scales`], required), accumulated in f32 or better, into C of `f32`,
/// `f16` or `bf16` (the bias in C's dtype). op(A) = A only. On the CPU the reference computes
/// it exactly in f64 over the dequantised operands; on CUDA the generic kernel converts to f32.
///
/// ```
/// use bsrmm::{matmul_fp8_into, BsrMatrix, Context, Dense, DenseRef, Layout, MatmulOptions, Scales, F8E4M3, F8E5M2};
/// let ctx = Context::cpu()?;
/// let a = BsrMatrix::from_bsr_scaled(&ctx, 1, 2, (1, 2), &[0i32, 1], &[0], &[F8E4M3::from_f64(1.0), F8E4M3::from_f64(3.0)],
///                                     Scales::per_tensor(0.5), Default::default())?;
/// let b = [F8E5M2::from_f64(2.0), F8E5M2::from_f64(4.0)];
/// let mut c = Dense::<f32>::zeros(1, 1, Layout::RowMajor);
/// matmul_fp8_into(&ctx, &a, DenseRef::packed(&b, 2, 1, Layout::RowMajor)?, c.view_mut(),
///                 &MatmulOptions::new().b_scales(Scales::per_tensor(0.25)))?;
/// assert_eq!(c.get(0, 0), (0.5 * 2.0 + 1.5 * 4.0) * 0.25);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub fn matmul_fp8_into<A: Fp8Element, B: Fp8Element, C: Element>(
    ctx: &Context,
    a: &BsrMatrix<A>,
    b: DenseRef<'_, B>,
    c: DenseMut<'_, C>,
    options: &MatmulOptions<'_, C>,
) -> Result<()> {
    multiply(ctx, a, b, c, options)
}

/// [`matmul_fp8_into`] into a new host matrix of `C` in `layout` (CPU contexts).
pub fn matmul_fp8<A: Fp8Element, B: Fp8Element, C: Element>(
    ctx: &Context,
    a: &BsrMatrix<A>,
    b: DenseRef<'_, B>,
    layout: Layout,
    options: &MatmulOptions<'_, C>,
) -> Result<Dense<C>> {
    let mut c = Dense::try_zeros(a.rows(), b.cols(), layout)
        .map_err(|e| Error::new(e.status(), format!("the result C ({}x{}): {}", a.rows(), b.cols(), e.message())))?;
    matmul_fp8_into(ctx, a, b, c.view_mut(), &options.beta(0.0))?;
    Ok(c)
}

/// The one call into the core; the core checks that the three dtypes go together.
fn multiply<A: Element, B: Element, C: Element>(
    ctx: &Context,
    a: &BsrMatrix<A>,
    b: DenseRef<'_, B>,
    c: DenseMut<'_, C>,
    options: &MatmulOptions<'_, C>,
) -> Result<()> {
    let bias = match &options.bias {
        None => 0,
        Some(bias) => {
            // The core reads C.rows bias values from one contiguous array.
            if bias.cols() != 1 || bias.rows() != c.rows() || (bias.layout() == Layout::ColMajor && bias.rows() > 1 && bias.ld() != bias.rows()) {
                return Err(Error::invalid_argument(format!(
                    "bias must be a contiguous vector of C.rows = {} values, got a {}x{} view",
                    c.rows(),
                    bias.rows(),
                    bias.cols()
                )));
            }
            if bias.device() != c.device() {
                return Err(Error::invalid_argument(format!("bias is on {} but C is on {}", bias.device(), c.device())));
            }
            bias.as_ptr() as usize
        }
    };
    // Scales from the options themselves, not a copy: a per-tensor scale's address is inside them.
    let b_scales = options.b_scales.as_ref().map(Scales::as_c).transpose()?;
    let native = bsrmm_sys::ffi::MatmulOptions {
        op_a: options.op as i32,
        alpha: options.alpha,
        beta: options.beta,
        bias,
        activation: options.activation as i32,
        has_b_scales: b_scales.is_some(),
        b_scales: b_scales.unwrap_or(Scales::none()),
    };
    let mut guard = ctx.lock();
    // SAFETY: B and the bias are readable and C writable for their whole spans (checked for
    // host slices, promised by from_raw_parts for device memory), borrowed for this call; the
    // core rejects shapes and devices that disagree.
    unsafe { bsrmm_sys::ffi::matmul(guard.pin_mut(), a.native(), &b.to_c(), &c.to_c(), &native)? };
    Ok(())
}

/// `alpha * op(A) * B` (+ bias, activation) as a new host matrix in `layout`. The context must
/// be a CPU context (on a GPU, allocate C yourself and use [`matmul_into`]). A result that
/// cannot be allocated is `BSRMM_STATUS_OUT_OF_MEMORY`.
///
/// ```
/// use bsrmm::{matmul, BsrMatrix, Context, Dense, Layout, MatmulOptions};
/// let ctx = Context::cpu()?;
/// let a = BsrMatrix::<f32>::from_bsr(&ctx, 2, 4, (2, 2), &[0i32, 1], &[1], &[1., 2., 3., 4.], Default::default())?;
/// let b = Dense::from_fn(4, 3, Layout::RowMajor, |i, _| i as f32);
/// let c = matmul(&ctx, &a, b.view(), Layout::RowMajor, &MatmulOptions::new())?;
/// assert_eq!(c.get(0, 0), 1. * 2. + 2. * 3.);
/// assert_eq!(c.get(1, 2), 3. * 2. + 4. * 3.);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub fn matmul<T: Element>(
    ctx: &Context,
    a: &BsrMatrix<T>,
    b: DenseRef<'_, T>,
    layout: Layout,
    options: &MatmulOptions<'_, T>,
) -> Result<Dense<T>> {
    let rows = match options.op {
        Op::None => a.rows(),
        Op::Transpose => a.cols(),
    };
    // A result too large to allocate is an error the caller sees, not an abort.
    let mut c = Dense::try_zeros(rows, b.cols(), layout)
        .map_err(|e| Error::new(e.status(), format!("the result C ({rows}x{}): {}", b.cols(), e.message())))?;
    matmul_into(ctx, a, b, c.view_mut(), &options.beta(0.0))?;
    Ok(c)
}
