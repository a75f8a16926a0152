//! The element types bsrmm multiplies, as a sealed trait over their Rust types.

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
}

impl DType {
    pub(crate) fn to_c(self) -> i32 {
        match self {
            DType::F32 => 0,
            DType::F16 => 1,
            DType::BF16 => 2,
            DType::F64 => 3,
        }
    }

    pub(crate) fn from_c(value: i32) -> Option<DType> {
        [DType::F32, DType::F16, DType::BF16, DType::F64].into_iter().find(|d| d.to_c() == value)
    }

    /// Lower-case name: "f32", "f16", "bf16", "f64".
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F64 => "f64",
        }
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F16 | DType::BF16 => 2,
            DType::F64 => 8,
        }
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type bsrmm can multiply: `f32`, `f64`, `half::f16`, `half::bf16`. Sealed: the core's
/// dtypes are fixed.
pub trait Element: sealed::Sealed + Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// The core's dtype for this type.
    const DTYPE: DType;
    /// The value as f64 (exact for every supported type).
    fn to_f64(self) -> f64;
    /// The nearest value of this type (round to nearest even).
    fn from_f64(value: f64) -> Self;
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
