//! `NativeBsrMatrix`: an owned bsrmm matrix of any dtype, on any device, held by a JS object.

use std::sync::{Arc, Mutex};

use bsrmm::{bf16, f16, BsrMatrix, CreateOptions, DenseRef, Device, F8E4M3, F8E5M2, Layout};
use napi::bindgen_prelude::{Float32Array, Int32Array, Uint8Array};
use napi_derive::napi;

use crate::device;
use crate::dtype::{self, with_dtype, JsArray, JsElement};
use crate::error::{invalid, IntoNapi};

/// One matrix whatever its element type; `with_matrix!` runs generic code on it.
pub enum AnyMatrix {
    F32(BsrMatrix<f32>),
    F64(BsrMatrix<f64>),
    F16(BsrMatrix<f16>),
    BF16(BsrMatrix<bf16>),
    F8E4M3(BsrMatrix<F8E4M3>),
    F8E5M2(BsrMatrix<F8E5M2>),
}

/// Runs `$body` on a matrix of a compute dtype; an fp8 matrix returns an error from the
/// enclosing function (its multiplies take host arrays: `tasks/fp8.rs`; tensors and the SDDMM
/// do not take fp8).
macro_rules! with_matrix {
    ($any:expr, |$m:ident| $body:expr) => {
        match $any {
            $crate::matrix::AnyMatrix::F32($m) => $body,
            $crate::matrix::AnyMatrix::F64($m) => $body,
            $crate::matrix::AnyMatrix::F16($m) => $body,
            $crate::matrix::AnyMatrix::BF16($m) => $body,
            $crate::matrix::AnyMatrix::F8E4M3(_) | $crate::matrix::AnyMatrix::F8E5M2(_) => {
                return Err($crate::error::unsupported(
                    "A is fp8: an fp8 multiply takes B as a Uint8Array (matmul / matmulSync), not tensors; the SDDMM does not take fp8",
                ))
            }
        }
    };
}
pub(crate) use with_matrix;

/// Runs `$body` on a matrix of any dtype, fp8 included.
macro_rules! with_any_matrix {
    ($any:expr, |$m:ident| $body:expr) => {
        match $any {
            $crate::matrix::AnyMatrix::F32($m) => $body,
            $crate::matrix::AnyMatrix::F64($m) => $body,
            $crate::matrix::AnyMatrix::F16($m) => $body,
            $crate::matrix::AnyMatrix::BF16($m) => $body,
            $crate::matrix::AnyMatrix::F8E4M3($m) => $body,
            $crate::matrix::AnyMatrix::F8E5M2($m) => $body,
        }
    };
}

trait IntoAny: bsrmm::Element {
    fn into_any(m: BsrMatrix<Self>) -> AnyMatrix;
}
impl IntoAny for f32 {
    fn into_any(m: BsrMatrix<f32>) -> AnyMatrix {
        AnyMatrix::F32(m)
    }
}
impl IntoAny for f64 {
    fn into_any(m: BsrMatrix<f64>) -> AnyMatrix {
        AnyMatrix::F64(m)
    }
}
impl IntoAny for f16 {
    fn into_any(m: BsrMatrix<f16>) -> AnyMatrix {
        AnyMatrix::F16(m)
    }
}
impl IntoAny for bf16 {
    fn into_any(m: BsrMatrix<bf16>) -> AnyMatrix {
        AnyMatrix::BF16(m)
    }
}
impl IntoAny for F8E4M3 {
    fn into_any(m: BsrMatrix<F8E4M3>) -> AnyMatrix {
        AnyMatrix::F8E4M3(m)
    }
}
impl IntoAny for F8E5M2 {
    fn into_any(m: BsrMatrix<F8E5M2>) -> AnyMatrix {
        AnyMatrix::F8E5M2(m)
    }
}

pub fn parse_layout(name: &str) -> napi::Result<Layout> {
    match name {
        "row-major" => Ok(Layout::RowMajor),
        "col-major" => Ok(Layout::ColMajor),
        other => Err(invalid(format!("layout {other:?}: expected \"row-major\" or \"col-major\""))),
    }
}

pub fn size(what: &str, value: i64) -> napi::Result<usize> {
    usize::try_from(value).map_err(|_| invalid(format!("{what} = {value} must be a non-negative integer")))
}

/// Matrices are built on the host, then copied to the device they are meant for.
fn place<T: bsrmm::Element>(m: BsrMatrix<T>, device: Device) -> napi::Result<BsrMatrix<T>> {
    if device == Device::Cpu {
        return Ok(m);
    }
    m.copy_to(&device::context(device)?).napi()
}

