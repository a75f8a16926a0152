//! Where data lives and work runs.

use std::fmt;

/// A device: the host CPU or one CUDA GPU (by ordinal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Device {
    /// The host; the CPU backend runs here.
    #[default]
    Cpu,
    /// The CUDA device with this ordinal.
    Cuda(u32),
}

impl Device {
    pub(crate) fn to_c(self) -> bsrmm_sys::ffi::Device {
        match self {
            Device::Cpu => bsrmm_sys::ffi::Device { kind: 0, ordinal: 0 },
            // Ordinals past i32::MAX cannot exist; saturate so the core reports "no such device".
            Device::Cuda(n) => bsrmm_sys::ffi::Device { kind: 1, ordinal: i32::try_from(n).unwrap_or(i32::MAX) },
        }
    }

    pub(crate) fn from_c(d: bsrmm_sys::ffi::Device) -> Device {
        match d.kind {
            1 => Device::Cuda(d.ordinal.max(0) as u32),
            _ => Device::Cpu,
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Cpu => write!(f, "cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}
