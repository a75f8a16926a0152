//! Bad input is an `Err` with the C status name and a message naming the argument; never a
//! panic or a crash.

use bsrmm::{matmul, matmul_into, BsrMatrix, Context, Dense, DenseMut, DenseRef, Device, Layout, MatmulOptions, Status};

fn ctx() -> Context {
    Context::cpu().unwrap()
}

fn assert_invalid<T: std::fmt::Debug>(result: bsrmm::Result<T>, needle: &str) {
    let err = result.expect_err("bad input must be rejected");
    assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT", "{err}");
    assert_eq!(err.status(), Status::InvalidArgument);
    assert!(err.message().contains(needle), "message {:?} should mention {needle:?}", err.message());
    assert!(err.to_string().starts_with("BSRMM_STATUS_INVALID_ARGUMENT: "));
}

#[test]
fn structure_rules_come_from_the_core() {
    let c = ctx();
    let v = [0f32; 8];
    // col_idx out of range
    assert_invalid(BsrMatrix::from_bsr(&c, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 2], &v, Default::default()), "col_idx");
    // row_ptr not monotone
    assert_invalid(BsrMatrix::from_bsr(&c, 4, 4, (2, 2), &[0i32, 2, 1], &[0, 1], &v, Default::default()), "row_ptr");
    // dims not divisible by the block shape
    assert_invalid(BsrMatrix::from_bsr(&c, 5, 4, (2, 2), &[0i32, 1, 2], &[0, 1], &v, Default::default()), "");
    // duplicate column in a row
    assert_invalid(BsrMatrix::from_bsr(&c, 2, 4, (2, 2), &[0i32, 2], &[1, 1], &v, Default::default()), "col_idx");
}

#[test]
fn slice_lengths_are_checked_before_the_core_reads() {
    let c = ctx();
    assert_invalid(BsrMatrix::<f32>::from_bsr(&c, 4, 4, (2, 2), &[0i32, 1], &[0], &[0.; 4], Default::default()), "row_ptr");
    assert_invalid(BsrMatrix::<f32>::from_bsr(&c, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 1], &[0.; 7], Default::default()), "values");
    assert_invalid(BsrMatrix::<f32>::from_bsr(&c, 4, 4, (2, 2), &[] as &[i32], &[], &[], Default::default()), "row_ptr");
    assert_invalid(DenseRef::new(&[0f32; 5], 2, 3, 3, Layout::RowMajor), "needs 6");
    assert_invalid(DenseRef::new(&[0f32; 6], 2, 3, 2, Layout::RowMajor), "ld");
    assert_invalid(DenseMut::new(&mut [0f64; 5], 3, 2, 3, Layout::ColMajor), "needs 6");
    assert_invalid(Dense::<f32>::from_vec(vec![0.; 5], 2, 3, Layout::RowMajor), "5 elements");
}

#[test]
fn multiply_shapes_and_devices_must_agree() {
    let c = ctx();
    let a = BsrMatrix::<f32>::from_bsr(&c, 4, 6, (2, 3), &[0i32, 1, 2], &[1, 0], &[1.; 12], Default::default()).unwrap();
    let b = vec![1f32; 5 * 2];
    // B has 5 rows, A has 6 columns.
    assert_invalid(matmul(&c, &a, DenseRef::packed(&b, 5, 2, Layout::RowMajor).unwrap(), Layout::RowMajor, &MatmulOptions::new()), "");
    // C of the wrong shape.
    let b = vec![1f32; 6 * 2];
    let mut out = vec![0f32; 3 * 2];
    assert_invalid(
        matmul_into(&c, &a, DenseRef::packed(&b, 6, 2, Layout::RowMajor).unwrap(), DenseMut::packed(&mut out, 3, 2, Layout::RowMajor).unwrap(), &MatmulOptions::new()),
        "",
    );
    // A bias of the wrong length.
    let bias = [0f32; 3];
    assert_invalid(
        matmul(&c, &a, DenseRef::packed(&b, 6, 2, Layout::RowMajor).unwrap(), Layout::RowMajor, &MatmulOptions::new().bias(DenseRef::vector(&bias))),
        "bias",
    );
    // An operand that claims to live on a GPU, handed to a CPU context.
    // SAFETY: the core rejects the device before touching the pointer.
    let fake = unsafe { DenseRef::<f32>::from_raw_parts(b.as_ptr(), 6, 2, 2, Layout::RowMajor, Device::Cuda(0)) }.unwrap();
    assert_invalid(matmul(&c, &a, fake, Layout::RowMajor, &MatmulOptions::new()), "");
}