/// The block structure of a matrix and its values, copied out to JS.
#[napi(object)]
pub struct NativeBsrParts {
    pub row_ptr: Int32Array,
    pub col_idx: Int32Array,
    #[napi(ts_type = "Float32Array | Float64Array | Uint16Array | Uint8Array")]
    pub values: JsArray,
}

/// An fp8 matrix's scales: "per-tensor", "per-block" or "per-block-row", and their values.
#[napi(object)]
pub struct NativeScales {
    pub kind: String,
    pub values: Float32Array,
}

/// What never changes about a matrix, readable after `dispose()`.
struct Info {
    rows: usize,
    cols: usize,
    block_shape: (usize, usize),
    nnzb: usize,
    dtype: &'static str,
    device: Device,
}

/// A validated BSR matrix owned by the core (see the `BsrMatrix` TypeScript class).
#[napi]
pub struct NativeBsrMatrix {
    info: Info,
    /// `None` once disposed. Multiplies in flight hold their own `Arc`: disposing frees the
    /// matrix when the last of them settles.
    matrix: Mutex<Option<Arc<AnyMatrix>>>,
}

impl NativeBsrMatrix {
    fn new(matrix: AnyMatrix) -> Self {
        let info = with_any_matrix!(&matrix, |m| Info {
            rows: m.rows(),
            cols: m.cols(),
            block_shape: m.block_shape(),
            nnzb: m.nnzb(),
            dtype: dtype::js_name(m.dtype()),
            device: m.device(),
        });
        NativeBsrMatrix { info, matrix: Mutex::new(Some(Arc::new(matrix))) }
    }

    /// The matrix, unless disposed.
    pub(crate) fn matrix(&self) -> napi::Result<Arc<AnyMatrix>> {
        let matrix = self.matrix.lock().unwrap_or_else(|p| p.into_inner());
        matrix.clone().ok_or_else(|| invalid("A: the matrix was disposed (dispose() freed its memory)"))
    }
}

#[napi]
impl NativeBsrMatrix {
    /// From CSR-of-blocks arrays; `values` are the raw bytes of the dtype's elements.
    #[napi(factory)]
    #[allow(clippy::too_many_arguments)]
    pub fn from_bsr(
        rows: i64,
        cols: i64,
        block_height: i64,
        block_width: i64,
        row_ptr: Int32Array,
        col_idx: Int32Array,
        values: Uint8Array,
        dtype: String,
        device: String,
        sort_indices: bool,
    ) -> napi::Result<Self> {
        let (rows, cols) = (size("rows", rows)?, size("cols", cols)?);
        let block = (size("blockHeight", block_height)?, size("blockWidth", block_width)?);
        let device = device::parse(&device)?;
        let host = device::context(Device::Cpu)?;
        let options = CreateOptions { sort_indices };
        let inner = with_dtype!(dtype::parse(&dtype)?, |T| {
            let values = dtype::to_vec::<T>("values", &values)?;
            let m = BsrMatrix::from_bsr(&host, rows, cols, block, &row_ptr, &col_idx, &values, options).napi()?;
            T::into_any(place(m, device)?)
        });
        Ok(NativeBsrMatrix::new(inner))
    }

    /// An fp8 matrix from CSR-of-blocks arrays: `values` are fp8 bytes of `dtype`
    /// ("float8_e4m3" / "float8_e5m2"), `scales` fp32 of `scale_kind` (fp8.rs).
    #[napi(factory)]
    #[allow(clippy::too_many_arguments)]
    pub fn from_bsr_scaled(
        rows: i64,
        cols: i64,
        block_height: i64,
        block_width: i64,
        row_ptr: Int32Array,
        col_idx: Int32Array,
        values: Uint8Array,
        dtype: String,
        scale_kind: String,
        scales: Float32Array,
        device: String,
        sort_indices: bool,
    ) -> napi::Result<Self> {
        let (rows, cols) = (size("rows", rows)?, size("cols", cols)?);
        let block = (size("blockHeight", block_height)?, size("blockWidth", block_width)?);
        let device = device::parse(&device)?;
        let host = device::context(Device::Cpu)?;
        let options = CreateOptions { sort_indices };
        let scales = bsrmm::Scales::new(crate::fp8::parse_scale_kind(&scale_kind)?, &scales);
        let inner = match dtype::parse_fp8("dtype", &dtype)? {
            bsrmm::DType::F8E4M3 => {
                let values = dtype::to_vec::<F8E4M3>("values", &values)?;
                let m = BsrMatrix::from_bsr_scaled(&host, rows, cols, block, &row_ptr, &col_idx, &values, scales, options).napi()?;
                AnyMatrix::F8E4M3(place(m, device)?)
            }
            _ => {
                let values = dtype::to_vec::<F8E5M2>("values", &values)?;
                let m = BsrMatrix::from_bsr_scaled(&host, rows, cols, block, &row_ptr, &col_idx, &values, scales, options).napi()?;
                AnyMatrix::F8E5M2(place(m, device)?)
            }
        };
        Ok(NativeBsrMatrix::new(inner))
    }

