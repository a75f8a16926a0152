//! fp8 operands (issue 27): A's values and B in E4M3 / E5M2 with fp32 scales, C in f32 / f16 /
//! bf16, checked against float64 of the dequantised operands (tight: the CPU reference is exact
//! in f64, so only C's rounding and the summation order remain) and of the unquantised ones
//! (within the bound fp8 rounding of both operands allows).

mod common;

use bsrmm::{
    bf16, f16, matmul_fp8, matmul_fp8_into, matmul_into, Activation, BsrMatrix, Context, CreateOptions, Dense, DenseRef,
    Element, Fp8Element, Layout, MatmulOptions, Op, ScaleKind, Scales, F8E4M3, F8E5M2,
};
use common::fp8::{quantise_a, quantise_b, scales_of};
use common::{reference, Rng};

const F32_UNIT_ROUNDOFF: f64 = 1.0 / 16_777_216.0; // 2^-24

fn unit_roundoff_of<C: Element>() -> f64 {
    match C::DTYPE {
        bsrmm::DType::F32 => F32_UNIT_ROUNDOFF,
        bsrmm::DType::F16 => 1.0 / 2048.0,
        bsrmm::DType::BF16 => 1.0 / 256.0,
        other => panic!("C of dtype {other:?} is not an fp8 multiply's output"),
    }
}

