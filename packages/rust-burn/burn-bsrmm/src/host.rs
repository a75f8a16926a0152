//! The ops on host memory: Flex's (Burn's CPU backend) read in place, any other backend's
//! (Cube's fallback, feature `cuda`) read through `float_into_data`; then bsrmm's CPU multiply or
//! SDDMM on the pattern's kept core matrix, and the result handed back to the backend.

use std::borrow::Cow;
use std::sync::OnceLock;

use bsrmm::{bf16, f16, BsrMatrix, Context, CreateOptions, DenseRef, Device, Element, Layout, MatmulOptions, Op, SddmmOptions};
use burn::backend::flex::FlexTensor;
use burn::tensor::{DType, TensorData};
// The generic path below, which only Cube's fallback takes.
#[cfg(feature = "cuda")]
use burn::backend::{tensor::FloatTensor, Backend, TensorMetadata};
#[cfg(feature = "cuda")]
use burn::tensor::try_read_sync;

use crate::pattern::BsrPattern;

/// The process-wide CPU context (the core's CPU backend is multithreaded on its own).
pub(crate) fn cpu_context() -> bsrmm::Result<Context> {
    static CPU: OnceLock<bsrmm::Result<Context>> = OnceLock::new();
    CPU.get_or_init(Context::cpu).clone()
}

/// Reads a tensor to the host (Cube's fallback; Flex's tensors are read in place). Backends of
/// this kind read synchronously; a failed read is a backend fault, reported the way Burn
/// reports it (a panic naming the cause).
#[cfg(feature = "cuda")]
pub(crate) fn read<B: Backend>(tensor: FloatTensor<B>) -> TensorData {
    try_read_sync(B::float_into_data(tensor))
        .expect("burn-bsrmm: this backend cannot read tensors synchronously")
        .unwrap_or_else(|e| panic!("burn-bsrmm: reading a tensor failed: {e:?}"))
}

