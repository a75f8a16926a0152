//! fp8 across the JS boundary (issue 27): scale kinds by name, and fp8 bytes to and from f64
//! through the `float8` crate's conversions (round to nearest even, saturating), so JS can
//! quantise without a second implementation of the formats.

use bsrmm::{Element, ScaleKind, F8E4M3, F8E5M2};
use napi::bindgen_prelude::{Float64Array, Uint8Array};
use napi_derive::napi;

use crate::dtype;
use crate::error::invalid;

pub fn parse_scale_kind(name: &str) -> napi::Result<ScaleKind> {
    match name {
        "per-tensor" => Ok(ScaleKind::PerTensor),
        "per-block" => Ok(ScaleKind::PerBlock),
        "per-block-row" => Ok(ScaleKind::PerBlockRow),
        "per-column" => Ok(ScaleKind::PerColumn),
        other => Err(invalid(format!(
            "scale kind {other:?}: expected \"per-tensor\", \"per-block\", \"per-block-row\" or \"per-column\""
        ))),
    }
}

pub fn scale_kind_name(kind: ScaleKind) -> &'static str {
    match kind {
        ScaleKind::PerTensor => "per-tensor",
        ScaleKind::PerBlock => "per-block",
        ScaleKind::PerBlockRow => "per-block-row",
        ScaleKind::PerColumn => "per-column",
    }
}

/// Each value rounded to the nearest `dtype` value (saturating at its largest finite one), as
/// bytes.
#[napi]
pub fn fp8_encode(values: Float64Array, dtype: String) -> napi::Result<Uint8Array> {
    let encode: fn(f64) -> u8 = match dtype::parse_fp8("dtype", &dtype)? {
        bsrmm::DType::F8E4M3 => |v| F8E4M3::from_f64(v).to_bits(),
        _ => |v| F8E5M2::from_f64(v).to_bits(),
    };
    Ok(Uint8Array::new(values.iter().map(|&v| encode(v)).collect()))
}

/// The values `dtype` bytes stand for (exact in f64).
#[napi]
pub fn fp8_decode(bytes: Uint8Array, dtype: String) -> napi::Result<Float64Array> {
    let decode: fn(u8) -> f64 = match dtype::parse_fp8("dtype", &dtype)? {
        bsrmm::DType::F8E4M3 => |b| Element::to_f64(F8E4M3::from_bits(b)),
        _ => |b| Element::to_f64(F8E5M2::from_bits(b)),
    };
    Ok(Float64Array::new(bytes.iter().map(|&b| decode(b)).collect()))
}