/// One multiply of a pairing, scale kinds and C dtype, checked both ways.
fn check_product<A: Fp8Element, B: Fp8Element, C: Element>(seed: u64, a_kind: ScaleKind, b_kind: ScaleKind) {
    let what = format!("{:?} x {:?} -> {:?}, A {a_kind:?}, B {b_kind:?}", A::DTYPE, B::DTYPE, C::DTYPE);
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(seed);
    let qa = quantise_a::<A>(&mut rng, a_kind);
    let (m, k, n) = (qa.bsr.rows, qa.bsr.cols, 7);
    let qb = quantise_b::<B>(&mut rng, k, n, b_kind);
    let a = BsrMatrix::from_bsr_scaled(
        &ctx, m, k, qa.bsr.block, &qa.bsr.row_ptr, &qa.bsr.col_idx, &qa.bsr.values,
        scales_of(a_kind, &qa.scales), CreateOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{what}: {e}"));
    // C starts as NaN: a multiply that skips an element shows it.
    let mut c = Dense::from_vec(vec![C::from_f64(f64::NAN); m * n], m, n, Layout::RowMajor).unwrap();
    let b = DenseRef::packed(&qb.values, k, n, Layout::RowMajor).unwrap();
    matmul_fp8_into(&ctx, &a, b, c.view_mut(), &MatmulOptions::new().b_scales(scales_of(b_kind, &qb.scales)))
        .unwrap_or_else(|e| panic!("{what}: {e}"));

    let u_out = unit_roundoff_of::<C>();
    let (u_a, u_b) = (A::UNIT_ROUNDOFF, B::UNIT_ROUNDOFF);
    let no_c = |_: usize, _: usize| 0.0;
    let exact = reference(&qa.dequantised, m, k, false, |p, j| qb.dequantised[p * n + j], n, 1.0, 0.0, no_c, None, Activation::None);
    let unquantised = reference(&qa.original, m, k, false, |p, j| qb.original[p * n + j], n, 1.0, 0.0, no_c, None, Activation::None);
    for i in 0..m {
        for j in 0..n {
            let got = c.get(i, j).to_f64();
            let e = i * n + j;
            // Against the dequantised operands: C's rounding plus an f32 summation of k terms.
            let tight = u_out * exact.values[e].abs() + (k + 2) as f64 * F32_UNIT_ROUNDOFF * exact.magnitude[e];
            assert!((got - exact.values[e]).abs() <= tight, "{what}: C[{i}][{j}] = {got}, dequantised reference {} (bound {tight})", exact.values[e]);
            // Against the unquantised ones: each product's operands rounded to fp8 (all normal
            // values: the scales map every group's largest magnitude onto the format's maximum).
            let fp8 = (u_a + u_b + u_a * u_b) * unquantised.magnitude[e];
            let loose = tight + fp8 + u_out * (got - unquantised.values[e]).abs();
            assert!(
                (got - unquantised.values[e]).abs() <= loose,
                "{what}: C[{i}][{j}] = {got}, unquantised reference {} (bound {loose})",
                unquantised.values[e]
            );
        }
    }
}

fn every_scale_kind<A: Fp8Element, B: Fp8Element, C: Element>(seed: u64) {
    for (i, a_kind) in [ScaleKind::PerTensor, ScaleKind::PerBlock, ScaleKind::PerBlockRow].into_iter().enumerate() {
        for (j, b_kind) in [ScaleKind::PerTensor, ScaleKind::PerColumn].into_iter().enumerate() {
            check_product::<A, B, C>(seed + 10 * i as u64 + j as u64, a_kind, b_kind);
        }
    }
}

#[test]
fn e4m3_x_e4m3_every_scale_kind_and_output() {
    every_scale_kind::<F8E4M3, F8E4M3, f32>(100);
    every_scale_kind::<F8E4M3, F8E4M3, bf16>(200);
    every_scale_kind::<F8E4M3, F8E4M3, f16>(300);
}

#[test]
fn e4m3_x_e5m2_every_scale_kind_and_output() {
    every_scale_kind::<F8E4M3, F8E5M2, f32>(400);
    every_scale_kind::<F8E4M3, F8E5M2, bf16>(500);
    every_scale_kind::<F8E4M3, F8E5M2, f16>(600);
}

#[test]
fn e5m2_a_with_either_b() {
    every_scale_kind::<F8E5M2, F8E4M3, f32>(700);
    every_scale_kind::<F8E5M2, F8E5M2, bf16>(800);
}

/// op(A) = A^T: each block keeps its scale (per block of A^T for A's per-block-row scales),
/// against float64 of the dequantised operands.
#[test]
fn transposed_a_keeps_each_blocks_scale() {
    let ctx = Context::cpu().unwrap();
    for (seed, a_kind) in [(71u64, ScaleKind::PerTensor), (72, ScaleKind::PerBlock), (73, ScaleKind::PerBlockRow)] {
        let mut rng = Rng::new(seed);
        let qa = quantise_a::<F8E4M3>(&mut rng, a_kind);
        let (m, k, n) = (qa.bsr.rows, qa.bsr.cols, 5);
        let qb = quantise_b::<F8E5M2>(&mut rng, m, n, ScaleKind::PerColumn);
        let a = BsrMatrix::from_bsr_scaled(
            &ctx, m, k, qa.bsr.block, &qa.bsr.row_ptr, &qa.bsr.col_idx, &qa.bsr.values,
            scales_of(a_kind, &qa.scales), CreateOptions::default(),
        )
        .unwrap();
        let mut c = Dense::from_vec(vec![f32::NAN; k * n], k, n, Layout::RowMajor).unwrap();
        let b = DenseRef::packed(&qb.values, m, n, Layout::RowMajor).unwrap();
        let options = MatmulOptions::new().op(Op::Transpose).b_scales(scales_of(ScaleKind::PerColumn, &qb.scales));
        matmul_fp8_into(&ctx, &a, b, c.view_mut(), &options).unwrap_or_else(|e| panic!("{a_kind:?}: {e}"));
        let exact = reference(&qa.dequantised, m, k, true, |p, j| qb.dequantised[p * n + j], n, 1.0, 0.0, |_, _| 0.0, None, Activation::None);
        for i in 0..k {
            for j in 0..n {
                let e = i * n + j;
                let bound = F32_UNIT_ROUNDOFF * exact.values[e].abs() + (m + 2) as f64 * F32_UNIT_ROUNDOFF * exact.magnitude[e];
                let got = c.get(i, j).to_f64();
                assert!((got - exact.values[e]).abs() <= bound, "{a_kind:?}: C[{i}][{j}] = {got}, reference {}", exact.values[e]);
            }
        }
    }
}

#[test]
fn max_finite_is_where_conversion_saturates() {
    assert_eq!(F8E4M3::from_f64(1e9).to_f64(), <F8E4M3 as Fp8Element>::MAX_FINITE);
    assert_eq!(F8E5M2::from_f64(1e9).to_f64(), <F8E5M2 as Fp8Element>::MAX_FINITE);
    assert_eq!(F8E4M3::from_f64(1.0 + 1.0 / 16.0).to_f64(), 1.0, "a tie rounds to even at 2^-4 (3 mantissa bits)");
    assert_eq!(F8E5M2::from_f64(1.0 + 1.0 / 8.0).to_f64(), 1.0, "a tie rounds to even at 2^-3 (2 mantissa bits)");
}

#[test]
fn epilogue_applies_to_the_fp8_product() {
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(900);
    let qa = quantise_a::<F8E4M3>(&mut rng, ScaleKind::PerBlock);
    let (m, k, n) = (qa.bsr.rows, qa.bsr.cols, 5);
    let qb = quantise_b::<F8E5M2>(&mut rng, k, n, ScaleKind::PerColumn);
    let a = BsrMatrix::from_bsr_scaled(&ctx, m, k, qa.bsr.block, &qa.bsr.row_ptr, &qa.bsr.col_idx, &qa.bsr.values,
        Scales::per_block(&qa.scales), CreateOptions::default()).unwrap();
    let c0: Vec<f32> = (0..m * n).map(|_| rng.value() as f32).collect();
    let bias: Vec<f32> = (0..m).map(|_| rng.value() as f32).collect();
    let mut c = Dense::from_vec(c0.clone(), m, n, Layout::ColMajor).unwrap();
    let options = MatmulOptions::new()
        .alpha(0.75)
        .beta(-0.5)
        .bias(DenseRef::packed(&bias, m, 1, Layout::ColMajor).unwrap())
        .activation(Activation::Gelu)
        .b_scales(Scales::per_column(&qb.scales));
    matmul_fp8_into(&ctx, &a, DenseRef::packed(&qb.values, k, n, Layout::RowMajor).unwrap(), c.view_mut(), &options).unwrap();
    let bias64: Vec<f64> = bias.iter().map(|&v| v as f64).collect();
    let want = reference(&qa.dequantised, m, k, false, |p, j| qb.dequantised[p * n + j], n, 0.75, -0.5,
        |i, j| c0[j * m + i] as f64, Some(&bias64), Activation::Gelu);
    common::check("fp8 epilogue", &want, |i, j| c.get(i, j));
}

#[test]
fn matmul_fp8_allocates_c() {
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(950);
    let qa = quantise_a::<F8E4M3>(&mut rng, ScaleKind::PerBlockRow);
    let (m, k, n) = (qa.bsr.rows, qa.bsr.cols, 3);
    let qb = quantise_b::<F8E4M3>(&mut rng, k, n, ScaleKind::PerTensor);
    let a = BsrMatrix::from_bsr_scaled(&ctx, m, k, qa.bsr.block, &qa.bsr.row_ptr, &qa.bsr.col_idx, &qa.bsr.values,
        Scales::per_block_row(&qa.scales), CreateOptions::default()).unwrap();
    let c: Dense<f32> = matmul_fp8(&ctx, &a, DenseRef::packed(&qb.values, k, n, Layout::RowMajor).unwrap(), Layout::RowMajor,
        &MatmulOptions::new().b_scales(Scales::per_tensor(qb.scales[0]))).unwrap();
    let want = reference(&qa.dequantised, m, k, false, |p, j| qb.dequantised[p * n + j], n, 1.0, 0.0, |_, _| 0.0, None, Activation::None);
    common::check("matmul_fp8", &want, |i, j| c.get(i, j));
}

#[test]
fn scales_and_values_export_and_follow_sorted_blocks() {
    let ctx = Context::cpu().unwrap();
    let values: Vec<F8E4M3> = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0].iter().map(|&v| F8E4M3::from_f64(v)).collect();
    // One block row of 1x2 blocks given at block columns 2, 0, 1 (unsorted), each with a scale.
    let a = BsrMatrix::from_bsr_scaled(&ctx, 1, 6, (1, 2), &[0i32, 3], &[2, 0, 1], &values,
        Scales::per_block(&[0.5, 2.0, 4.0]), CreateOptions { sort_indices: true }).unwrap();
    assert_eq!(a.dtype(), bsrmm::DType::F8E4M3);
    let parts = a.export::<i32>().unwrap();
    assert_eq!(parts.col_idx, vec![0, 1, 2]);
    assert_eq!(parts.values.iter().map(|v| v.to_f64()).collect::<Vec<_>>(), vec![3.0, 4.0, 5.0, 6.0, 1.0, 2.0]);
    assert_eq!(a.scales().unwrap(), (ScaleKind::PerBlock, vec![2.0, 4.0, 0.5]), "a moved block keeps its scale");
    // A copy keeps them too.
    assert_eq!(a.copy_to(&Context::cpu().unwrap()).unwrap().scales().unwrap(), (ScaleKind::PerBlock, vec![2.0, 4.0, 0.5]));
}

