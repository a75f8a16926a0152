//! The multiply, as an AsyncTask (Promise, libuv worker thread) and synchronously.
//!
//! Operands are copied out of their JS buffers when the call is made, on the main thread: JS
//! may change or drop its arrays while the worker runs, and the core must never see that.

use std::borrow::Cow;
use std::sync::Arc;

use bsrmm::{Activation, BsrMatrix, DType, DenseMut, DenseRef, Device, DeviceBuffer, Element, Layout, MatmulOptions, Op, ScaleKind};
use napi::bindgen_prelude::{AsyncTask, Float32Array, Uint8Array};
use napi::{Env, Task};
use napi_derive::napi;

use crate::device;
use crate::dtype::{self, HostArray, JsArray, JsElement};
use crate::error::{invalid, to_napi, IntoNapi};
use crate::matrix::{parse_layout, size, with_matrix, AnyMatrix, NativeBsrMatrix};

/// Options as the TypeScript layer passes them (already checked there).
#[napi(object)]
pub struct NativeMatmulOptions {
    /// Multiply by A transposed.
    pub transpose: bool,
    pub alpha: f64,
    pub beta: f64,
    /// "row-major" or "col-major": B's layout.
    pub b_layout: String,
    /// "row-major" or "col-major": the result's layout (and `c`'s).
    pub out_layout: String,
    /// The existing C (raw bytes, `out_layout`), read when beta != 0.
    pub c: Option<Uint8Array>,
    /// Per-row bias of C (raw bytes).
    pub bias: Option<Uint8Array>,
    /// "none", "relu", "gelu" or "silu".
    pub activation: String,
    /// An fp8 A's B: "float8_e4m3" or "float8_e5m2" (default: A's dtype).
    pub b_dtype: Option<String>,
    /// An fp8 B's scales ("per-tensor": one, "per-column": B.cols) and their kind.
    pub b_scales: Option<Float32Array>,
    pub b_scale_kind: Option<String>,
    /// An fp8 multiply's C (and bias) dtype: "f32" (default), "f16" or "bf16".
    pub out_dtype: Option<String>,
}

/// One multiply. The async form's operands are copies in Rust memory (`'static`); the sync
/// form's borrow the JS buffers for the call, whose thread is blocked meanwhile: a copy of B
/// cost more than the multiply's own memory traffic at large N (perf-log 98).
pub struct MatmulTask<'a> {
    a: Arc<AnyMatrix>,
    pub(super) b: Cow<'a, [u8]>,
    pub(super) b_rows: usize,
    pub(super) b_cols: usize,
    pub(super) b_layout: Layout,
    pub(super) out_layout: Layout,
    c: Option<Cow<'a, [u8]>>,
    pub(super) bias: Option<Cow<'a, [u8]>>,
    pub(super) op: Op,
    alpha: f64,
    beta: f64,
    activation: Activation,
    pub(super) fp8: Fp8Operands,
}

/// What only an fp8 multiply reads: B's dtype and scales, C's dtype.
pub(super) struct Fp8Operands {
    pub b_dtype: Option<DType>,
    pub b_scales: Option<(ScaleKind, Vec<f32>)>,
    pub out_dtype: Option<DType>,
}

impl Fp8Operands {
    fn parse(options: &NativeMatmulOptions) -> napi::Result<Self> {
        let b_dtype = options.b_dtype.as_deref().map(|d| dtype::parse_fp8("bDtype", d)).transpose()?;
        let b_scales = match (&options.b_scales, &options.b_scale_kind) {
            (Some(values), kind) => {
                let kind = crate::fp8::parse_scale_kind(kind.as_deref().unwrap_or("per-tensor"))?;
                Some((kind, values.to_vec()))
            }
            (None, _) => None,
        };
        let out_dtype = options.out_dtype.as_deref().map(dtype::parse).transpose()?;
        Ok(Fp8Operands { b_dtype, b_scales, out_dtype })
    }
}

