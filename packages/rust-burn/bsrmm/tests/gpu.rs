//! GPU multiplies through raw device pointers. Skips (with the reason) where bsrmm reports no
//! CUDA device or was built without CUDA; runs on the GPU machines.
//!
//! The device buffers come from the CUDA runtime the core links statically, which exists only
//! in CUDA builds (cfg `bsrmm_cuda`, set by build.rs from bsrmm-sys's metadata).
#![cfg_attr(not(bsrmm_cuda), allow(dead_code, unused_imports))]

mod common;

use bsrmm::{matmul_into, BsrMatrix, Context, DenseMut, DenseRef, Device, Layout, MatmulOptions};
use common::{check, reference, RandomBsr, Rng};

/// The CUDA runtime calls the test needs, from the static cudart the core links.
#[cfg(bsrmm_cuda)]
mod cudart {
    use std::ffi::c_void;
    unsafe extern "C" {
        pub fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> i32;
        pub fn cudaFree(ptr: *mut c_void) -> i32;
        pub fn cudaMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: i32) -> i32;
    }
    pub const HOST_TO_DEVICE: i32 = 1;
    pub const DEVICE_TO_HOST: i32 = 2;
}

fn gpu_or_skip(test: &str) -> Option<Context> {
    if cfg!(not(bsrmm_cuda)) {
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

#[cfg(bsrmm_cuda)]
struct DeviceBuffer<T> {
    ptr: *mut T,
    len: usize,
}

#[cfg(bsrmm_cuda)]
impl<T: Copy> DeviceBuffer<T> {
    fn from_host(data: &[T]) -> Self {
        let bytes = std::mem::size_of_val(data);
        let mut ptr = std::ptr::null_mut();
        // SAFETY: plain cudart calls on a buffer of `bytes` bytes.
        unsafe {
            assert_eq!(cudart::cudaMalloc(&mut ptr, bytes.max(1)), 0);
            assert_eq!(cudart::cudaMemcpy(ptr, data.as_ptr().cast(), bytes, cudart::HOST_TO_DEVICE), 0);
        }
        DeviceBuffer { ptr: ptr.cast(), len: data.len() }
    }
    fn to_host(&self, out: &mut [T]) {
        assert_eq!(out.len(), self.len);
        // SAFETY: the buffer holds len elements; cudaMemcpy synchronises with the default stream.
        unsafe {
            assert_eq!(cudart::cudaMemcpy(out.as_mut_ptr().cast(), self.ptr.cast(), std::mem::size_of_val(out), cudart::DEVICE_TO_HOST), 0);
        }
    }
}

#[cfg(bsrmm_cuda)]
impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cudaMalloc above.
        unsafe { cudart::cudaFree(self.ptr.cast()) };
    }
}

#[test]
fn gpu_f32_matches_reference() {
    let Some(gpu) = gpu_or_skip("gpu_f32_matches_reference") else { return };
    gpu_f32(gpu);
}

#[cfg(not(bsrmm_cuda))]
fn gpu_f32(_: Context) {}

#[cfg(bsrmm_cuda)]
fn gpu_f32(gpu: Context) {
    let cpu = Context::cpu().unwrap();
    let mut rng = Rng::new(9);
    let a = RandomBsr::<f32>::new(&mut rng, 16, 12, (16, 16), 0.3);
    let host = BsrMatrix::from_bsr(&cpu, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    let matrix = host.copy_to(&gpu).unwrap();
    assert_eq!(matrix.device(), Device::Cuda(0));
    let n = 48;
    let b: Vec<f32> = (0..a.cols * n).map(|_| rng.value() as f32).collect();
    let d_b = DeviceBuffer::from_host(&b);
    let d_c = DeviceBuffer::from_host(&vec![f32::NAN; a.rows * n]);
    // SAFETY: both buffers hold the full matrices and outlive the synchronised multiply.
    let (b_view, c_view) = unsafe {
        (
            DenseRef::from_raw_parts(d_b.ptr, a.cols, n, n, Layout::RowMajor, Device::Cuda(0)).unwrap(),
            DenseMut::from_raw_parts(d_c.ptr, a.rows, n, n, Layout::RowMajor, Device::Cuda(0)).unwrap(),
        )
    };
    matmul_into(&gpu, &matrix, b_view, c_view, &MatmulOptions::new()).unwrap();
    gpu.synchronize().unwrap();
    let mut c = vec![0f32; a.rows * n];
    d_c.to_host(&mut c);
    let want = reference(&a.dense_f64(), a.rows, a.cols, false, |p, j| b[p * n + j] as f64, n, 1.0, 0.0, |_, _| 0.0, None, bsrmm::Activation::None);
    check::<f32>("gpu f32", &want, |i, j| c[i * n + j]);
    assert!(!gpu.last_variant().is_empty());
}
