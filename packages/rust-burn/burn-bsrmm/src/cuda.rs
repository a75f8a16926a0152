//! The op on Burn's CubeCL backend. On a CUDA device bsrmm runs on the device buffers of Burn's
//! own tensors; on any other CubeCL runtime (wgpu, the CubeCL CPU runtime) the host path serves.
//!
//! Ordering with CubeCL: the multiply goes on CubeCL's own CUDA stream, the one the calling
//! thread's CubeCL work goes on, so the GPU orders it like any CubeCL kernel. The op is one task
//! on CubeCL's device runner (the thread that issues all of a device's GPU work, in queue order):
//! resolve the three buffers on the caller's CubeCL stream, exactly as CubeCL's own launch does
//! (the stream waits, on the GPU, for other streams that wrote them), and launch on that stream.
//! Work queued after the op (kernels reading the product, host reads, new tensors in the inputs'
//! memory) follows it on that stream, and CubeCL orders other streams' uses of the buffers after
//! it with events. No host wait anywhere: the caller returns once the multiply is launched, and
//! the next op's launch is issued while this one runs, as CubeCL issues its own kernels.
//!
//! CubeCL does not export a stream accessor, but its server's public `WriteScoped` trait hands
//! out the multi-stream pool, whose streams hold the raw `CUstream` (`sys`).
//!
//! Cost per call: the pattern is validated and scheduled by the core once per dtype and GPU
//! (kept with the pattern); each call only borrows its values into that structure
//! (`bsrmm_matrix_with_values`), so it costs one runner task and the multiply. The SDDMM (the
//! weight gradient) runs the same way on that matrix, whose values it does not read.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use bsrmm::{bf16, f16, BsrMatrix, Context, DenseMut, DenseRef, Device, Element, Layout, MatmulOptions, Op, SddmmOptions};
use burn::backend::tensor::FloatTensor;
use burn::backend::Cube;
use cubecl::cuda::CudaRuntime;
use cubecl_common::device_handle::DeviceHandle;
use cubecl_environment::stream::StreamId;
use cubecl_runtime::runtime::Runtime;
use cubecl_runtime::server::{BufferBinding, ServerStorage};
use cubecl_runtime::storage::{ComputeStorage, ManagedResource};
use cubecl_server::stream::WriteScoped;
use burn::tensor::{DType, Shape};
use burn_cubecl::kernel::into_contiguous;
use burn_cubecl::tensor::CubeTensor;
use burn_cubecl::CubeDevice;

use crate::BsrBackend;
use crate::pattern::BsrPattern;

type CudaServer = <CudaRuntime as Runtime>::Server;

impl BsrBackend for Cube {
    fn bsr_matmul(
        values: FloatTensor<Self>,
        dense: FloatTensor<Self>,
        pattern: BsrPattern,
        transpose: bool,
    ) -> FloatTensor<Self> {
        let cuda_ordinal = match &values.device {
            CubeDevice::Cuda(device) => Some(device.index as u32),
            _ => None,
        };
        match cuda_ordinal {
            Some(ordinal) => on_cuda(values, dense, &pattern, transpose, ordinal),
            None => crate::host::bsr_matmul::<Self>(values, dense, None, &pattern, transpose),
        }
    }

    fn bsr_sddmm(x: FloatTensor<Self>, y: FloatTensor<Self>, pattern: BsrPattern) -> FloatTensor<Self> {
        match &x.device {
            CubeDevice::Cuda(device) => sddmm_on_cuda(x, y, &pattern, device.index as u32),
            _ => crate::host::bsr_sddmm::<Self>(x, y, &pattern),
        }
    }
}

/// The context that makes the templates on a GPU (its own stream; callers' threads).
fn template_context(ordinal: u32) -> Context {
    per_gpu_context(ordinal, &TEMPLATE_CONTEXTS)
}

/// The context that launches the multiplies on a GPU. Only that device's runner thread uses
/// it, setting its stream to the caller's CubeCL stream right before each launch, so no other
/// call can change the stream in between.
fn launch_context(ordinal: u32) -> Context {
    per_gpu_context(ordinal, &LAUNCH_CONTEXTS)
}

static TEMPLATE_CONTEXTS: OnceLock<Mutex<HashMap<u32, Context>>> = OnceLock::new();
static LAUNCH_CONTEXTS: OnceLock<Mutex<HashMap<u32, Context>>> = OnceLock::new();

fn per_gpu_context(ordinal: u32, contexts: &OnceLock<Mutex<HashMap<u32, Context>>>) -> Context {
    let mut contexts = contexts.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    contexts
        .entry(ordinal)
        .or_insert_with(|| Context::new(Device::Cuda(ordinal)).unwrap_or_else(|e| panic!("burn-bsrmm: {e}")))
        .clone()
}