fn a_4x4(ctx: &Context) -> BsrMatrix<F8E4M3> {
    let values = vec![F8E4M3::from_f64(1.0); 8];
    BsrMatrix::from_bsr_scaled(ctx, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 1], &values, Scales::per_tensor(1.0), CreateOptions::default()).unwrap()
}

fn code<T: std::fmt::Debug>(r: bsrmm::Result<T>) -> String {
    let e = r.expect_err("bad input must be an error");
    assert!(!e.message().is_empty());
    e.code().to_owned()
}

#[test]
fn bad_fp8_matrices_are_errors() {
    let ctx = Context::cpu().unwrap();
    let fp8 = vec![F8E4M3::from_f64(1.0); 8];
    let (rp, ci) = ([0i32, 1, 2], [0i32, 1]);
    let make = |scales: Scales<'_>| BsrMatrix::from_bsr_scaled(&ctx, 4, 4, (2, 2), &rp, &ci, &fp8, scales, CreateOptions::default());
    assert_eq!(code(BsrMatrix::from_bsr(&ctx, 4, 4, (2, 2), &rp, &ci, &fp8, CreateOptions::default())), "BSRMM_STATUS_INVALID_ARGUMENT", "fp8 needs scales");
    assert_eq!(code(make(Scales::per_block(&[1.0]))), "BSRMM_STATUS_INVALID_ARGUMENT", "one scale short");
    assert_eq!(code(make(Scales::per_block_row(&[1.0, 2.0, 3.0]))), "BSRMM_STATUS_INVALID_ARGUMENT", "one scale too many");
    assert_eq!(code(make(Scales::per_tensor(f32::NAN))), "BSRMM_STATUS_INVALID_ARGUMENT", "a NaN scale");
    assert_eq!(code(make(Scales::per_tensor(f32::INFINITY))), "BSRMM_STATUS_INVALID_ARGUMENT", "an infinite scale");
    assert_eq!(code(make(Scales::per_column(&[1.0; 4]))), "BSRMM_STATUS_INVALID_ARGUMENT", "per-column is B's");
    let f32s = vec![1.0f32; 8];
    assert_eq!(
        code(BsrMatrix::from_bsr_scaled(&ctx, 4, 4, (2, 2), &rp, &ci, &f32s, Scales::per_tensor(1.0), CreateOptions::default())),
        "BSRMM_STATUS_INVALID_ARGUMENT",
        "f32 takes no scales"
    );
    let plain = BsrMatrix::from_bsr(&ctx, 4, 4, (2, 2), &rp, &ci, &f32s, CreateOptions::default()).unwrap();
    assert_eq!(code(plain.scales()), "BSRMM_STATUS_INVALID_ARGUMENT", "an f32 matrix has no scales");
    assert_eq!(code(a_4x4(&ctx).to_dense(Layout::RowMajor)), "BSRMM_STATUS_UNSUPPORTED");
}

