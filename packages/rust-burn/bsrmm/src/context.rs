//! [`Context`]: a device, a stream, a tuner and a workspace; every multiply runs in one.

use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard};

use bsrmm_sys::cxx::UniquePtr;

use crate::device::Device;
use crate::error::Result;

/// How `f32` operands use the tensor cores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum F32Mode {
    /// Full f32 products (the default).
    #[default]
    Exact,
    /// TF32 tensor cores: faster, relative error about 1e-3.
    Tf32,
}

/// When the autotuner measures kernel variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TuningMode {
    /// Built-in heuristics only.
    Off,
    /// A cached choice, or measure once and cache it (the default).
    #[default]
    Auto,
    /// Always measure and overwrite the cache entry.
    Force,
}

/// The execution context: a device, (for CUDA) a stream, a tuner and a workspace.
///
/// Cloning is cheap and shares the context. `Context` is `Send + Sync`: calls on one context
/// are serialised by an internal lock (on a CUDA context they only enqueue work, so the lock is
/// held briefly; on the CPU the multiply itself is multithreaded).
///
/// ```
/// let ctx = bsrmm::Context::cpu()?;
/// assert_eq!(ctx.device(), bsrmm::Device::Cpu);
/// ctx.set_threads(2)?;
/// # Ok::<(), bsrmm::Error>(())
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<Inner>,
}

pub(crate) struct Inner {
    handle: Mutex<UniquePtr<bsrmm_sys::ffi::Context>>,
    device: Device,
}

impl Context {
    /// A context on `device`. For `Device::Cuda(n)` this fails with `BSRMM_STATUS_NO_DEVICE`
    /// when CUDA is not compiled in or no such GPU (or driver) is present.
    pub fn new(device: Device) -> Result<Context> {
        let handle = bsrmm_sys::ffi::context_new(&device.to_c())?;
        let device = Device::from_c(bsrmm_sys::ffi::context_device(&handle)?);
        Ok(Context { inner: Arc::new(Inner { handle: Mutex::new(handle), device }) })
    }

    /// A CPU context.
    pub fn cpu() -> Result<Context> {
        Context::new(Device::Cpu)
    }

    /// The context's device.
    pub fn device(&self) -> Device {
        self.inner.device
    }

    /// Enqueue CUDA work on `stream` (a `cudaStream_t`; null for the legacy default stream).
    ///
    /// # Safety
    /// `stream` must be a live stream of this context's device for as long as the context uses
    /// it; the caller orders other work on that stream against bsrmm's.
    pub unsafe fn set_stream(&self, stream: *mut c_void) -> Result<()> {
        // SAFETY: the caller guarantees the stream's validity (this function's contract).
        unsafe { bsrmm_sys::ffi::context_set_stream(self.lock().pin_mut(), stream as usize)? };
        Ok(())
    }

    /// The `cudaStream_t` work is enqueued on (null: the legacy default stream).
    pub fn stream(&self) -> Result<*mut c_void> {
        Ok(bsrmm_sys::ffi::context_stream(&self.lock())? as *mut c_void)
    }

    /// CPU worker threads; 0 = one per hardware thread (the default).
    pub fn set_threads(&self, threads: usize) -> Result<()> {
        let threads = i32::try_from(threads).map_err(|_| {
            crate::Error::invalid_argument(format!("threads = {threads} does not fit in 32 bits"))
        })?;
        bsrmm_sys::ffi::context_set_num_threads(self.lock().pin_mut(), threads)?;
        Ok(())
    }

    /// How f32 operands use the tensor cores (ignored for other dtypes).
    pub fn set_f32_mode(&self, mode: F32Mode) -> Result<()> {
        bsrmm_sys::ffi::context_set_f32_mode(self.lock().pin_mut(), mode as i32)?;
        Ok(())
    }

    /// When the autotuner measures.
    pub fn set_tuning_mode(&self, mode: TuningMode) -> Result<()> {
        bsrmm_sys::ffi::context_set_tuning_mode(self.lock().pin_mut(), mode as i32)?;
        Ok(())
    }

    /// Force a kernel variant by name (see [`variants`](crate::variants)), or `None` to let the
    /// tuner choose.
    pub fn set_variant(&self, name: Option<&str>) -> Result<()> {
        bsrmm_sys::ffi::context_set_variant(self.lock().pin_mut(), name.unwrap_or(""))?;
        Ok(())
    }

    /// The variant the last successful multiply on this context ran ("" before any).
    pub fn last_variant(&self) -> String {
        bsrmm_sys::ffi::context_last_variant(&self.lock())
    }

    /// Blocks until the context's queued work is done (a no-op on the CPU).
    pub fn synchronize(&self) -> Result<()> {
        bsrmm_sys::ffi::context_synchronize(self.lock().pin_mut())?;
        Ok(())
    }

    /// Locks the native context. A panic while it was held cannot leave it half-changed (every
    /// native call completes or throws), so a poisoned lock is taken over.
    pub(crate) fn lock(&self) -> MutexGuard<'_, UniquePtr<bsrmm_sys::ffi::Context>> {
        self.inner.handle.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl std::fmt::Debug for Context {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context").field("device", &self.inner.device).finish()
    }
}
