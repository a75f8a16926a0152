//! The op on Burn's CubeCL backend. On a CUDA device bsrmm runs on the device buffers of Burn's
//! own tensors; on any other CubeCL runtime (wgpu, the CubeCL CPU runtime) the host path serves.
//!
//! Synchronisation: CubeCL queues work on its own streams, bsrmm on its context's stream. The
//! op waits for CubeCL's queued work before reading (so the values and the dense input are
//! complete) and for its own work before returning (so CubeCL's next kernel sees the result).
//! The resource guards keep the buffers allocated and in place for the whole call.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bsrmm::{bf16, f16, BsrMatrix, Context, DenseMut, DenseRef, Device, Element, Layout, MatmulOptions, Op};
use burn::backend::tensor::FloatTensor;
use burn::backend::Cube;
use cubecl::cuda::CudaRuntime;
use cubecl_runtime::runtime::Runtime;
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
            None => crate::host::bsr_matmul::<Self>(values, dense, &pattern, transpose),
        }
    }
}

/// One bsrmm context per GPU, shared by every call (the context serialises its own calls).
fn cuda_context(ordinal: u32) -> Context {
    static CONTEXTS: OnceLock<Mutex<HashMap<u32, Context>>> = OnceLock::new();
    let mut contexts = CONTEXTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    contexts
        .entry(ordinal)
        .or_insert_with(|| Context::new(Device::Cuda(ordinal)).unwrap_or_else(|e| panic!("burn-bsrmm: {e}")))
        .clone()
}

/// The device address of a tensor's first element, valid while the returned guard lives.
fn device_ptr(tensor: &CubeTensor) -> (u64, impl Sized + use<>) {
    let resource = tensor
        .client
        .get_resource::<CudaServer>(tensor.handle.clone())
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL gave no CUDA resource for a tensor: {e:?}"));
    (resource.resource().ptr, resource)
}

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
    let device = values.device.clone();
    let dtype = values.dtype;
    // Allocated and written by CubeCL (a fill), so CubeCL treats it as initialised memory.
    let output = <Cube as burn::backend::ops::FloatTensorOps<Cube>>::float_zeros(
        Shape::new([m, n]),
        &burn::backend::TensorMetadata::device(&values),
        dtype.into(),
    );
    let index = |idx: &[i64]| -> CubeTensor {
        let idx: Vec<i32> = idx.iter().map(|&i| i as i32).collect();
        let bytes: Vec<u8> = idx.iter().flat_map(|i| i.to_ne_bytes()).collect();
        let handle = values.client.create_from_slice(&bytes);
        CubeTensor::new_contiguous(values.client.clone(), device.clone(), Shape::new([idx.len()]), handle, DType::I32)
    };
    // CubeCL may give the output a pitched layout (rows padded for alignment): C's leading
    // dimension is its row stride, not n.
    let out_strides = output.meta.strides().to_vec();
    assert!(
        out_strides.len() == 2 && (out_strides[1] == 1 || n <= 1),
        "burn-bsrmm: CubeCL allocated the output with strides {out_strides:?}; expected row-major"
    );
    let ldc = out_strides[0].max(n.max(1));
    let row_ptr = index(pattern.row_ptr());
    let col_idx = index(pattern.col_idx());

    burn::tensor::try_read_sync(values.client.sync())
        .expect("burn-bsrmm: CubeCL cannot synchronise on this platform")
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL work before the op failed: {e:?}"));
    let (values_ptr, _values_guard) = device_ptr(&values);
    let (dense_ptr, _dense_guard) = device_ptr(&dense);
    let (out_ptr, _out_guard) = device_ptr(&output);
    let (row_ptr_ptr, _row_ptr_guard) = device_ptr(&row_ptr);
    let (col_idx_ptr, _col_idx_guard) = device_ptr(&col_idx);

    let ctx = cuda_context(ordinal);
    let run = |ptrs: Ptrs| match dtype {
        DType::F32 => multiply::<f32>(&ctx, pattern, transpose, ptrs),
        DType::F16 => multiply::<f16>(&ctx, pattern, transpose, ptrs),
        DType::BF16 => multiply::<bf16>(&ctx, pattern, transpose, ptrs),
        DType::F64 => multiply::<f64>(&ctx, pattern, transpose, ptrs),
        other => panic!("burn-bsrmm: values of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    run(Ptrs { values: values_ptr, dense: dense_ptr, out: out_ptr, row_ptr: row_ptr_ptr, col_idx: col_idx_ptr, k, n, m, ldc, layout, ordinal })
        .unwrap_or_else(|e| panic!("burn-bsrmm: {e}"));
    output
}

struct Ptrs {
    values: u64,
    dense: u64,
    out: u64,
    row_ptr: u64,
    col_idx: u64,
    k: usize,
    n: usize,
    m: usize,
    ldc: usize,
    layout: Layout,
    ordinal: u32,
}

fn multiply<T: Element>(ctx: &Context, pattern: &BsrPattern, transpose: bool, p: Ptrs) -> bsrmm::Result<()> {
    let device = Device::Cuda(p.ordinal);
    // SAFETY: every address is a live CubeCL allocation on this GPU, held in place by the
    // resource guards of the caller, sized by the shapes checked at the public entry point; the
    // values are borrowed only for this matrix, which is dropped before the guards.
    unsafe {
        let (bh, bw) = pattern.block_shape();
        let a = BsrMatrix::<T>::from_raw_parts(
            ctx,
            pattern.rows(),
            pattern.cols(),
            (bh, bw),
            pattern.nnzb(),
            p.row_ptr as *const i32,
            p.col_idx as *const i32,
            p.values as *const T,
            device,
            true,
        )?;
        let ld = p.layout.min_ld(p.k, p.n).max(1);
        let b = DenseRef::from_raw_parts(p.dense as *const T, p.k, p.n, ld, p.layout, device)?;
        let c = DenseMut::from_raw_parts(p.out as *mut T, p.m, p.n, p.ldc, Layout::RowMajor, device)?;
        let op = if transpose { Op::Transpose } else { Op::None };
        bsrmm::matmul_into(ctx, &a, b, c, &MatmulOptions::new().op(op))?;
        ctx.synchronize()
    }
}
