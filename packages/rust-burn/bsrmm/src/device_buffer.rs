//! [`DeviceBuffer`]: a minimal owned CUDA allocation for dense operands, for callers that have
//! host data and want a GPU multiply (bindings, tests). Callers that already hold device memory
//! pass it with [`DenseRef::from_raw_parts`] instead.
//!
//! It uses the CUDA runtime the core links statically (CUDA builds only, cfg `bsrmm_cuda`); in
//! a CPU-only build every constructor returns `BSRMM_STATUS_NO_DEVICE`.

use std::marker::PhantomData;

use crate::dense::{DenseMut, DenseRef, Layout};
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};

/// `len` elements of `T` on one CUDA device. Dropping it frees the memory; `cudaFree` waits
/// for the device to go idle first, so GPU work still reading or writing it completes.
pub struct DeviceBuffer<T: Element> {
    ptr: *mut T,
    len: usize,
    ordinal: u32,
    _element: PhantomData<T>,
}

// SAFETY: the buffer owns its allocation, which has no thread affinity (the device is made
// current on every call); shared access only reads it through views.
unsafe impl<T: Element> Send for DeviceBuffer<T> {}
unsafe impl<T: Element> Sync for DeviceBuffer<T> {}

impl<T: Element> DeviceBuffer<T> {
    /// An allocation of `len` elements on `device` (contents unspecified).
    pub fn new(device: Device, len: usize) -> Result<Self> {
        let Device::Cuda(ordinal) = device else {
            return Err(Error::invalid_argument(format!("DeviceBuffer: device must be a CUDA device, got {device}")));
        };
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::invalid_argument(format!("DeviceBuffer: {len} elements overflow")))?;
        let ptr = cuda::malloc(ordinal, bytes)?;
        Ok(DeviceBuffer { ptr: ptr.cast(), len, ordinal, _element: PhantomData })
    }

    /// A copy of `data` on `device`.
    pub fn from_host(device: Device, data: &[T]) -> Result<Self> {
        let buffer = Self::new(device, data.len())?;
        // SAFETY: both ranges hold data.len() elements.
        unsafe { cuda::copy(buffer.ordinal, buffer.ptr.cast(), data.as_ptr().cast(), size_of_val(data), cuda::HOST_TO_DEVICE)? };
        Ok(buffer)
    }

    /// Copies the whole buffer into `out` (`out.len()` must equal `len()`). Waits for work on
    /// the legacy default stream; synchronise a context on another stream first.
    pub fn copy_to_host(&self, out: &mut [T]) -> Result<()> {
        if out.len() != self.len {
            return Err(Error::invalid_argument(format!(
                "copy_to_host: out has {} elements, the buffer {}",
                out.len(),
                self.len
            )));
        }
        // SAFETY: both ranges hold self.len elements.
        unsafe { cuda::copy(self.ordinal, out.as_mut_ptr().cast(), self.ptr.cast(), size_of_val(out), cuda::DEVICE_TO_HOST) }
    }

    /// The buffer's contents as a new vector.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = crate::dense::try_filled(self.len, T::default(), "DeviceBuffer::to_vec")?;
        self.copy_to_host(&mut out)?;
        Ok(out)
    }

    /// Elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device the memory is on.
    pub fn device(&self) -> Device {
        Device::Cuda(self.ordinal)
    }

    /// A `rows x cols` view of the buffer (checked against its length).
    pub fn view(&self, rows: usize, cols: usize, ld: usize, layout: Layout) -> Result<DenseRef<'_, T>> {
        self.check_span(rows, cols, ld, layout)?;
        // SAFETY: the view fits in the allocation (checked) and borrows the buffer.
        unsafe { DenseRef::from_raw_parts(self.ptr, rows, cols, ld, layout, self.device()) }
    }

    /// A writable `rows x cols` view of the buffer (checked against its length).
    pub fn view_mut(&mut self, rows: usize, cols: usize, ld: usize, layout: Layout) -> Result<DenseMut<'_, T>> {
        self.check_span(rows, cols, ld, layout)?;
        // SAFETY: the view fits in the allocation (checked) and borrows the buffer exclusively.
        unsafe { DenseMut::from_raw_parts(self.ptr, rows, cols, ld, layout, self.device()) }
    }

    fn check_span(&self, rows: usize, cols: usize, ld: usize, layout: Layout) -> Result<()> {
        let (major, minor) = if layout == Layout::RowMajor { (rows, cols) } else { (cols, rows) };
        let span = if major == 0 || minor == 0 { Some(0) } else { (major - 1).checked_mul(ld).and_then(|n| n.checked_add(minor)) };
        match span {
            Some(n) if n <= self.len && ld >= minor.max(1) => Ok(()),
            _ => Err(Error::invalid_argument(format!(
                "a {layout:?} {rows}x{cols} view with ld {ld} does not fit a buffer of {} elements",
                self.len
            ))),
        }
    }
}