/// The device address of a tensor's first element, valid while the returned guard lives.
fn device_ptr(tensor: &CubeTensor) -> (u64, Guard) {
    let resource = tensor
        .client
        .get_resource::<CudaServer>(tensor.handle.clone())
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL gave no CUDA resource for a tensor: {e:?}"));
    (resource.resource().ptr, resource)
}

/// A CubeCL buffer held allocated and in place.
type Guard = ManagedResource<<<CudaServer as ServerStorage>::Storage as ComputeStorage>::Resource>;

/// A matrix operand as bsrmm reads it in place: contiguous (row-major), or a transposed
/// contiguous matrix (what BsrLinear and the gradients pass) as column-major; anything else is
/// made contiguous first.
fn dense_operand(tensor: CubeTensor) -> (CubeTensor, Layout) {
    let rows = tensor.meta.shape()[0];
    if tensor.is_contiguous() {
        (tensor, Layout::RowMajor)
    } else if tensor.meta.strides().to_vec() == [1, rows] {
        (tensor, Layout::ColMajor)
    } else {
        (into_contiguous(tensor), Layout::RowMajor)
    }
}

/// A new `rows x cols` output on `like`'s device, left uninitialised (bsrmm writes every element
/// with beta = 0, so a fill would only cost a pass), and its leading dimension: CubeCL may give
/// it a pitched layout (rows padded for alignment), so that is its row stride, not `cols`.
fn output_matrix(like: &CubeTensor, rows: usize, cols: usize, dtype: DType) -> (CubeTensor, usize) {
    let output = <Cube as burn::backend::ops::FloatTensorOps<Cube>>::float_empty(
        Shape::new([rows, cols]),
        &burn::backend::TensorMetadata::device(like),
        dtype.into(),
    );
    let strides = output.meta.strides().to_vec();
    assert!(
        strides.len() == 2 && (strides[1] == 1 || cols <= 1),
        "burn-bsrmm: CubeCL allocated the output with strides {strides:?}; expected row-major"
    );
    let ld = strides[0].max(cols.max(1));
    (output, ld)
}

/// Runs `launch` as one task on CubeCL's device runner, on the calling thread's CubeCL stream,
/// with the three buffers resolved there (see the module comment).
fn submit(operands: [&CubeTensor; 3], launch: Launcher) {
    // CubeCL's stream for this thread (as CubeCL's client picks it), named here: the task runs on
    // the runner thread, which has a stream of its own.
    let stream = StreamId::current();
    let runner = DeviceHandle::<CudaServer>::new(operands[0].client.service_id().device);
    let bindings = operands.map(|t| t.handle.clone().binding());
    runner
        .submit_blocking(move |server: &mut CudaServer| launch_on_runner(server, stream, bindings, launch))
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL's device runner failed the launch: {e:?}"))
        .unwrap_or_else(|e| panic!("burn-bsrmm: {e}"));
}

