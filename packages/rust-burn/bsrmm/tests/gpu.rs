//! GPU multiplies on device memory. Skips (with the reason) where bsrmm reports no CUDA device
//! or was built without CUDA; runs on the GPU machines.

mod common;

use bsrmm::{bf16, f16, matmul_into, BsrMatrix, Context, DeviceBuffer, Device, Element, Layout, MatmulOptions, Op};
use common::{check, reference, RandomBsr, Rng};

fn gpu_or_skip(test: &str) -> Option<Context> {
    if !bsrmm::cuda_compiled() {
        eprintln!("SKIP {test}: bsrmm was built without CUDA (no nvcc found at build time)");
        return None;
    }
    match bsrmm::cuda_device_count() {
        Ok(n) if n > 0 => Some(Context::new(Device::Cuda(0)).expect("a CUDA context on device 0")),
        Ok(_) => None,
        Err(e) => {
            eprintln!("SKIP {test}: no CUDA device ({e})");
            None
        }
    }
}

fn gpu_case<T: Element>(gpu: &Context, block: (usize, usize), transpose: bool, seed: u64) {
    let cpu = Context::cpu().unwrap();
    let mut rng = Rng::new(seed);
    let a = RandomBsr::<T>::new(&mut rng, 12, 10, block, 0.3);
    let host = BsrMatrix::from_bsr(&cpu, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    let matrix = host.copy_to(gpu).unwrap();
    assert_eq!(matrix.device(), Device::Cuda(0));
    let (m, k) = if transpose { (a.cols, a.rows) } else { (a.rows, a.cols) };
    let n = 40;
    let b: Vec<T> = (0..k * n).map(|_| T::from_f64(rng.value())).collect();
    let d_b = DeviceBuffer::from_host(Device::Cuda(0), &b).unwrap();
    // Poisoned: every element the multiply misses stays NaN.
    let mut d_c = DeviceBuffer::from_host(Device::Cuda(0), &vec![T::from_f64(f64::NAN); m * n]).unwrap();
    let options = MatmulOptions::new().op(if transpose { Op::Transpose } else { Op::None });
    matmul_into(gpu, &matrix, d_b.view(k, n, n, Layout::RowMajor).unwrap(), d_c.view_mut(m, n, n, Layout::RowMajor).unwrap(), &options).unwrap();
    gpu.synchronize().unwrap();
    let c = d_c.to_vec().unwrap();
    let want = reference(&a.dense_f64(), a.rows, a.cols, transpose, |p, j| b[p * n + j].to_f64(), n, 1.0, 0.0, |_, _| 0.0, None, bsrmm::Activation::None);
    check::<T>(&format!("gpu {:?} block {block:?} transpose {transpose}", T::DTYPE), &want, |i, j| c[i * n + j]);
    assert!(!gpu.last_variant().is_empty());
}

#[test]
fn gpu_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_matches_reference") else { return };
    for (i, block) in [(16, 16), (32, 32), (64, 64)].into_iter().enumerate() {
        for transpose in [false, true] {
            let seed = 900 + i as u64 * 2 + transpose as u64;
            gpu_case::<f32>(&gpu, block, transpose, seed);
            gpu_case::<f16>(&gpu, block, transpose, seed);
            gpu_case::<bf16>(&gpu, block, transpose, seed);
        }
    }
}

#[test]
fn device_buffers_without_cuda_are_no_device() {
    if bsrmm::cuda_compiled() && bsrmm::cuda_device_count().is_ok_and(|n| n > 0) {
        eprintln!("SKIP device_buffers_without_cuda_are_no_device: a CUDA device is present");
        return;
    }
    let err = DeviceBuffer::<f32>::new(Device::Cuda(0), 16).unwrap_err();
    assert!(matches!(err.code(), "BSRMM_STATUS_NO_DEVICE" | "BSRMM_STATUS_CUDA_ERROR"), "{err}");
    assert_eq!(DeviceBuffer::<f32>::new(Device::Cpu, 16).unwrap_err().code(), "BSRMM_STATUS_INVALID_ARGUMENT");
}