impl<T: Element> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        cuda::free(self.ordinal, self.ptr.cast());
    }
}

impl<T: Element> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer").field("dtype", &T::DTYPE).field("len", &self.len).field("device", &self.device()).finish()
    }
}

#[cfg(bsrmm_cuda)]
mod cuda {
    //! The CUDA runtime calls, from the static cudart the core links.
    use std::ffi::{c_char, c_void, CStr};

    use crate::error::{Error, Result, Status};

    unsafe extern "C" {
        fn cudaSetDevice(device: i32) -> i32;
        fn cudaMalloc(ptr: *mut *mut c_void, size: usize) -> i32;
        fn cudaFree(ptr: *mut c_void) -> i32;
        fn cudaMemcpy(dst: *mut c_void, src: *const c_void, size: usize, kind: i32) -> i32;
        fn cudaGetErrorString(error: i32) -> *const c_char;
    }

    pub const HOST_TO_DEVICE: i32 = 1;
    pub const DEVICE_TO_HOST: i32 = 2;

    fn check(what: &str, code: i32) -> Result<()> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: cudaGetErrorString returns a static NUL-terminated string for any code.
        let text = unsafe { CStr::from_ptr(cudaGetErrorString(code)) }.to_string_lossy();
        Err(Error::new(Status::CudaError, format!("{what}: {text} (cudaError {code})")))
    }

    fn set_device(ordinal: u32) -> Result<()> {
        let ordinal = i32::try_from(ordinal).map_err(|_| Error::new(Status::NoDevice, format!("no CUDA device {ordinal}")))?;
        // SAFETY: a plain runtime call.
        check("cudaSetDevice", unsafe { cudaSetDevice(ordinal) })
    }

    pub fn malloc(ordinal: u32, bytes: usize) -> Result<*mut c_void> {
        set_device(ordinal)?;
        let mut ptr = std::ptr::null_mut();
        // SAFETY: cudaMalloc writes one pointer; a zero-byte request is made one byte.
        check("cudaMalloc", unsafe { cudaMalloc(&mut ptr, bytes.max(1)) })?;
        Ok(ptr)
    }

    /// # Safety
    /// `dst` and `src` must hold `bytes` bytes on the sides `kind` names.
    pub unsafe fn copy(ordinal: u32, dst: *mut c_void, src: *const c_void, bytes: usize, kind: i32) -> Result<()> {
        set_device(ordinal)?;
        check("cudaMemcpy", unsafe { cudaMemcpy(dst, src, bytes, kind) })
    }

    pub fn free(ordinal: u32, ptr: *mut c_void) {
        // Errors here have no one to go to (Drop); a failed free leaks, it cannot corrupt.
        let _ = set_device(ordinal);
        // SAFETY: ptr came from cudaMalloc on this device.
        unsafe { cudaFree(ptr) };
    }
}

#[cfg(not(bsrmm_cuda))]
mod cuda {
    //! A CPU-only core links no CUDA runtime: no buffer can be made.
    use std::ffi::c_void;

    use crate::error::{Error, Result, Status};

    pub const HOST_TO_DEVICE: i32 = 1;
    pub const DEVICE_TO_HOST: i32 = 2;

    pub fn malloc(_: u32, _: usize) -> Result<*mut c_void> {
        Err(Error::new(Status::NoDevice, "bsrmm was built without CUDA: no device memory"))
    }

    /// # Safety
    /// Never called: no buffer exists in a CPU-only build.
    pub unsafe fn copy(_: u32, _: *mut c_void, _: *const c_void, _: usize, _: i32) -> Result<()> {
        Err(Error::new(Status::NoDevice, "bsrmm was built without CUDA: no device memory"))
    }

    pub fn free(_: u32, _: *mut c_void) {}
}