pub(crate) fn parse_activation(name: &str) -> napi::Result<Activation> {
    match name {
        "none" => Ok(Activation::None),
        "relu" => Ok(Activation::Relu),
        "gelu" => Ok(Activation::Gelu),
        "silu" => Ok(Activation::Silu),
        other => Err(invalid(format!("activation {other:?}: expected \"none\", \"relu\", \"gelu\" or \"silu\""))),
    }
}

impl<'a> MatmulTask<'a> {
    /// The multiply of `b` (and `options`' C and bias, given apart as `c` and `bias`): borrowing
    /// them, or (`copy`) with copies of them, for a task that outlives the call.
    #[allow(clippy::too_many_arguments)]
    fn new(
        a: &NativeBsrMatrix,
        b: &'a [u8],
        c: Option<&'a [u8]>,
        bias: Option<&'a [u8]>,
        b_rows: i64,
        b_cols: i64,
        options: &NativeMatmulOptions,
        copy: bool,
    ) -> napi::Result<Self> {
        let hold = |what: &str, bytes: &'a [u8]| -> napi::Result<Cow<'a, [u8]>> {
            Ok(if copy { Cow::Owned(dtype::copy_bytes(what, bytes)?) } else { Cow::Borrowed(bytes) })
        };
        let fp8 = Fp8Operands::parse(options)?;
        Ok(MatmulTask {
            a: a.matrix()?,
            b: hold("B", b)?,
            b_rows: size("b rows", b_rows)?,
            b_cols: size("b cols", b_cols)?,
            b_layout: parse_layout(&options.b_layout)?,
            out_layout: parse_layout(&options.out_layout)?,
            c: c.map(|c| hold("c", c)).transpose()?,
            bias: bias.map(|bias| hold("bias", bias)).transpose()?,
            op: if options.transpose { Op::Transpose } else { Op::None },
            alpha: options.alpha,
            beta: options.beta,
            activation: parse_activation(&options.activation)?,
            fp8,
        })
    }