#[test]
fn bad_fp8_multiplies_are_errors_and_leave_c_alone() {
    let ctx = Context::cpu().unwrap();
    let a = a_4x4(&ctx);
    let b = vec![F8E5M2::from_f64(1.0); 12];
    let b_view = || DenseRef::packed(&b, 4, 3, Layout::RowMajor).unwrap();
    let mut c = Dense::from_vec(vec![7.0f32; 12], 4, 3, Layout::RowMajor).unwrap();
    let cases: Vec<(&str, MatmulOptions<'_, f32>, &str)> = vec![
        ("no b_scales", MatmulOptions::new(), "BSRMM_STATUS_INVALID_ARGUMENT"),
        ("per-column, one short", MatmulOptions::new().b_scales(Scales::per_column(&[1.0, 1.0])), "BSRMM_STATUS_INVALID_ARGUMENT"),
        ("per-block for B", MatmulOptions::new().b_scales(Scales::per_block(&[1.0, 1.0])), "BSRMM_STATUS_INVALID_ARGUMENT"),
        ("a NaN B scale", MatmulOptions::new().b_scales(Scales::per_tensor(f32::NAN)), "BSRMM_STATUS_INVALID_ARGUMENT"),
    ];
    for (what, options, want) in cases {
        let got = code(matmul_fp8_into(&ctx, &a, b_view(), c.view_mut(), &options));
        assert_eq!(got, want, "{what}");
        assert_eq!(c.data(), &[7.0; 12], "{what}: C changed");
    }
    // C in fp8 is a dtype combination the core does not run (C is f32, f16 or bf16).
    let mut c8 = Dense::from_vec(vec![F8E4M3::from_f64(7.0); 12], 4, 3, Layout::RowMajor).unwrap();
    assert_eq!(code(matmul_fp8_into(&ctx, &a, b_view(), c8.view_mut(), &MatmulOptions::new().b_scales(Scales::per_tensor(1.0)))), "BSRMM_STATUS_UNSUPPORTED");
    // B scales on a multiply whose B is not fp8.
    let plain = BsrMatrix::from_bsr(&ctx, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 1], &[1.0f32; 8], CreateOptions::default()).unwrap();
    let b32 = [1.0f32; 12];
    let opts = MatmulOptions::new().b_scales(Scales::per_tensor(2.0));
    assert_eq!(code(matmul_into(&ctx, &plain, DenseRef::packed(&b32, 4, 3, Layout::RowMajor).unwrap(), c.view_mut(), &opts)), "BSRMM_STATUS_INVALID_ARGUMENT");
    assert_eq!(c.data(), &[7.0; 12]);
}