fn on_cuda(values: CubeTensor, dense: CubeTensor, pattern: &BsrPattern, transpose: bool, ordinal: u32) -> CubeTensor {
    let values = into_contiguous(values);
    let (k, n) = (dense.meta.shape()[0], dense.meta.shape()[1]);
    let (dense, layout) = dense_operand(dense);
    let (m, _) = pattern.op_shape(transpose);
    let dtype = values.dtype;
    let (output, ldc) = output_matrix(&values, m, n, dtype);

    let ctx = template_context(ordinal);
    let shape = CallShape { k, n, m, ldc, layout, ordinal, transpose };
    // The template is made here, on the caller's thread (its upload goes through CubeCL's
    // runner), so the runner task below never waits for a lock a caller holds.
    let launch = match dtype {
        DType::F32 => launcher::<f32>(&ctx, &values, pattern, shape),
        DType::F16 => launcher::<f16>(&ctx, &values, pattern, shape),
        DType::BF16 => launcher::<bf16>(&ctx, &values, pattern, shape),
        DType::F64 => launcher::<f64>(&ctx, &values, pattern, shape),
        other => panic!("burn-bsrmm: values of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    }
    .unwrap_or_else(|e| panic!("burn-bsrmm: {e}"));
    submit([&values, &dense, &output], launch);
    output
}

/// The SDDMM on a GPU: `x` (`[rows, t]`) times `y` (`[t, cols]`) at the pattern's blocks, into a
/// new `[nnzb, bh, bw]` tensor; x and y are read in place (a transposed view as column-major).
fn sddmm_on_cuda(x: CubeTensor, y: CubeTensor, pattern: &BsrPattern, ordinal: u32) -> CubeTensor {
    let (bh, bw) = pattern.block_shape();
    let (nnzb, t) = (pattern.nnzb(), x.meta.shape()[1]);
    let dtype = x.dtype;
    let values_shape = Shape::new([nnzb, bh, bw]);
    let device = burn::backend::TensorMetadata::device(&x);
    // Nothing to launch (and no buffer to bind): no block, or an empty inner dimension.
    if nnzb == 0 || t == 0 {
        return <Cube as burn::backend::ops::FloatTensorOps<Cube>>::float_zeros(values_shape, &device, dtype.into());
    }
    let (x, x_layout) = dense_operand(x);
    let (y, y_layout) = dense_operand(y);
    let (output, ld) = output_matrix(&x, nnzb, bh * bw, dtype);
    let ctx = template_context(ordinal);
    let shape = SddmmShape { rows: pattern.rows(), t, cols: pattern.cols(), x_layout, y_layout, nnzb, block_values: bh * bw, ld, ordinal };
    // The template's values come from the (uninitialised) output: the SDDMM reads only the
    // structure, and a later multiply borrows its own values into it.
    let launch = match dtype {
        DType::F32 => sddmm_launcher::<f32>(&ctx, &output, pattern, shape),
        DType::F16 => sddmm_launcher::<f16>(&ctx, &output, pattern, shape),
        DType::BF16 => sddmm_launcher::<bf16>(&ctx, &output, pattern, shape),
        DType::F64 => sddmm_launcher::<f64>(&ctx, &output, pattern, shape),
        other => panic!("burn-bsrmm: operands of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    }
    .unwrap_or_else(|e| panic!("burn-bsrmm: {e}"));
    submit([&x, &y, &output], launch);
    <Cube as burn::backend::ops::FloatTensorOps<Cube>>::float_reshape(output, values_shape)
}

/// On CubeCL's runner: the buffers resolved on the caller's CubeCL stream and the multiply
/// launched there.
fn launch_on_runner(server: &mut CudaServer, stream: StreamId, bindings: [BufferBinding; 3], launch: Launcher) -> Result<(), String> {
    // Each resolve makes the stream wait (an event) for any other stream that wrote the buffer,
    // and records this stream as the buffer's latest user, which orders other streams' later
    // uses (and the reuse of the memory) after the multiply.
    let mut guards = Vec::with_capacity(3);
    for binding in bindings {
        guards.push(server.get_resource(binding, stream).map_err(|e| format!("CubeCL gave no CUDA resource for a tensor: {e:?}"))?);
    }
    let cuda_stream = server
        .write_streams()
        .try_stream_mut(&stream)
        .ok_or("CubeCL has no CUDA stream for the calling thread after resolving its buffers")?
        .sys;
    let ptrs = [0, 1, 2].map(|i| guards[i].resource().ptr);
    // The guards and the matrix borrowing the values are dropped once the multiply is queued, as
    // CubeCL drops a kernel's bindings: later use of the memory is ordered behind it on the GPU.
    launch(ptrs, cuda_stream.cast()).map_err(|e| e.to_string())
}

/// Launches the multiply (or the SDDMM) on a CUDA stream given the device addresses of its three
/// operands: the values, the dense input and the output (x, y and the values).
type Launcher = Box<dyn FnOnce([u64; 3], *mut c_void) -> bsrmm::Result<()> + Send>;

/// The call's operands, as the multiply sees them.
#[derive(Clone, Copy)]
struct CallShape {
    k: usize,
    n: usize,
    m: usize,
    ldc: usize,
    layout: Layout,
    ordinal: u32,
    transpose: bool,
}

/// The pattern validated once per dtype and GPU: a core matrix whose structure (indices on the
/// device, schedules, work lists) every call shares, with the call's values swapped in.
struct Template<T: Element> {
    ordinal: u32,
    matrix: Arc<BsrMatrix<T>>,
}

/// The pattern's core matrix on GPU `ordinal`, found, or made now (on this thread) from the
/// pattern and the values at `values`.
fn template_matrix<T: Element>(ctx: &Context, values: &CubeTensor, pattern: &BsrPattern, ordinal: u32) -> bsrmm::Result<Arc<BsrMatrix<T>>> {
    pattern.device_state().get_or_insert(
        |t: &Template<T>| t.ordinal == ordinal,
        || template::<T>(ctx, values, pattern, ordinal),
        |t| Arc::clone(&t.matrix),
    )
}

/// The SDDMM's operands as it reads them.
#[derive(Clone, Copy)]
struct SddmmShape {
    rows: usize,
    t: usize,
    cols: usize,
    x_layout: Layout,
    y_layout: Layout,
    nnzb: usize,
    block_values: usize,
    ld: usize,
    ordinal: u32,
}

/// This call's SDDMM, for the runner: on the pattern's template matrix, whose values it does not
/// read.
fn sddmm_launcher<T: Element>(ctx: &Context, values: &CubeTensor, pattern: &BsrPattern, s: SddmmShape) -> bsrmm::Result<Launcher> {
    let template = template_matrix::<T>(ctx, values, pattern, s.ordinal)?;
    Ok(Box::new(move |[x, y, out]: [u64; 3], stream: *mut c_void| {
        let device = Device::Cuda(s.ordinal);
        let ctx = launch_context(s.ordinal);
        // SAFETY: every address is a live CubeCL allocation on this GPU, resolved on `stream`
        // (CubeCL's), sized by the shapes checked at the public entry point (the output by
        // output_matrix); the kernel runs on that stream, ahead of anything CubeCL queues after it.
        unsafe {
            ctx.set_stream(stream)?;
            let x = DenseRef::from_raw_parts(x as *const T, s.rows, s.t, s.x_layout.min_ld(s.rows, s.t).max(1), s.x_layout, device)?;
            let y = DenseRef::from_raw_parts(y as *const T, s.t, s.cols, s.y_layout.min_ld(s.t, s.cols).max(1), s.y_layout, device)?;
            let values = DenseMut::from_raw_parts(out as *mut T, s.nnzb, s.block_values, s.ld, Layout::RowMajor, device)?;
            bsrmm::sddmm_into(&ctx, &template, x, y, values, &SddmmOptions::new())
        }
    }))
}

/// This call's multiply, for the runner: the template found (or made, on this thread) now.
fn launcher<T: Element>(ctx: &Context, values: &CubeTensor, pattern: &BsrPattern, s: CallShape) -> bsrmm::Result<Launcher> {
    let template = template_matrix::<T>(ctx, values, pattern, s.ordinal)?;
    Ok(Box::new(move |[values, dense, out]: [u64; 3], stream: *mut c_void| {
        let device = Device::Cuda(s.ordinal);
        let ctx = launch_context(s.ordinal);
        // SAFETY: every address is a live CubeCL allocation on this GPU, resolved on `stream`
        // (CubeCL's), sized by the shapes checked at the public entry point; the kernel runs on
        // that stream, ahead of anything CubeCL queues after it in that memory.
        unsafe {
            ctx.set_stream(stream)?;
            let a = template.with_raw_values(values as *const T, device, true)?;
            let ld = s.layout.min_ld(s.k, s.n).max(1);
            let b = DenseRef::from_raw_parts(dense as *const T, s.k, s.n, ld, s.layout, device)?;
            let c = DenseMut::from_raw_parts(out as *mut T, s.m, s.n, s.ldc, Layout::RowMajor, device)?;
            let op = if s.transpose { Op::Transpose } else { Op::None };
            bsrmm::matmul_into(&ctx, &a, b, c, &MatmulOptions::new().op(op))
        }
    }))
}

/// The template's core matrix, made on the first call from the pattern's indices (uploaded
/// through CubeCL) and a copy of that call's values.
fn template<T: Element>(ctx: &Context, values: &CubeTensor, pattern: &BsrPattern, ordinal: u32) -> bsrmm::Result<Template<T>> {
    let index = |idx: &[i64]| -> CubeTensor {
        let bytes: Vec<u8> = idx.iter().flat_map(|&i| (i as i32).to_ne_bytes()).collect();
        let handle = values.client.create_from_slice(&bytes);
        CubeTensor::new_contiguous(values.client.clone(), values.device.clone(), Shape::new([idx.len()]), handle, DType::I32)
    };
    let row_ptr = index(pattern.row_ptr());
    let col_idx = index(pattern.col_idx());
    burn::tensor::try_read_sync(values.client.sync())
        .expect("burn-bsrmm: CubeCL cannot synchronise on this platform")
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL upload of the pattern failed: {e:?}"));
    let (row_ptr_ptr, _row_ptr_guard) = device_ptr(&row_ptr);
    let (col_idx_ptr, _col_idx_guard) = device_ptr(&col_idx);
    let (values_ptr, _values_guard) = device_ptr(values);
    // SAFETY: live CubeCL allocations on this GPU of the pattern's sizes, held by the guards
    // for this call; the core copies all three arrays (no borrow), so nothing outlives them.
    let matrix = unsafe {
        BsrMatrix::<T>::from_raw_parts(
            ctx,
            pattern.rows(),
            pattern.cols(),
            pattern.block_shape(),
            pattern.nnzb(),
            row_ptr_ptr as *const i32,
            col_idx_ptr as *const i32,
            values_ptr as *const T,
            Device::Cuda(ordinal),
            false,
        )?
    };
    Ok(Template { ordinal, matrix: Arc::new(matrix) })
}
