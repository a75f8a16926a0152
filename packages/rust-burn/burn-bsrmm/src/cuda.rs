//! The op on Burn's CubeCL backend. On a CUDA device bsrmm runs on the device buffers of Burn's
//! own tensors; on any other CubeCL runtime (wgpu, the CubeCL CPU runtime) the host path serves.
//!
//! Synchronisation: CubeCL queues work on its own streams, bsrmm on its context's stream. The
//! op waits for CubeCL's queued work before reading (so the values and the dense input are
//! complete) and for its own work before returning (so CubeCL's next kernel sees the result).
//! The resource guards keep the buffers allocated and in place for the whole call.
//!
//! Cost per call: the pattern is validated and scheduled by the core once per dtype and GPU
//! (kept with the pattern); each call only borrows its values into that structure
//! (`bsrmm_matrix_with_values`), so it costs the two synchronisations and the multiply.

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

    burn::tensor::try_read_sync(values.client.sync())
        .expect("burn-bsrmm: CubeCL cannot synchronise on this platform")
        .unwrap_or_else(|e| panic!("burn-bsrmm: CubeCL work before the op failed: {e:?}"));
    let (values_ptr, _values_guard) = device_ptr(&values);
    let (dense_ptr, _dense_guard) = device_ptr(&dense);
    let (out_ptr, _out_guard) = device_ptr(&output);

    let ctx = cuda_context(ordinal);
    let ptrs = Ptrs { values: values_ptr, dense: dense_ptr, out: out_ptr, k, n, m, ldc, layout, ordinal };
    let run = match dtype {
        DType::F32 => multiply::<f32>(&ctx, &values, pattern, transpose, ptrs),
        DType::F16 => multiply::<f16>(&ctx, &values, pattern, transpose, ptrs),
        DType::BF16 => multiply::<bf16>(&ctx, &values, pattern, transpose, ptrs),
        DType::F64 => multiply::<f64>(&ctx, &values, pattern, transpose, ptrs),
        other => panic!("burn-bsrmm: values of dtype {other:?} are not supported (f32, f64, f16, bf16 are)"),
    };
    run.unwrap_or_else(|e| panic!("burn-bsrmm: {e}"));
    output
}

struct Ptrs {
    values: u64,
    dense: u64,
    out: u64,
    k: usize,
    n: usize,
    m: usize,
    ldc: usize,
    layout: Layout,
    ordinal: u32,
}

/// The pattern validated once per dtype and GPU: a core matrix whose structure (indices on the
/// device, schedules, work lists) every call shares, with the call's values swapped in.
struct Template<T: Element> {
    ordinal: u32,
    matrix: BsrMatrix<T>,
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
    Ok(Template { ordinal, matrix })
}

fn multiply<T: Element>(ctx: &Context, values: &CubeTensor, pattern: &BsrPattern, transpose: bool, p: Ptrs) -> bsrmm::Result<()> {
    let device = Device::Cuda(p.ordinal);
    // SAFETY: every address is a live CubeCL allocation on this GPU, held in place by the
    // resource guards of the caller, sized by the shapes checked at the public entry point; the
    // values are borrowed only by `a`, which is dropped before the guards.
    unsafe {
        let a = pattern.device_state().get_or_insert(
            |t: &Template<T>| t.ordinal == p.ordinal,
            || template::<T>(ctx, values, pattern, p.ordinal),
            |t| t.matrix.with_raw_values(p.values as *const T, device, true),
        )??;
        let ld = p.layout.min_ld(p.k, p.n).max(1);
        let b = DenseRef::from_raw_parts(p.dense as *const T, p.k, p.n, ld, p.layout, device)?;
        let c = DenseMut::from_raw_parts(p.out as *mut T, p.m, p.n, p.ldc, Layout::RowMajor, device)?;
        let op = if transpose { Op::Transpose } else { Op::None };
        bsrmm::matmul_into(ctx, &a, b, c, &MatmulOptions::new().op(op))?;
        ctx.synchronize()
    }
}
