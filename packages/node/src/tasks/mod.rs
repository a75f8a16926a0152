//! Work that runs off the JS main thread (napi AsyncTask), one file per task.
pub mod fp8_matmul;
pub mod in_place;
pub mod matmul;
pub mod matmul_into;
pub mod sddmm;
