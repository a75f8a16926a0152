//! Element types across the JS boundary: JS hands over raw bytes plus a dtype name; results go
//! back as the matching TypedArray (f16 and bf16 as Uint16Array bits).

use std::borrow::Cow;

use bsrmm::{bf16, f16, DType, Element, F8E4M3, F8E5M2};
use napi::bindgen_prelude::{Either4, Float32Array, Float64Array, Uint16Array, Uint8Array};

use crate::error::{invalid, to_napi};

/// Runs `$body` with the type alias `$t` set to the element type of `$dtype` (a `DType`): the
/// compute dtypes. An fp8 dtype returns an error from the enclosing function: fp8 matrices are
/// made with their scales (`fromBsrScaled`), and fp8 operands are never tensors or C.
macro_rules! with_dtype {
    ($dtype:expr, |$t:ident| $body:expr) => {
        match $dtype {
            fp8 @ (bsrmm::DType::F8E4M3 | bsrmm::DType::F8E5M2) => {
                return Err($crate::error::invalid(format!(
                    "dtype {}: an fp8 operand is A's values with scales or B with bScales",
                    fp8.name()
                )))
            }
            bsrmm::DType::F32 => {
                type $t = f32;
                $body
            }
            bsrmm::DType::F64 => {
                type $t = f64;
                $body
            }
            bsrmm::DType::F16 => {
                type $t = bsrmm::f16;
                $body
            }
            bsrmm::DType::BF16 => {
                type $t = bsrmm::bf16;
                $body
            }
        }
    };
}
pub(crate) use with_dtype;

pub fn parse(name: &str) -> napi::Result<DType> {
    match name {
        "f32" => Ok(DType::F32),
        "f64" => Ok(DType::F64),
        "f16" => Ok(DType::F16),
        "bf16" => Ok(DType::BF16),
        other => Err(invalid(format!("dtype {other:?}: expected \"f32\", \"f64\", \"f16\" or \"bf16\""))),
    }
}

/// An fp8 dtype by its JS name (torch's and Python's: "float8_e4m3", "float8_e5m2").
pub fn parse_fp8(what: &str, name: &str) -> napi::Result<DType> {
    match name {
        "float8_e4m3" => Ok(DType::F8E4M3),
        "float8_e5m2" => Ok(DType::F8E5M2),
        other => Err(invalid(format!("{what} {other:?}: expected \"float8_e4m3\" or \"float8_e5m2\""))),
    }
}

/// A dtype's name in JS: the Rust crate's, except fp8, which JS names as torch and Python do.
pub fn js_name(dtype: DType) -> &'static str {
    match dtype {
        DType::F8E4M3 => "float8_e4m3",
        DType::F8E5M2 => "float8_e5m2",
        other => other.name(),
    }
}

/// Copies `bytes` into a vector of `T` (every supported T is plain old data: any bit pattern is
/// a value). The copy also decouples the data from the JS buffer, which JS may change while a
/// multiply runs on another thread. One pass: the vector is not zero-filled first.
pub fn to_vec<T: Element>(what: &str, bytes: &[u8]) -> napi::Result<Vec<T>> {
    let size = std::mem::size_of::<T>();
    if bytes.len() % size != 0 {
        return Err(invalid(format!("{what}: {} bytes is not a whole number of {}-byte elements", bytes.len(), size)));
    }
    let len = bytes.len() / size;
    let mut out = reserve::<T>(what, len)?;
    // SAFETY: `out` has room for len elements, exactly bytes.len() bytes, which this copy fills
    // before set_len; T is plain old data (f32, f64, f16, bf16, fp8 bytes).
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), out.as_mut_ptr().cast::<u8>(), bytes.len());
        out.set_len(len);
    }
    Ok(out)
}

/// `bytes` as elements of `T`: in place where they are aligned for T (a TypedArray's storage
/// always is; a copy made by `copy_bytes` is, from the allocator), else copied by `to_vec`.
pub fn elements<'a, T: Element>(what: &str, bytes: &'a [u8]) -> napi::Result<Cow<'a, [T]>> {
    let size = std::mem::size_of::<T>();
    if bytes.len() % size == 0 && bytes.as_ptr().align_offset(std::mem::align_of::<T>()) == 0 {
        // SAFETY: aligned for T and a whole number of T; T is plain old data (every bit pattern a
        // value); the slice borrows `bytes` for its lifetime.
        return Ok(Cow::Borrowed(unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<T>(), bytes.len() / size) }));
    }
    to_vec(what, bytes).map(Cow::Owned)
}

/// A copy of a JS buffer's bytes, allocated fallibly (a buffer JS could hold may still not fit
/// twice), in one pass.
pub fn copy_bytes(what: &str, bytes: &[u8]) -> napi::Result<Vec<u8>> {
    let mut out = reserve::<u8>(what, bytes.len())?;
    out.extend_from_slice(bytes);
    Ok(out)
}

/// An empty vector with room for `len` elements, or OUT_OF_MEMORY naming `what`.
fn reserve<T>(what: &str, len: usize) -> napi::Result<Vec<T>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len).map_err(|_| {
        to_napi(bsrmm::Error::new(
            bsrmm::Status::OutOfMemory,
            format!("{what}: allocating {len} elements of {} bytes failed", std::mem::size_of::<T>()),
        ))
    })?;
    Ok(out)
}

/// A dense result on its way to JS.
pub enum HostArray {
    F32(Vec<f32>),
    F64(Vec<f64>),
    F16(Vec<f16>),
    BF16(Vec<bf16>),
    /// fp8 values as their bytes (an fp8 matrix's export).
    Fp8(Vec<u8>),
}

/// What JS receives: Float32Array, Float64Array, Uint16Array (f16 / bf16 bits) or Uint8Array
/// (fp8 bytes).
pub type JsArray = Either4<Float32Array, Float64Array, Uint16Array, Uint8Array>;

impl HostArray {
    pub fn into_js(self) -> JsArray {
        match self {
            HostArray::F32(v) => Either4::A(Float32Array::new(v)),
            HostArray::F64(v) => Either4::B(Float64Array::new(v)),
            HostArray::F16(v) => Either4::C(Uint16Array::new(v.into_iter().map(f16::to_bits).collect())),
            HostArray::BF16(v) => Either4::C(Uint16Array::new(v.into_iter().map(bf16::to_bits).collect())),
            HostArray::Fp8(v) => Either4::D(Uint8Array::new(v)),
        }
    }
}

/// Per-dtype dispatch for generic code: `T` to its HostArray variant.
pub trait JsElement: Element {
    fn wrap(values: Vec<Self>) -> HostArray;
}

impl JsElement for f32 {
    fn wrap(values: Vec<Self>) -> HostArray {
        HostArray::F32(values)
    }
}
impl JsElement for f64 {
    fn wrap(values: Vec<Self>) -> HostArray {
        HostArray::F64(values)
    }
}
impl JsElement for f16 {
    fn wrap(values: Vec<Self>) -> HostArray {
        HostArray::F16(values)
    }
}
impl JsElement for bf16 {
    fn wrap(values: Vec<Self>) -> HostArray {
        HostArray::BF16(values)
    }
}
impl JsElement for F8E4M3 {
    fn wrap(values: Vec<Self>) -> HostArray {
        HostArray::Fp8(values.into_iter().map(|v| v.to_bits()).collect())
    }
}
impl JsElement for F8E5M2 {
    fn wrap(values: Vec<Self>) -> HostArray {
        HostArray::Fp8(values.into_iter().map(|v| v.to_bits()).collect())
    }
}
