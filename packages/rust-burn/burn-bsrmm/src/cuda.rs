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
//! (`bsrmm_matrix_with_values`), so it costs one runner task and the multiply.

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use bsrmm::{bf16, f16, BsrMatrix, Context, DenseMut, DenseRef, Device, Element, Layout, MatmulOptions, Op};
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

fn on_cuda(values: CubeTensor, dense: CubeTensor, pattern: &BsrPattern, transpose: bool, ordinal: u32) -> CubeTensor {
    let values = into_contiguous(values);
    // A transposed contiguous matrix (what BsrLinear passes) is read in place as column-major.
    let dense_shape = dense.meta.shape().clone();
    let (k, n) = (dense_shape[0], dense_shape[1]);
    let strides = dense.meta.strides().to_vec();
    let (dense, layout) = if dense.is_contiguous() {
        (dense, Layout::RowMajor)
    } else if strides == [1, k] {
        (dense, Layout::ColMajor)
    } else {
        (into_contiguous(dense), Layout::RowMajor)
    };
    let (m, _) = pattern.op_shape(transpose);
    let dtype = values.dtype;
    // Left uninitialised: with beta = 0 bsrmm writes every element of C (empty block rows as
    // zeros), so a fill would only cost a pass over C.
    let output = <Cube as burn::backend::ops::FloatTensorOps<Cube>>::float_empty(
        Shape::new([m, n]),
        &burn::backend::TensorMetadata::device(&values),
        dtype.into(),
    );
    // CubeCL may give the output a pitched layout (rows padded for alignment): C's leading
    // dimension is its row stride, not n.
    let out_strides = output.meta.strides().to_vec();
    assert!(
        out_strides.len() == 2 && (out_strides[1] == 1 || n <= 1),
        "burn-bsrmm: CubeCL allocated the output with strides {out_strides:?}; expected row-major"
    );
    let ldc = out_strides[0].max(n.max(1));

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

    // CubeCL's stream for this thread (as CubeCL's client picks it), named here: the task below
    // runs on the runner thread, which has a stream of its own.
    let stream = StreamId::current();
    let runner = DeviceHandle::<CudaServer>::new(values.client.service_id().device);
    let bindings = [&values, &dense, &output].map(|t| t.handle.clone().binding());
    runner
        .submit_blocking(move |server: &mut CudaServer| launch_on_runner(server, stream, bindings, launch))
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL's device runner failed the launch: {e:?}"))
        .unwrap_or_else(|e| panic!("burn-bsrmm: {e}"));
    output
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

/// Launches the multiply on a CUDA stream given the device addresses of the values, the dense
/// input and the output.
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

/// This call's multiply, for the runner: the template found (or made, on this thread) now.
fn launcher<T: Element>(ctx: &Context, values: &CubeTensor, pattern: &BsrPattern, s: CallShape) -> bsrmm::Result<Launcher> {
    let template = pattern.device_state().get_or_insert(
        |t: &Template<T>| t.ordinal == s.ordinal,
        || template::<T>(ctx, values, pattern, s.ordinal),
        |t| Arc::clone(&t.matrix),
    )?;
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
