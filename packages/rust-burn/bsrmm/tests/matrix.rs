//! Building matrices (arrays, dense), reading them back (export, to_dense), copies.

mod common;

use bsrmm::{f16, BsrMatrix, Context, CreateOptions, DenseRef, Device, Layout};
use common::{RandomBsr, Rng};

#[test]
fn from_bsr_round_trips_through_export_and_to_dense() {
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(1);
    let a = RandomBsr::<f32>::new(&mut rng, 5, 7, (3, 2), 0.4);
    let m = BsrMatrix::from_bsr(&ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    assert_eq!(m.shape(), (15, 14));
    assert_eq!(m.block_shape(), (3, 2));
    assert_eq!(m.nnzb(), a.col_idx.len());
    assert_eq!(m.nnz(), a.values.len());
    assert_eq!(m.device(), Device::Cpu);
    assert_eq!(m.dtype(), bsrmm::DType::F32);

    let parts = m.export::<i32>().unwrap();
    assert_eq!(parts.row_ptr, a.row_ptr);
    assert_eq!(parts.col_idx, a.col_idx);
    assert_eq!(parts.values, a.values);
    let parts64 = m.export::<i64>().unwrap();
    assert_eq!(parts64.col_idx, a.col_idx.iter().map(|&c| c as i64).collect::<Vec<_>>());

    let want = a.dense_f64();
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        let d = m.to_dense(layout).unwrap();
        for i in 0..a.rows {
            for j in 0..a.cols {
                assert_eq!(d.get(i, j) as f64, want[i * a.cols + j], "({i}, {j}) {layout:?}");
            }
        }
    }
}

#[test]
fn from_dense_keeps_nonzero_blocks_only() {
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(2);
    let a = RandomBsr::<f16>::new(&mut rng, 4, 6, (2, 2), 0.3);
    let dense: Vec<f16> = a.dense_f64().into_iter().map(f16::from_f64).collect();
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        let data: Vec<f16> = match layout {
            Layout::RowMajor => dense.clone(),
            Layout::ColMajor => (0..a.rows * a.cols).map(|x| dense[(x % a.rows) * a.cols + x / a.rows]).collect(),
        };
        let m = BsrMatrix::from_dense(&ctx, DenseRef::packed(&data, a.rows, a.cols, layout).unwrap(), a.block).unwrap();
        let parts = m.export::<i32>().unwrap();
        assert_eq!(parts.row_ptr, a.row_ptr, "{layout:?}");
        assert_eq!(parts.col_idx, a.col_idx, "{layout:?}");
        assert_eq!(parts.values, a.values, "{layout:?}");
    }
}

#[test]
fn sort_indices_on_request() {
    let ctx = Context::cpu().unwrap();
    let values: Vec<f64> = (1..=8).map(f64::from).collect();
    let unsorted = BsrMatrix::from_bsr(&ctx, 2, 8, (2, 2), &[0i64, 2], &[3, 1], &values, Default::default());
    assert_eq!(unsorted.unwrap_err().code(), "BSRMM_STATUS_INVALID_ARGUMENT");
    let m = BsrMatrix::from_bsr(&ctx, 2, 8, (2, 2), &[0i64, 2], &[3, 1], &values, CreateOptions { sort_indices: true }).unwrap();
    let parts = m.export::<i64>().unwrap();
    assert_eq!(parts.col_idx, vec![1, 3]);
    assert_eq!(parts.values, vec![5., 6., 7., 8., 1., 2., 3., 4.]);
}

#[test]
fn copy_to_another_cpu_context() {
    let ctx = Context::cpu().unwrap();
    let other = Context::cpu().unwrap();
    let m = BsrMatrix::<f32>::from_bsr(&ctx, 2, 2, (1, 1), &[0i32, 1, 2], &[1, 0], &[1.0, 2.0], Default::default()).unwrap();
    let copy = m.copy_to(&other).unwrap();
    assert_eq!(copy.export::<i32>().unwrap(), m.export::<i32>().unwrap());
}

#[test]
fn from_raw_parts_on_host_memory() {
    let ctx = Context::cpu().unwrap();
    let (row_ptr, col_idx, values) = ([0i64, 1, 1], [1i64], [1.0f64, 2.0, 3.0, 4.0]);
    // SAFETY: host arrays as long as the shape says, alive for the call.
    let m = unsafe {
        BsrMatrix::from_raw_parts(&ctx, 4, 4, (2, 2), 1, row_ptr.as_ptr(), col_idx.as_ptr(), values.as_ptr(), Device::Cpu, false)
    }
    .unwrap();
    let parts = m.export::<i64>().unwrap();
    assert_eq!((parts.row_ptr, parts.col_idx, parts.values), (row_ptr.to_vec(), col_idx.to_vec(), values.to_vec()));
    // SAFETY: as above; the core rejects the bad column before using the values.
    let bad = unsafe { BsrMatrix::from_raw_parts(&ctx, 4, 4, (2, 2), 1, row_ptr.as_ptr(), [7i64].as_ptr(), values.as_ptr(), Device::Cpu, false) };
    assert_eq!(bad.unwrap_err().code(), "BSRMM_STATUS_INVALID_ARGUMENT");
}
