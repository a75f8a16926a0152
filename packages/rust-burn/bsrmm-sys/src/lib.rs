//! Native bindings to the bsrmm C++/CUDA core, through a [`cxx`] bridge over the core's C++
//! wrapper (`bsrmm.hpp`).
//!
//! This crate is the one place the core is built and linked (`links = "bsrmm"`). Use the safe
//! `bsrmm` crate instead of calling these functions directly.
//!
//! The bridge mirrors the C ABI (`bsrmm.h`) closely: enums travel as their C integer values,
//! pointers as addresses (`usize`), and every failing call returns `Err(cxx::Exception)` whose
//! message is `"<status name>\x1f<core message>"`; [`split_error`] takes it apart.
//!
//! # Build
//!
//! `build.rs` builds `packages/core-cuda` with CMake (CUDA kernels when `nvcc` is found through
//! `CUDACXX` or `PATH`, CPU-only otherwise), or uses a prebuilt install named by
//! `BSRMM_CORE_PREFIX`. The library is linked statically, together with what the core's exported
//! CMake config says it needs (e.g. the static CUDA runtime).

pub use cxx;

#[cxx::bridge(namespace = "bsrmm_sys")]
#[allow(missing_docs)]
pub mod ffi {
    /// `bsrmm_device`: `kind` is a `bsrmm_device_type` value.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    struct Device {
        kind: i32,
        ordinal: i32,
    }

    /// `bsrmm_dense`: `data` is the address of element (0, 0).
    #[derive(Debug, Clone, Copy)]
    struct Dense {
        data: usize,
        rows: i64,
        cols: i64,
        ld: i64,
        layout: i32,
        dtype: i32,
        device: Device,
    }

    /// `bsrmm_bsr_desc`: the three arrays by address.
    #[derive(Debug, Clone, Copy)]
    struct BsrDesc {
        rows: i64,
        cols: i64,
        block_height: i32,
        block_width: i32,
        nnzb: i64,
        row_ptr: usize,
        col_idx: usize,
        index_type: i32,
        values: usize,
        dtype: i32,
        device: Device,
    }

    /// `bsrmm_matrix_info`.
    #[derive(Debug, Clone, Copy)]
    struct MatrixInfo {
        rows: i64,
        cols: i64,
        block_height: i32,
        block_width: i32,
        nnzb: i64,
        dtype: i32,
        device: Device,
    }

    /// `bsrmm_scales` without `struct_size` (the shim fills it in): `kind` is a
    /// `bsrmm_scale_kind`, `data` the address of `count` f32 on `device`.
    #[derive(Debug, Clone, Copy)]
    struct Scales {
        kind: i32,
        data: usize,
        count: i64,
        device: Device,
    }

    /// What `bsrmm_matrix_export_scales` reports besides the values.
    #[derive(Debug, Clone, Copy)]
    struct ScalesInfo {
        kind: i32,
        count: i64,
    }

    /// `bsrmm_matmul_options` without `struct_size` (the shim fills it in): `op_a` is a
    /// `bsrmm_op`, `bias` an address or 0, `activation` a `bsrmm_activation`; `b_scales` is
    /// passed only when `has_b_scales` (cxx structs hold no Option).
    #[derive(Debug, Clone, Copy)]
    struct MatmulOptions {
        op_a: i32,
        alpha: f64,
        beta: f64,
        bias: usize,
        activation: i32,
        has_b_scales: bool,
        b_scales: Scales,
    }

    /// `bsrmm_sddmm_options` without `struct_size` (the shim fills it in).
    #[derive(Debug, Clone, Copy)]
    struct SddmmOptions {
        alpha: f64,
        beta: f64,
    }

    unsafe extern "C++" {
        include!("bsrmm-sys/shim/bsrmm_shim.hpp");

        /// `bsrmm::Context`: a device, a stream, a tuner and a workspace.
        type Context;
        /// `bsrmm::Matrix`: a validated BSR matrix on one device.
        type Matrix;

        fn version() -> String;
        fn status_name(status: i32) -> String;
        fn cuda_compiled() -> bool;
        fn cuda_device_count() -> Result<i32>;

        fn context_new(device: &Device) -> Result<UniquePtr<Context>>;
        fn context_device(ctx: &Context) -> Result<Device>;
        /// # Safety
        /// `stream` must be a live `cudaStream_t` of the context's device (or 0 for the legacy
        /// default stream) for as long as the context uses it.
        unsafe fn context_set_stream(ctx: Pin<&mut Context>, stream: usize) -> Result<()>;
        fn context_stream(ctx: &Context) -> Result<usize>;
        fn context_set_num_threads(ctx: Pin<&mut Context>, threads: i32) -> Result<()>;
        fn context_set_f32_mode(ctx: Pin<&mut Context>, mode: i32) -> Result<()>;
        fn context_set_tuning_mode(ctx: Pin<&mut Context>, mode: i32) -> Result<()>;
        fn context_set_variant(ctx: Pin<&mut Context>, name: &str) -> Result<()>;
        fn context_last_variant(ctx: &Context) -> String;
        fn context_synchronize(ctx: Pin<&mut Context>) -> Result<()>;

        /// # Safety
        /// The descriptor's arrays must be readable for the sizes it states, on its device.
        unsafe fn matrix_new(
            ctx: Pin<&mut Context>,
            desc: &BsrDesc,
            flags: u32,
        ) -> Result<UniquePtr<Matrix>>;
        /// # Safety
        /// The descriptor's arrays and the scales must be readable for the sizes they state, on
        /// their devices.
        unsafe fn matrix_new_scaled(
            ctx: Pin<&mut Context>,
            desc: &BsrDesc,
            scales: &Scales,
            flags: u32,
        ) -> Result<UniquePtr<Matrix>>;
        /// # Safety
        /// A non-zero `data` must be writable host memory for the matrix's scale count (call
        /// with 0 first to learn it).
        unsafe fn matrix_export_scales(matrix: &Matrix, data: usize) -> Result<ScalesInfo>;
        /// # Safety
        /// `dense` must describe readable memory on its device.
        unsafe fn matrix_from_dense(
            ctx: Pin<&mut Context>,
            dense: &Dense,
            block_height: i32,
            block_width: i32,
        ) -> Result<UniquePtr<Matrix>>;
        fn matrix_copy_to(ctx: Pin<&mut Context>, matrix: &Matrix) -> Result<UniquePtr<Matrix>>;
        /// # Safety
        /// `values` must be readable for the matrix's value count on `values_device`; with the
        /// borrow flag it must stay alive and unchanged while the new matrix lives.
        unsafe fn matrix_with_values(
            ctx: Pin<&mut Context>,
            like: &Matrix,
            values: usize,
            values_device: &Device,
            flags: u32,
        ) -> Result<UniquePtr<Matrix>>;
        fn matrix_info(matrix: &Matrix) -> Result<MatrixInfo>;
        /// # Safety
        /// Each non-zero address must be writable host memory for its array's full length.
        unsafe fn matrix_export(
            matrix: &Matrix,
            index_type: i32,
            row_ptr: usize,
            col_idx: usize,
            values: usize,
        ) -> Result<()>;
        /// # Safety
        /// `out` must describe writable memory on the context's device.
        unsafe fn matrix_to_dense(ctx: Pin<&mut Context>, matrix: &Matrix, out: &Dense)
        -> Result<()>;

        /// # Safety
        /// `b` must be readable and `c` (and a non-zero bias) readable and writable for the shapes
        /// they state, on the context's device, until the context's queued work is done.
        unsafe fn matmul(
            ctx: Pin<&mut Context>,
            a: &Matrix,
            b: &Dense,
            c: &Dense,
            options: &MatmulOptions,
        ) -> Result<()>;

        /// # Safety
        /// `x` and `y` must be readable and `values` readable and writable for the shapes they
        /// state, on the context's device, until the context's queued work is done; `values`
        /// must not overlap `x` or `y`.
        unsafe fn sddmm(
            ctx: Pin<&mut Context>,
            pattern: &Matrix,
            x: &Dense,
            y: &Dense,
            values: &Dense,
            options: &SddmmOptions,
        ) -> Result<()>;

        fn variant_count() -> i32;
        fn variant_name(index: i32) -> String;
        /// True for an SDDMM variant (bsrmm_variant_get_kind), false for a matmul one.
        fn variant_is_sddmm(index: i32) -> Result<bool>;
    }
}

/// The separator the shim puts between the status name and the core's message.
pub const ERROR_SEPARATOR: char = '\x1f';

/// Splits a bridge error message into (status name, message). A message without the separator
/// (which the shim never produces) is reported as an internal error.
pub fn split_error(what: &str) -> (&str, &str) {
    match what.split_once(ERROR_SEPARATOR) {
        Some((code, message)) => (code, message),
        None => ("BSRMM_STATUS_INTERNAL", what),
    }
}

// The core documents that any call may come from several threads on the same handles, except
// destruction (packages/core-cuda/README.md, "Thread safety"); UniquePtr ownership makes
// destruction exclusive. The safe crate still serialises calls on one context (Pin<&mut>).
unsafe impl Send for ffi::Context {}
unsafe impl Send for ffi::Matrix {}
unsafe impl Sync for ffi::Matrix {}