/// `op(A) * dense` (+ a per-row `bias`, in the multiply's epilogue) where A is `pattern` with
/// `values`, for any backend whose tensors can be read on the host (Flex has its own, below,
/// that reads them in place; Cube's falls back to this). Shapes were checked by the public entry
/// point.
#[cfg(feature = "cuda")]
pub(crate) fn bsr_matmul<B: Backend>(
    values: FloatTensor<B>,
    dense: FloatTensor<B>,
    bias: Option<FloatTensor<B>>,
    pattern: &BsrPattern,
    transpose: bool,
) -> FloatTensor<B> {
    let device = values.device();
    let values = read::<B>(values);
    let dense = read::<B>(dense);
    let bias = bias.map(read::<B>);
    let out = match values.dtype() {
        DType::F32 => read_and_multiply::<f32>(&values, &dense, bias.as_ref(), pattern, transpose),
        DType::F64 => read_and_multiply::<f64>(&values, &dense, bias.as_ref(), pattern, transpose),
        DType::F16 => read_and_multiply::<f16>(&values, &dense, bias.as_ref(), pattern, transpose),
        DType::BF16 => read_and_multiply::<bf16>(&values, &dense, bias.as_ref(), pattern, transpose),
        other => panic!("burn-bsrmm: values of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    B::float_from_data(out, &device)
}

/// [`bsr_matmul`] on Flex, whose tensors are host memory: the operands are read where they lie
/// (a contiguous tensor as a slice of its storage; only a strided view is copied), where
/// `float_into_data` copied every tensor still shared, as a layer's weights always are: 16.8 MB of
/// f32 values cost ~2 ms a call on a 2-core host, ten times an N = 1 multiply (perf-log 97).
pub(crate) fn flex_bsr_matmul(
    values: FlexTensor,
    dense: FlexTensor,
    bias: Option<FlexTensor>,
    pattern: &BsrPattern,
    transpose: bool,
) -> FlexTensor {
    let bias = bias.as_ref();
    let out = match values.dtype() {
        DType::F32 => flex_multiply::<f32>(&values, &dense, bias, pattern, transpose),
        DType::F64 => flex_multiply::<f64>(&values, &dense, bias, pattern, transpose),
        DType::F16 => flex_multiply::<f16>(&values, &dense, bias, pattern, transpose),
        DType::BF16 => flex_multiply::<bf16>(&values, &dense, bias, pattern, transpose),
        other => panic!("burn-bsrmm: values of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    FlexTensor::from_data(out)
}

/// A Flex tensor's elements as `T`, in place when it is contiguous (row-major), else copied so.
fn flex_elements<'a, T: burn::tensor::Element + bytemuck::Pod>(tensor: &'a FlexTensor, what: &str) -> Cow<'a, [T]> {
    if tensor.dtype() != T::dtype() {
        panic!("burn-bsrmm: {what} is {:?}, the multiply's dtype is {:?}", tensor.dtype(), T::dtype());
    }
    match tensor.as_slice::<T>() {
        Some(slice) => Cow::Borrowed(slice),
        None => Cow::Owned(tensor.to_contiguous().as_slice::<T>().expect("a contiguous copy reads as a slice").to_vec()),
    }
}

/// A dense matrix as bsrmm reads it: elements, leading dimension, layout.
type Matrix<'a, T> = (Cow<'a, [T]>, usize, Layout);

/// A 2-D Flex tensor as a dense matrix, in place wherever one dimension has unit stride: a
/// contiguous tensor, a narrowed one, or a swapped-dims view of either, which is column-major,
/// as autodiff's `B^T` and `dC^T` are (bsrmm reads either layout). Any other view is copied to
/// a contiguous row-major matrix. Copying B^T to row-major cost the SDDMM two transposes of B
/// (the core packs Y back column-wise; perf-log 97).
fn flex_matrix<'a, T: burn::tensor::Element + bytemuck::Pod>(tensor: &'a FlexTensor, what: &str) -> Matrix<'a, T> {
    let shape = tensor.layout().shape();
    let (rows, cols) = (shape[0], shape[1]);
    let (strides, offset) = (tensor.layout().strides(), tensor.layout().start_offset());
    let in_storage = |ld: isize, layout: Layout| -> Option<Matrix<'a, T>> {
        let ld = usize::try_from(ld).ok()?;
        let (outer, inner) = if layout == Layout::RowMajor { (rows, cols) } else { (cols, rows) };
        let span = (outer - 1) * ld + inner;
        let storage = flex_storage::<T>(tensor, what);
        Some((Cow::Borrowed(storage.get(offset..offset + span)?), ld, layout))
    };
    if rows > 0 && cols > 0 {
        if strides[1] == 1 && strides[0] >= cols as isize {
            if let Some(matrix) = in_storage(strides[0], Layout::RowMajor) {
                return matrix;
            }
        }
        if strides[0] == 1 && strides[1] >= rows as isize {
            if let Some(matrix) = in_storage(strides[1], Layout::ColMajor) {
                return matrix;
            }
        }
    }
    (flex_elements::<T>(tensor, what), cols.max(1), Layout::RowMajor)
}

/// A Flex tensor's whole storage as `T`, whatever its layout (its dtype checked).
fn flex_storage<'a, T: burn::tensor::Element + bytemuck::Pod>(tensor: &'a FlexTensor, what: &str) -> &'a [T] {
    if tensor.dtype() != T::dtype() {
        panic!("burn-bsrmm: {what} is {:?}, the op's dtype is {:?}", tensor.dtype(), T::dtype());
    }
    tensor.storage::<T>()
}

fn flex_multiply<T: Element + burn::tensor::Element + bytemuck::Pod>(
    values: &FlexTensor,
    dense: &FlexTensor,
    bias: Option<&FlexTensor>,
    pattern: &BsrPattern,
    transpose: bool,
) -> TensorData {
    let shape = dense.layout().shape();
    let (k, n) = (shape[0], shape[1]);
    let values = flex_elements::<T>(values, "values");
    let (dense, ld, layout) = flex_matrix::<T>(dense, "dense");
    let bias = bias.map(|bias| flex_elements::<T>(bias, "bias"));
    multiply(&values, (&dense, ld, layout), (k, n), bias.as_deref(), pattern, transpose)
}

