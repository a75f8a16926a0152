//! Variants by kind: the SDDMM kernels listed after the matmul ones (`variants_of`), each CPU
//! SDDMM variant forced through `Context::set_variant` (float64 reference, `last_variant` names
//! it), and a forced variant of the other operation refused by `sddmm_into` and `matmul`.

mod common;

use bsrmm::{
    matmul, sddmm_into, variants, variants_of, BsrMatrix, Context, DenseMut, DenseRef, Layout, MatmulOptions,
    SddmmOptions, Status, VariantKind,
};
use common::{check, sddmm_reference, RandomBsr, Rng};

#[test]
fn sddmm_variants_follow_the_matmul_ones() {
    let matmul_names = variants_of(VariantKind::Matmul);
    let sddmm_names = variants_of(VariantKind::Sddmm);
    assert_eq!(variants(), [matmul_names.clone(), sddmm_names.clone()].concat());
    assert!(sddmm_names.iter().any(|n| n == "cpu_sddmm_blocked"), "{sddmm_names:?}");
    assert!(sddmm_names.iter().any(|n| n == "cpu_sddmm_reference_f64acc"), "{sddmm_names:?}");
    assert!(sddmm_names.iter().all(|n| n.contains("_sddmm_")), "{sddmm_names:?}");
    assert!(!matmul_names.iter().any(|n| n.contains("_sddmm_")), "{matmul_names:?}");
}

/// A pattern, X (row-major) and Y (column-major) of f32 from `seed`.
fn problem(seed: u64) -> (RandomBsr<f32>, Vec<f32>, Vec<f32>, usize) {
    let mut rng = Rng::new(seed);
    let a = RandomBsr::<f32>::new(&mut rng, 5, 4, (3, 5), 0.5);
    let t = 29;
    let x = (0..a.rows * t).map(|_| rng.value() as f32).collect();
    let y = (0..t * a.cols).map(|_| rng.value() as f32).collect();
    (a, x, y, t)
}

#[test]
fn each_forced_cpu_sddmm_variant_runs_and_is_the_last_variant() {
    for (i, name) in variants_of(VariantKind::Sddmm).iter().filter(|n| n.starts_with("cpu_")).enumerate() {
        let ctx = Context::cpu().unwrap();
        ctx.set_variant(Some(name)).unwrap();
        let (a, x, y, t) = problem(70 + i as u64);
        let pattern = BsrMatrix::from_bsr(&ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default())
            .unwrap();
        let (nnzb, block_elements) = (a.col_idx.len(), a.block.0 * a.block.1);
        let mut values = vec![f32::NAN; nnzb * block_elements];
        let values0 = values.clone();
        sddmm_into(
            &ctx,
            &pattern,
            DenseRef::new(&x, a.rows, t, t, Layout::RowMajor).unwrap(),
            DenseRef::new(&y, t, a.cols, t, Layout::ColMajor).unwrap(),
            DenseMut::packed(&mut values, nnzb, block_elements, Layout::RowMajor).unwrap(),
            &SddmmOptions::new().alpha(-1.5),
        )
        .unwrap();
        assert_eq!(ctx.last_variant(), *name);
        let want = sddmm_reference(&a, |i, k| x[i * t + k] as f64, |k, j| y[j * t + k] as f64, t, -1.5, 0.0, &values0);
        check::<f32>(&format!("{name} forced"), &want, |b, e| values[b * block_elements + e]);
    }
}

#[test]
fn forced_variant_of_the_other_kind_is_refused() {
    let ctx = Context::cpu().unwrap();
    let (a, x, y, t) = problem(90);
    let pattern =
        BsrMatrix::from_bsr(&ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    let (nnzb, block_elements) = (a.col_idx.len(), a.block.0 * a.block.1);

    ctx.set_variant(Some("cpu_reference_f64acc")).unwrap();
    let mut values = vec![f32::NAN; nnzb * block_elements];
    let err = sddmm_into(
        &ctx,
        &pattern,
        DenseRef::new(&x, a.rows, t, t, Layout::RowMajor).unwrap(),
        DenseRef::new(&y, t, a.cols, t, Layout::ColMajor).unwrap(),
        DenseMut::packed(&mut values, nnzb, block_elements, Layout::RowMajor).unwrap(),
        &SddmmOptions::new(),
    )
    .unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{err}");
    assert!(err.message().contains("is a matmul variant and bsrmm_sddmm runs SDDMM variants"), "{err}");
    assert!(values.iter().all(|v| v.is_nan()), "a refused SDDMM wrote values");

    ctx.set_variant(Some("cpu_sddmm_blocked")).unwrap();
    let b = vec![1.0f32; a.cols];
    let err = matmul(&ctx, &pattern, DenseRef::new(&b, a.cols, 1, 1, Layout::RowMajor).unwrap(), Layout::RowMajor, &MatmulOptions::new())
        .unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{err}");
    assert!(err.message().contains("is an SDDMM variant and bsrmm_matmul runs matmul variants"), "{err}");
    assert_eq!(ctx.last_variant(), "");
}