    /// The task with every operand owned (a copied task's are already: nothing is copied).
    fn into_owned(self) -> MatmulTask<'static> {
        let own = |bytes: Cow<'a, [u8]>| -> Cow<'static, [u8]> { Cow::Owned(bytes.into_owned()) };
        MatmulTask {
            a: self.a,
            b: own(self.b),
            b_rows: self.b_rows,
            b_cols: self.b_cols,
            b_layout: self.b_layout,
            out_layout: self.out_layout,
            c: self.c.map(own),
            bias: self.bias.map(own),
            op: self.op,
            alpha: self.alpha,
            beta: self.beta,
            activation: self.activation,
            fp8: self.fp8,
        }
    }

    fn run(&self) -> napi::Result<HostArray> {
        match &*self.a {
            AnyMatrix::F8E4M3(a) => self.run_fp8(a),
            AnyMatrix::F8E5M2(a) => self.run_fp8(a),
            other => with_matrix!(other, |a| self.run_typed(a)),
        }
    }

    /// The existing C (beta != 0), or a NaN-filled one: with beta = 0 the core writes every
    /// element, and NaN makes a missed one visible instead of a plausible zero. A result too
    /// large to allocate is OUT_OF_MEMORY.
    pub(super) fn initial_c<T: Element>(&self, m: usize) -> napi::Result<Vec<T>> {
        let what = format!("the result C ({m}x{})", self.b_cols);
        match &self.c {
            Some(c) if self.beta != 0.0 => dtype::to_vec::<T>("c", c),
            _ => {
                let len = m.checked_mul(self.b_cols).ok_or_else(|| {
                    to_napi(bsrmm::Error::new(bsrmm::Status::OutOfMemory, format!("{what}: more elements than usize holds")))
                })?;
                bsrmm::try_filled(len, T::from_f64(f64::NAN), &what).napi()
            }
        }
    }

    /// The epilogue and op, as every multiply takes them.
    pub(super) fn options<'o, T: Element>(&self) -> MatmulOptions<'o, T> {
        MatmulOptions::new().op(self.op).alpha(self.alpha).beta(self.beta).activation(self.activation)
    }

    fn run_typed<T: JsElement>(&self, a: &BsrMatrix<T>) -> napi::Result<HostArray> {
        let b = dtype::elements::<T>("b", &self.b)?;
        let bias = self.bias.as_deref().map(|bias| dtype::elements::<T>("bias", bias)).transpose()?;
        let m = if self.op == Op::Transpose { a.cols() } else { a.rows() };
        let mut c = self.initial_c::<T>(m)?;
        let options = self.options::<T>();
        let (k, n) = (self.b_rows, self.b_cols);
        let device = a.device();
        let ctx = device::context(device)?;
        if device == Device::Cpu {
            let options = match &bias {
                Some(bias) => options.bias(DenseRef::vector(bias)),
                None => options,
            };
            let b_view = DenseRef::packed(&b, k, n, self.b_layout).napi()?;
            let c_view = DenseMut::packed(&mut c, m, n, self.out_layout).napi()?;
            bsrmm::matmul_into(&ctx, a, b_view, c_view, &options).napi()?;
        } else {
            // A GPU matrix: the host operands go through device buffers and back.
            let d_b = DeviceBuffer::from_host(device, &b).napi()?;
            let mut d_c = DeviceBuffer::from_host(device, &c).napi()?;
            let d_bias = bias.as_deref().map(|bias| DeviceBuffer::from_host(device, bias)).transpose().napi()?;
            let options = match &d_bias {
                Some(d_bias) => options.bias(d_bias.view(m, 1, 1, Layout::RowMajor).napi()?),
                None => options,
            };
            let b_view = d_b.view(k, n, self.b_layout.min_ld(k, n).max(1), self.b_layout).napi()?;
            let c_view = d_c.view_mut(m, n, self.out_layout.min_ld(m, n).max(1), self.out_layout).napi()?;
            bsrmm::matmul_into(&ctx, a, b_view, c_view, &options).napi()?;
            ctx.synchronize().napi()?;
            d_c.copy_to_host(&mut c).napi()?;
        }
        Ok(T::wrap(c))
    }
}

impl Task for MatmulTask<'static> {
    type Output = HostArray;
    type JsValue = JsArray;

    fn compute(&mut self) -> napi::Result<HostArray> {
        self.run()
    }

    fn resolve(&mut self, _env: Env, output: HostArray) -> napi::Result<JsArray> {
        Ok(output.into_js())
    }
}

/// `alpha * op(A) * B + beta * C` (+ bias, activation) on a worker thread; resolves to a new
/// array in `outLayout`.
#[napi(ts_return_type = "Promise<Float32Array | Float64Array | Uint16Array>")]
pub fn matmul(
    a: &NativeBsrMatrix,
    b: Uint8Array,
    b_rows: i64,
    b_cols: i64,
    options: NativeMatmulOptions,
) -> napi::Result<AsyncTask<MatmulTask<'static>>> {
    let task = MatmulTask::new(a, &b, options.c.as_deref(), options.bias.as_deref(), b_rows, b_cols, &options, true)?;
    Ok(AsyncTask::new(task.into_owned()))
}

/// The same multiply on the calling thread.
#[napi(ts_return_type = "Float32Array | Float64Array | Uint16Array")]
pub fn matmul_sync(
    a: &NativeBsrMatrix,
    b: Uint8Array,
    b_rows: i64,
    b_cols: i64,
    options: NativeMatmulOptions,
) -> napi::Result<JsArray> {
    let task = MatmulTask::new(a, &b, options.c.as_deref(), options.bias.as_deref(), b_rows, b_cols, &options, false)?;
    Ok(task.run()?.into_js())
}
