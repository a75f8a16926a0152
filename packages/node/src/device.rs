//! Device names ("cpu", "cuda:N") and one shared context per device.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bsrmm::{Context, Device};

use crate::error::{invalid, IntoNapi};

/// "cpu", "cuda:<n>", or "cuda" for CUDA device 0 (as Python and PyTorch read it).
pub fn parse(name: &str) -> napi::Result<Device> {
    match name {
        "cpu" => return Ok(Device::Cpu),
        "cuda" => return Ok(Device::Cuda(0)),
        _ => {}
    }
    match name.strip_prefix("cuda:").map(str::parse::<u32>) {
        Some(Ok(ordinal)) => Ok(Device::Cuda(ordinal)),
        _ => Err(invalid(format!("device {name:?}: expected \"cpu\", \"cuda\" or \"cuda:<n>\""))),
    }
}

/// The context of `device`, made on first use and shared by every call (a context serialises
/// its own calls; the core's CPU backend is multithreaded inside one multiply).
pub fn context(device: Device) -> napi::Result<Context> {
    static CONTEXTS: OnceLock<Mutex<HashMap<Device, Context>>> = OnceLock::new();
    let mut contexts = CONTEXTS.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(ctx) = contexts.get(&device) {
        return Ok(ctx.clone());
    }
    let ctx = Context::new(device).napi()?;
    contexts.insert(device, ctx.clone());
    Ok(ctx)
}
