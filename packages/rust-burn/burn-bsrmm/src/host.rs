//! The ops on host-memory backends (Flex): read the operands, multiply (or SDDMM) on bsrmm's
//! CPU backend, and hand the result back to the backend.

use std::sync::OnceLock;

use bsrmm::{bf16, f16, BsrMatrix, Context, CreateOptions, DenseRef, Element, Layout, MatmulOptions, Op, SddmmOptions};
use burn::backend::{Backend, TensorMetadata};
use burn::backend::tensor::FloatTensor;
use burn::tensor::{DType, TensorData, try_read_sync};

use crate::pattern::BsrPattern;

/// The process-wide CPU context (the core's CPU backend is multithreaded on its own).
pub(crate) fn cpu_context() -> bsrmm::Result<Context> {
    static CPU: OnceLock<bsrmm::Result<Context>> = OnceLock::new();
    CPU.get_or_init(Context::cpu).clone()
}

/// Reads a tensor to the host. Backends of this kind (Flex) read synchronously; a failed read
/// is a backend fault, reported the way Burn reports it (a panic naming the cause).
pub(crate) fn read<B: Backend>(tensor: FloatTensor<B>) -> TensorData {
    try_read_sync(B::float_into_data(tensor))
        .expect("burn-bsrmm: this backend cannot read tensors synchronously")
        .unwrap_or_else(|e| panic!("burn-bsrmm: reading a tensor failed: {e:?}"))
}

/// `op(A) * dense` (+ a per-row `bias`, in the multiply's epilogue) where A is `pattern` with
/// `values`, for any backend whose tensors can be read on the host. Shapes were checked by the
/// public entry point.
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
    let bias = bias.as_ref();
    let out = match values.dtype() {
        DType::F32 => multiply::<f32>(&values, &dense, bias, pattern, transpose),
        DType::F64 => multiply::<f64>(&values, &dense, bias, pattern, transpose),
        DType::F16 => multiply::<f16>(&values, &dense, bias, pattern, transpose),
        DType::BF16 => multiply::<bf16>(&values, &dense, bias, pattern, transpose),
        other => panic!("burn-bsrmm: values of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    B::float_from_data(out, &device)
}

fn multiply<T: Element + burn::tensor::Element>(
    values: &TensorData,
    dense: &TensorData,
    bias: Option<&TensorData>,
    pattern: &BsrPattern,
    transpose: bool,
) -> TensorData {
    let fail = |e: bsrmm::Error| -> ! { panic!("burn-bsrmm: {e}") };
    let values = values.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: values: {e:?}"));
    // The dense operand is converted to the values' dtype: bsrmm multiplies one dtype.
    let dense = dense.clone().convert::<T>();
    let dense_slice = dense.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: dense: {e:?}"));
    let bias = bias.map(|bias| bias.clone().convert::<T>());
    let bias_slice = bias.as_ref().map(|bias| bias.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: bias: {e:?}")));
    let (k, n) = (dense.shape()[0], dense.shape()[1]);
    let ctx = cpu_context().unwrap_or_else(|e| fail(e));
    let a = BsrMatrix::from_bsr(
        &ctx,
        pattern.rows(),
        pattern.cols(),
        pattern.block_shape(),
        pattern.row_ptr(),
        pattern.col_idx(),
        values,
        CreateOptions::default(),
    )
    .unwrap_or_else(|e| fail(e));
    let b = DenseRef::packed(dense_slice, k, n, Layout::RowMajor).unwrap_or_else(|e| fail(e));
    let op = if transpose { Op::Transpose } else { Op::None };
    let options = MatmulOptions::new().op(op);
    let options = match bias_slice {
        Some(bias) => options.bias(DenseRef::vector(bias)),
        None => options,
    };
    let c = bsrmm::matmul(&ctx, &a, b, Layout::RowMajor, &options).unwrap_or_else(|e| fail(e));
    let (m, n) = (c.rows(), c.cols());
    TensorData::new(c.into_vec(), [m, n])
}

/// The SDDMM `x * y` at the stored blocks of `pattern` (`[nnzb, bh, bw]`), for any backend whose
/// tensors can be read on the host. Shapes were checked by the public entry point.
pub(crate) fn bsr_sddmm<B: Backend>(x: FloatTensor<B>, y: FloatTensor<B>, pattern: &BsrPattern) -> FloatTensor<B> {
    let device = x.device();
    let x = read::<B>(x);
    let y = read::<B>(y);
    let out = match x.dtype() {
        DType::F32 => sampled::<f32>(&x, &y, pattern),
        DType::F64 => sampled::<f64>(&x, &y, pattern),
        DType::F16 => sampled::<f16>(&x, &y, pattern),
        DType::BF16 => sampled::<bf16>(&x, &y, pattern),
        other => panic!("burn-bsrmm: operands of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    B::float_from_data(out, &device)
}

fn sampled<T: Element + burn::tensor::Element>(x: &TensorData, y: &TensorData, pattern: &BsrPattern) -> TensorData {
    let fail = |e: bsrmm::Error| -> ! { panic!("burn-bsrmm: {e}") };
    let x_slice = x.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: x: {e:?}"));
    // x and y share a dtype (checked by the public entry point).
    let y_slice = y.as_slice::<T>().unwrap_or_else(|e| panic!("burn-bsrmm: y: {e:?}"));
    let (rows, t, cols) = (x.shape()[0], x.shape()[1], y.shape()[1]);
    let ctx = cpu_context().unwrap_or_else(|e| fail(e));
    let (bh, bw) = pattern.block_shape();
    // The core reads only the pattern's structure; its values are zeros, cached per dtype.
    let matrix = host_pattern::<T>(&ctx, pattern).unwrap_or_else(|e| fail(e));
    let x_view = DenseRef::packed(x_slice, rows, t, Layout::RowMajor).unwrap_or_else(|e| fail(e));
    let y_view = DenseRef::packed(y_slice, t, cols, Layout::RowMajor).unwrap_or_else(|e| fail(e));
    let values = bsrmm::sddmm(&ctx, &matrix, x_view, y_view, &SddmmOptions::new()).unwrap_or_else(|e| fail(e));
    TensorData::new(values, [pattern.nnzb(), bh, bw])
}

/// The pattern as a host core matrix of dtype `T` (zeros as values), validated and kept with
/// the pattern on first use, so the SDDMM of every step reuses its structure.
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