    /// An fp8 matrix's scales (another dtype's matrix has none: INVALID_ARGUMENT).
    #[napi]
    pub fn scales(&self) -> napi::Result<NativeScales> {
        let (kind, values) = with_any_matrix!(&*self.matrix()?, |m| m.scales().napi()?);
        Ok(NativeScales { kind: crate::fp8::scale_kind_name(kind).to_owned(), values: Float32Array::new(values) })
    }

    /// Keeps every block of a dense host matrix that holds a non-zero.
    #[napi(factory)]
    #[allow(clippy::too_many_arguments)]
    pub fn from_dense(
        data: Uint8Array,
        rows: i64,
        cols: i64,
        layout: String,
        dtype: String,
        block_height: i64,
        block_width: i64,
        device: String,
    ) -> napi::Result<Self> {
        let (rows, cols) = (size("rows", rows)?, size("cols", cols)?);
        let block = (size("blockHeight", block_height)?, size("blockWidth", block_width)?);
        let layout = parse_layout(&layout)?;
        let device = device::parse(&device)?;
        let host = device::context(Device::Cpu)?;
        let inner = with_dtype!(dtype::parse(&dtype)?, |T| {
            let data = dtype::to_vec::<T>("data", &data)?;
            let view = DenseRef::packed(&data, rows, cols, layout).napi()?;
            T::into_any(place(BsrMatrix::from_dense(&host, view, block).napi()?, device)?)
        });
        Ok(NativeBsrMatrix::new(inner))
    }

    #[napi(getter)]
    pub fn rows(&self) -> f64 {
        self.info.rows as f64
    }

    #[napi(getter)]
    pub fn cols(&self) -> f64 {
        self.info.cols as f64
    }

    #[napi(getter)]
    pub fn block_height(&self) -> f64 {
        self.info.block_shape.0 as f64
    }

    #[napi(getter)]
    pub fn block_width(&self) -> f64 {
        self.info.block_shape.1 as f64
    }

    /// Stored blocks.
    #[napi(getter)]
    pub fn nnzb(&self) -> f64 {
        self.info.nnzb as f64
    }

    #[napi(getter)]
    pub fn dtype(&self) -> String {
        self.info.dtype.to_owned()
    }

    #[napi(getter)]
    pub fn device(&self) -> String {
        self.info.device.to_string()
    }

    /// Frees the matrix (device memory included) once no multiply in flight uses it, instead
    /// of when JS collects it. Disposing twice is a no-op.
    #[napi]
    pub fn dispose(&self) {
        self.matrix.lock().unwrap_or_else(|p| p.into_inner()).take();
    }

    /// Whether `dispose()` has been called.
    #[napi(getter)]
    pub fn disposed(&self) -> bool {
        self.matrix.lock().unwrap_or_else(|p| p.into_inner()).is_none()
    }

    /// The matrix as a dense host array in `layout` order.
    #[napi(ts_return_type = "Float32Array | Float64Array | Uint16Array | Uint8Array")]
    pub fn to_dense(&self, layout: String) -> napi::Result<JsArray> {
        let layout = parse_layout(&layout)?;
        Ok(with_any_matrix!(&*self.matrix()?, |m| JsElement::wrap(m.to_dense(layout).napi()?.into_vec())).into_js())
    }

    /// The three BSR arrays, copied to the host.
    #[napi]
    pub fn export(&self) -> napi::Result<NativeBsrParts> {
        with_any_matrix!(&*self.matrix()?, |m| {
            let parts = m.export::<i32>().napi()?;
            Ok(NativeBsrParts {
                row_ptr: Int32Array::new(parts.row_ptr),
                col_idx: Int32Array::new(parts.col_idx),
                values: JsElement::wrap(parts.values).into_js(),
            })
        })
    }
}