/// The generic path's operands as `T`: a dense operand or bias of another dtype is converted
/// (bsrmm multiplies one dtype), one of the values' dtype is read as it is.
#[cfg(feature = "cuda")]
fn read_and_multiply<T: Element + burn::tensor::Element>(
    values: &TensorData,
    dense: &TensorData,
    bias: Option<&TensorData>,
    pattern: &BsrPattern,
    transpose: bool,
) -> TensorData {
    let values = values.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: values: {e:?}"));
    let dense = in_dtype::<T>(dense);
    let (k, n) = (dense.shape()[0], dense.shape()[1]);
    let dense_slice = dense.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: dense: {e:?}"));
    let bias = bias.map(in_dtype::<T>);
    let bias_slice = bias.as_ref().map(|bias| bias.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: bias: {e:?}")));
    multiply(values, (dense_slice, n.max(1), Layout::RowMajor), (k, n), bias_slice, pattern, transpose)
}

/// `data` as `T`: itself when it already is, else a converted copy.
#[cfg(feature = "cuda")]
fn in_dtype<T: burn::tensor::Element>(data: &TensorData) -> Cow<'_, TensorData> {
    if data.dtype() == T::dtype() {
        Cow::Borrowed(data)
    } else {
        Cow::Owned(data.clone().convert::<T>())
    }
}

/// `op(A) * dense (+ bias)` on bsrmm's CPU backend, A the pattern holding `values` (in place).
fn multiply<T: Element + burn::tensor::Element>(
    values: &[T],
    (dense, ld, layout): (&[T], usize, Layout),
    (k, n): (usize, usize),
    bias: Option<&[T]>,
    pattern: &BsrPattern,
    transpose: bool,
) -> TensorData {
    let fail = |e: bsrmm::Error| -> ! { panic!("burn-bsrmm: {e}") };
    let ctx = cpu_context().unwrap_or_else(|e| fail(e));
    // The pattern's structure, validated once and kept with the pattern (host_pattern), holding
    // this call's values in place. A matrix built per call validated the indices and copied the
    // values into fresh memory, most of its cost page faults (perf-log 97).
    let structure = host_pattern::<T>(&ctx, pattern).unwrap_or_else(|e| fail(e));
    if values.len() != structure.nnz() {
        fail(bsrmm::Error::invalid_argument(format!(
            "values has {} elements, the pattern nnzb * block_height * block_width = {}",
            values.len(),
            structure.nnz()
        )));
    }
    // SAFETY: `values` holds exactly the matrix's nnz elements on the host (checked above) and
    // outlives `a`, which is dropped at the end of this function; nothing writes it meanwhile.
    let a = unsafe { structure.with_raw_values(values.as_ptr(), Device::Cpu, true) }.unwrap_or_else(|e| fail(e));
    let b = DenseRef::new(dense, k, n, ld, layout).unwrap_or_else(|e| fail(e));
    let op = if transpose { Op::Transpose } else { Op::None };
    let options = MatmulOptions::new().op(op);
    let options = match bias {
        Some(bias) => options.bias(DenseRef::vector(bias)),
        None => options,
    };
    let c = bsrmm::matmul(&ctx, &a, b, Layout::RowMajor, &options).unwrap_or_else(|e| fail(e));
    let (m, n) = (c.rows(), c.cols());
    TensorData::new(c.into_vec(), [m, n])
}