#[test]
fn context_settings_are_checked() {
    let c = ctx();
    assert!(c.set_variant(Some("no_such_variant")).is_err());
    c.set_variant(None).unwrap();
    c.set_threads(1).unwrap();
    c.set_f32_mode(bsrmm::F32Mode::Tf32).unwrap();
    c.set_tuning_mode(bsrmm::TuningMode::Off).unwrap();
    c.synchronize().unwrap();
}

#[test]
fn cuda_without_a_device_is_no_device() {
    match bsrmm::cuda_device_count() {
        Ok(n) if n > 0 => eprintln!("SKIP cuda_without_a_device_is_no_device: {n} CUDA device(s) present"),
        Ok(_) => unreachable!("the core reports no devices as an error"),
        Err(e) => {
            assert_eq!(e.code(), "BSRMM_STATUS_NO_DEVICE", "{e}");
            let err = Context::new(Device::Cuda(0)).unwrap_err();
            assert_eq!(err.code(), "BSRMM_STATUS_NO_DEVICE");
            assert!(!err.message().is_empty());
        }
    }
    // No machine has this many GPUs.
    assert!(Context::new(Device::Cuda(4096)).is_err());
}

/// Sizes no machine can allocate are OUT_OF_MEMORY errors naming what was asked for, never an
/// abort ("memory allocation of ... bytes failed") or a wrapped size.
#[test]
fn unallocatable_sizes_are_out_of_memory_errors() {
    let oom = |err: bsrmm::Error, needle: &str| {
        assert_eq!(err.status(), Status::OutOfMemory, "{err}");
        assert!(err.message().contains(needle), "message {:?} should mention {needle:?}", err.message());
    };
    // 2^52 f32 elements: 16 PiB, beyond any address space.
    oom(Dense::<f32>::try_zeros(1 << 26, 1 << 26, Layout::RowMajor).unwrap_err(), "Dense::zeros");
    // rows * cols overflows usize.
    oom(Dense::<f32>::try_zeros(usize::MAX / 2, 3, Layout::ColMajor).unwrap_err(), "more elements");
    oom(Dense::<f64>::try_from_fn(1 << 40, 1 << 20, Layout::RowMajor, |_, _| 0.0).unwrap_err(), "Dense::zeros");

    // Valid matrices of 2^30 rows (2^22 block rows of height 256, the largest block; none
    // stored) whose products and dense forms exceed a 47-bit address space (128 TiB), whatever
    // the machine's memory or overcommit policy: A (2^30 x 1) times a 1 x 2^16 B is 256 TiB.
    let c = ctx();
    let row_ptr = vec![0i32; (1 << 22) + 1];
    let a = BsrMatrix::<f32>::from_bsr(&c, 1 << 30, 1, (256, 1), &row_ptr, &[], &[], Default::default()).unwrap();
    let b = vec![1f32; 1 << 16];
    let b = DenseRef::packed(&b, 1, 1 << 16, Layout::RowMajor).unwrap();
    oom(matmul(&c, &a, b, Layout::RowMajor, &MatmulOptions::new()).unwrap_err(), "the result C (1073741824x65536)");
    // A 2^30 x 2^18 matrix's dense form is 1 PiB.
    let a = BsrMatrix::<f32>::from_bsr(&c, 1 << 30, 1 << 18, (256, 256), &row_ptr, &[], &[], Default::default()).unwrap();
    oom(a.to_dense(Layout::RowMajor).unwrap_err(), "to_dense");
}

#[test]
#[should_panic(expected = "Dense::zeros: BSRMM_STATUS_OUT_OF_MEMORY")]
fn the_infallible_constructor_panics_instead_of_aborting() {
    Dense::<f32>::zeros(1 << 26, 1 << 26, Layout::RowMajor);
}
