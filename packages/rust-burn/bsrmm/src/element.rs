//! The element types bsrmm multiplies, as a sealed trait over their Rust types.

use float8::{F8E4M3, F8E5M2};
use half::{bf16, f16};

/// Element types of the core (`bsrmm_dtype`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DType {
    /// 32-bit IEEE float.
    F32,
    /// 16-bit IEEE float (`half::f16`), fp32 accumulation.
    F16,
    /// bfloat16 (`half::bf16`), fp32 accumulation.
    BF16,
    /// 64-bit IEEE float (CPU backend and the generic CUDA kernel).
    F64,
    /// 8-bit float, OCP E4M3 (`float8::F8E4M3`, torch's `float8_e4m3fn`: max 448, no
    /// infinities): A's values and B of an fp8 multiply only, with fp32 scales.
    F8E4M3,
    /// 8-bit float, OCP E5M2 (`float8::F8E5M2`, torch's `float8_e5m2`: max 57344).
    F8E5M2,
}

impl DType {
    pub(crate) fn to_c(self) -> i32 {
        match self {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::BF16 => 2,
            DType::F64 => 3,
            DType::F8E4M3 => 4,
            DType::F8E5M2 => 5,
        }
    }

    pub(crate) fn from_c(value: i32) -> Option<DType> {
        [DType::F32, DType::F16, DType::BF16, DType::F64, DType::F8E4M3, DType::F8E5M2]
            .into_iter()
            .find(|d| d.to_c() == value)
    }

    /// Whether this is an 8-bit float (an operand that carries scales).
    pub fn is_fp8(self) -> bool {
        matches!(self, DType::F8E4M3 | DType::F8E5M2)
    }

    /// Lower-case name: "f32", "f16", "bf16", "f64", "f8e4m3", "f8e5m2".
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::F64 => 8,
            DType::F8E4M3 | DType::F8E5M2 => 1,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type bsrmm can multiply: `f32`, `f64`, `half::f16`, `half::bf16`, and the fp8 types
/// `float8::F8E4M3` / `F8E5M2` (see [`Fp8Element`]). Sealed: the core's dtypes are fixed.
pub trait Element: sealed::Sealed + Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// The core's dtype for this type.
    const DTYPE: DType;
    /// The value as f64 (exact for every supported type).
    fn to_f64(self) -> f64;
    /// The nearest value of this type (round to nearest even; fp8 saturates to its largest
    /// finite value).
    fn from_f64(value: f64) -> Self;
}

/// The fp8 element types, `float8::F8E4M3` and `float8::F8E5M2`: A's values of a matrix made
/// with scales ([`BsrMatrix::from_bsr_scaled`](crate::BsrMatrix::from_bsr_scaled)) and B of
/// [`matmul_fp8_into`](crate::matmul_fp8_into).
pub trait Fp8Element: Element {
    /// The largest finite value (448 for E4M3, 57344 for E5M2): the scale that maps a block's
    /// largest magnitude onto it loses no range.
    const MAX_FINITE: f64;
    /// Unit roundoff (2^-4 for E4M3's 3 mantissa bits, 2^-3 for E5M2's 2) of normal values.
    const UNIT_ROUNDOFF: f64;
}

macro_rules! element {
    ($t:ty, $dtype:expr, |$v:ident| $to:expr, |$w:ident| $from:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = $dtype;
            fn to_f64(self) -> f64 {
                let $v = self;
                $to
            }
            fn from_f64(value: f64) -> Self {
                let $w = value;
                $from
            }
        }
    };
}

element!(f32, DType::F32, |v| v as f64, |w| w as f32);
element!(f64, DType::F64, |v| v, |w| w);
element!(f16, DType::F16, |v| v.to_f64(), |w| f16::from_f64(w));
element!(bf16, DType::BF16, |v| v.to_f64(), |w| bf16::from_f64(w));
element!(F8E4M3, DType::F8E4M3, |v| F8E4M3::to_f64(&v), |w| F8E4M3::from_f64(w));
element!(F8E5M2, DType::F8E5M2, |v| F8E5M2::to_f64(&v), |w| F8E5M2::from_f64(w));

// float8's MAX constants are one code below the formats' largest finite values (0x7D = 416,
// 0x7A = 49152); its conversions saturate to the right ones (0x7E, 0x7B), so state them here.
impl Fp8Element for F8E4M3 {
    const MAX_FINITE: f64 = 448.0;
    const UNIT_ROUNDOFF: f64 = 0.0625;
}
impl Fp8Element for F8E5M2 {
    const MAX_FINITE: f64 = 57344.0;
    const UNIT_ROUNDOFF: f64 = 0.125;
}
/// Index types for BSR structure arrays: `i32` or `i64` (sealed).
pub trait Index: sealed::Sealed + Copy + Send + Sync + Default + std::fmt::Debug + 'static {
    /// The core's `bsrmm_index_type` value.
    #[doc(hidden)]
    const C_TYPE: i32;
    /// The value as i64.
    fn to_i64(self) -> i64;
}

impl sealed::Sealed for i32 {}
impl Index for i32 {
    const C_TYPE: i32 = 0;
    fn to_i64(self) -> i64 {
        self as i64
    }
}

impl sealed::Sealed for i64 {}
impl Index for i64 {
    const C_TYPE: i32 = 1;
    fn to_i64(self) -> i64 {
        self
    }
}
