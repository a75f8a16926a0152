//! ndarray views as operands (feature `ndarray`): row-major, column-major and sliced views are
//! read and written in place; views bsrmm cannot address are errors that say so.

use bsrmm::{matmul, matmul_into, BsrMatrix, Context, DenseMut, DenseRef, Layout, MatmulOptions};
use ndarray::{s, Array2, ArrayView2};

/// A 4x6 f64 matrix of 2x3 blocks at (0, 1) and (1, 0), and its dense form.
fn operand(ctx: &Context) -> (BsrMatrix<f64>, Array2<f64>) {
    let values: Vec<f64> = (1..=12).map(f64::from).collect();
    let a = BsrMatrix::from_bsr(ctx, 4, 6, (2, 3), &[0i32, 1, 2], &[1, 0], &values, Default::default()).unwrap();
    let dense = a.to_dense(Layout::RowMajor).unwrap().into();
    (a, dense)
}

#[test]
fn views_in_both_layouts_and_slices_multiply_in_place() {
    let ctx = Context::cpu().unwrap();
    let (a, dense) = operand(&ctx);
    let wide = Array2::from_shape_fn((6, 9), |(i, j)| (i * 9 + j) as f64 - 20.0);
    let tall = Array2::from_shape_fn((9, 6), |(i, j)| (i * 6 + j) as f64 * 0.5);
    let views: [(&str, ArrayView2<f64>); 3] = [
        ("row-major", wide.view()),
        ("a column slice (ld 9 > 4 cols)", wide.slice(s![.., 2..6])),
        ("a transposed slice (column-major)", tall.slice(s![1..5, ..]).reversed_axes()),
    ];
    for (what, b) in views {
        let want = dense.dot(&b);
        let c: Array2<f64> =
            matmul(&ctx, &a, DenseRef::try_from(b).unwrap(), Layout::RowMajor, &MatmulOptions::new()).unwrap().into();
        assert_eq!(c, want, "{what}");
        // Into a column-major output view, written in place.
        let mut out = Array2::<f64>::from_elem((b.ncols(), 4), f64::NAN).reversed_axes();
        matmul_into(&ctx, &a, DenseRef::try_from(b).unwrap(), DenseMut::try_from(out.view_mut()).unwrap(), &MatmulOptions::new())
            .unwrap();
        assert_eq!(out, want, "{what}, column-major out");
    }
}

#[test]
fn views_bsrmm_cannot_address_are_errors() {
    let m = Array2::<f32>::zeros((6, 4));
    for (what, view) in [
        ("stepped columns", m.slice(s![.., ..;2])),
        ("reversed rows", m.slice(s![..;-1, ..])),
        ("a broadcast row", m.row(0).broadcast((6, 4)).unwrap()),
    ] {
        let err = DenseRef::try_from(view).expect_err(what);
        assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT", "{what}");
        assert!(err.message().contains("as_standard_layout"), "{what}: {err}");
    }
    // Single rows and columns have no meaningful stride on the short axis: always addressable.
    assert!(DenseRef::try_from(m.slice(s![2..3, ..])).is_ok());
    assert!(DenseRef::try_from(m.slice(s![.., 1..2])).is_ok());
}

#[test]
fn host_views_convert_back_to_ndarray() {
    let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let view = DenseRef::packed(&data, 2, 3, Layout::ColMajor).unwrap();
    let array = ArrayView2::try_from(view).unwrap();
    assert_eq!(array, ndarray::array![[1.0, 3.0, 5.0], [2.0, 4.0, 6.0]]);
}