/// The SDDMM `x * y` at the stored blocks of `pattern` (`[nnzb, bh, bw]`) on Flex: `x` and `y`
/// read in place (flex_matrix), the pattern's kept core matrix for the structure.
pub(crate) fn flex_bsr_sddmm(x: FlexTensor, y: FlexTensor, pattern: &BsrPattern) -> FlexTensor {
    let out = match x.dtype() {
        DType::F32 => flex_sampled::<f32>(&x, &y, pattern),
        DType::F64 => flex_sampled::<f64>(&x, &y, pattern),
        DType::F16 => flex_sampled::<f16>(&x, &y, pattern),
        DType::BF16 => flex_sampled::<bf16>(&x, &y, pattern),
        other => panic!("burn-bsrmm: operands of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    FlexTensor::from_data(out)
}

fn flex_sampled<T: Element + burn::tensor::Element + bytemuck::Pod>(x: &FlexTensor, y: &FlexTensor, pattern: &BsrPattern) -> TensorData {
    let (rows, t) = (x.layout().shape()[0], x.layout().shape()[1]);
    let cols = y.layout().shape()[1];
    let x = flex_matrix::<T>(x, "x");
    let y = flex_matrix::<T>(y, "y");
    sampled((&x.0, x.1, x.2), (&y.0, y.1, y.2), (rows, t, cols), pattern)
}

/// The SDDMM `x * y` at the stored blocks of `pattern` (`[nnzb, bh, bw]`), for any backend whose
/// tensors can be read on the host (Cube's fallback). Shapes were checked by the public entry point.
#[cfg(feature = "cuda")]
pub(crate) fn bsr_sddmm<B: Backend>(x: FloatTensor<B>, y: FloatTensor<B>, pattern: &BsrPattern) -> FloatTensor<B> {
    let device = x.device();
    let x = read::<B>(x);
    let y = read::<B>(y);
    let out = match x.dtype() {
        DType::F32 => read_and_sample::<f32>(&x, &y, pattern),
        DType::F64 => read_and_sample::<f64>(&x, &y, pattern),
        DType::F16 => read_and_sample::<f16>(&x, &y, pattern),
        DType::BF16 => read_and_sample::<bf16>(&x, &y, pattern),
        other => panic!("burn-bsrmm: operands of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    B::float_from_data(out, &device)
}

#[cfg(feature = "cuda")]
fn read_and_sample<T: Element + burn::tensor::Element>(x: &TensorData, y: &TensorData, pattern: &BsrPattern) -> TensorData {
    let x_slice = x.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: x: {e:?}"));
    // x and y share a dtype (checked by the public entry point).
    let y_slice = y.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: y: {e:?}"));
    let (rows, t, cols) = (x.shape()[0], x.shape()[1], y.shape()[1]);
    sampled((x_slice, t.max(1), Layout::RowMajor), (y_slice, cols.max(1), Layout::RowMajor), (rows, t, cols), pattern)
}

/// `x * y` at the pattern's stored blocks on bsrmm's CPU backend.
fn sampled<T: Element + burn::tensor::Element>(
    (x, x_ld, x_layout): (&[T], usize, Layout),
    (y, y_ld, y_layout): (&[T], usize, Layout),
    (rows, t, cols): (usize, usize, usize),
    pattern: &BsrPattern,
) -> TensorData {
    let fail = |e: bsrmm::Error| -> ! { panic!("burn-bsrmm: {e}") };
    let ctx = cpu_context().unwrap_or_else(|e| fail(e));
    let (bh, bw) = pattern.block_shape();
    // The core reads only the pattern's structure; its values are zeros, cached per dtype.
    let matrix = host_pattern::<T>(&ctx, pattern).unwrap_or_else(|e| fail(e));
    let x_view = DenseRef::new(x, rows, t, x_ld, x_layout).unwrap_or_else(|e| fail(e));
    let y_view = DenseRef::new(y, t, cols, y_ld, y_layout).unwrap_or_else(|e| fail(e));
    let values = bsrmm::sddmm(&ctx, &matrix, x_view, y_view, &SddmmOptions::new()).unwrap_or_else(|e| fail(e));
    TensorData::new(values, [pattern.nnzb(), bh, bw])
}

/// The pattern as a host core matrix of dtype `T` (zeros as values), validated and kept with
/// the pattern on first use, so that the SDDMM and the multiply of every call reuse its
/// structure (the multiply borrows its values into it). Its zeros are one values-sized buffer
/// per pattern and dtype, kept while the pattern lives.
fn host_pattern<T: Element>(ctx: &Context, pattern: &BsrPattern) -> bsrmm::Result<std::sync::Arc<BsrMatrix<T>>> {
    struct HostPattern<T: Element>(std::sync::Arc<BsrMatrix<T>>);
    pattern.device_state().get_or_insert(
        |_: &HostPattern<T>| true,
        || {
            let zeros = bsrmm::try_filled(pattern.nnzb() * pattern.block_shape().0 * pattern.block_shape().1, T::default(), "pattern values")?;
            let matrix = BsrMatrix::from_bsr(
                ctx,
                pattern.rows(),
                pattern.cols(),
                pattern.block_shape(),
                pattern.row_ptr(),
                pattern.col_idx(),
                &zeros,
                CreateOptions::default(),
            )?;
            Ok(HostPattern(std::sync::Arc::new(matrix)))
        },
        |h| std::sync::Arc::clone(&h.0),
    )
}
