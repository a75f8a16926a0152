//! Every multiply is checked element by element against a float64 reference on fresh random
//! operands, with the output poisoned (NaN) beforehand when beta = 0.

mod common;

use bsrmm::{
    bf16, f16, matmul, matmul_into, Activation, BsrMatrix, Context, DenseMut, DenseRef, Element, Layout, MatmulOptions,
    Op,
};
use common::{check, reference, strided, RandomBsr, Rng};

struct Case {
    block_rows: usize,
    block_cols: usize,
    block: (usize, usize),
    density: f64,
    n: usize,
    transpose: bool,
    b_layout: Layout,
    c_layout: Layout,
    pad: usize,
    alpha: f64,
    beta: f64,
    bias: bool,
    activation: Activation,
}

fn run_case<T: Element>(ctx: &Context, case: &Case, seed: u64) {
    let mut rng = Rng::new(seed);
    let a = RandomBsr::<T>::new(&mut rng, case.block_rows, case.block_cols, case.block, case.density);
    let matrix = BsrMatrix::from_bsr(ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default())
        .expect("valid random matrix");
    let (m, k) = if case.transpose { (a.cols, a.rows) } else { (a.rows, a.cols) };
    let n = case.n;

    let (mut b, ld_b) = strided::<T>(k, n, case.b_layout, case.pad, T::from_f64(f64::NAN));
    for p in 0..k {
        for j in 0..n {
            b[case.b_layout.offset(p, j, ld_b)] = T::from_f64(rng.value());
        }
    }
    // NaN in C shows any element the multiply did not write; beta != 0 needs real values.
    let (mut c, ld_c) = strided::<T>(m, n, case.c_layout, case.pad, T::from_f64(f64::NAN));
    if case.beta != 0.0 {
        for i in 0..m {
            for j in 0..n {
                c[case.c_layout.offset(i, j, ld_c)] = T::from_f64(rng.value());
            }
        }
    }
    let c0 = c.clone();
    let bias: Vec<T> = (0..m).map(|_| T::from_f64(rng.value())).collect();
    let bias_f64: Vec<f64> = bias.iter().map(|v| v.to_f64()).collect();

    let mut options = MatmulOptions::new()
        .op(if case.transpose { Op::Transpose } else { Op::None })
        .alpha(case.alpha)
        .beta(case.beta)
        .activation(case.activation);
    if case.bias {
        options = options.bias(DenseRef::vector(&bias));
    }
    let b_view = DenseRef::new(&b, k, n, ld_b, case.b_layout).unwrap();
    let c_view = DenseMut::new(&mut c, m, n, ld_c, case.c_layout).unwrap();
    matmul_into(ctx, &matrix, b_view, c_view, &options).unwrap();

    let want = reference(
        &a.dense_f64(),
        a.rows,
        a.cols,
        case.transpose,
        |p, j| b[case.b_layout.offset(p, j, ld_b)].to_f64(),
        n,
        case.alpha,
        case.beta,
        |i, j| c0[case.c_layout.offset(i, j, ld_c)].to_f64(),
        case.bias.then_some(&bias_f64[..]),
        case.activation,
    );
    let what = format!(
        "{:?} {}x{} blocks {:?} n={n} op={} B {:?} C {:?} pad {} alpha {} beta {} bias {} {:?}",
        T::DTYPE,
        a.rows,
        a.cols,
        a.block,
        case.transpose,
        case.b_layout,
        case.c_layout,
        case.pad,
        case.alpha,
        case.beta,
        case.bias,
        case.activation
    );
    check::<T>(&what, &want, |i, j| c[case.c_layout.offset(i, j, ld_c)]);
    // Padding between leading-dimension strides is never written.
    if case.pad > 0 && case.beta == 0.0 {
        let major = if case.c_layout == Layout::RowMajor { m } else { n };
        let minor = if case.c_layout == Layout::RowMajor { n } else { m };
        for r in 0..major {
            for p in minor..ld_c {
                assert!(c[r * ld_c + p].to_f64().is_nan(), "{what}: padding at [{r}][{p}] was written");
            }
        }
    }
}

fn sweep<T: Element>(seed: u64) {
    let ctx = Context::cpu().unwrap();
    let mut count = 0;
    for (block, block_rows, block_cols, density) in [((1, 1), 7, 9, 0.4), ((4, 4), 5, 3, 0.5), ((2, 3), 4, 6, 0.3), ((16, 8), 3, 4, 0.6)] {
        for transpose in [false, true] {
            for b_layout in [Layout::RowMajor, Layout::ColMajor] {
                for c_layout in [Layout::RowMajor, Layout::ColMajor] {
                    let case = Case {
                        block_rows,
                        block_cols,
                        block,
                        density,
                        n: 5 + count % 4,
                        transpose,
                        b_layout,
                        c_layout,
                        pad: count % 3,
                        alpha: if count % 2 == 0 { 1.0 } else { -0.75 },
                        beta: if count % 4 == 1 { 0.5 } else { 0.0 },
                        bias: count % 3 == 2,
                        activation: [Activation::None, Activation::Relu, Activation::Gelu, Activation::Silu][count % 4],
                    };
                    run_case::<T>(&ctx, &case, seed + count as u64);
                    count += 1;
                }
            }
        }
    }
}

#[test]
fn f32_matches_reference() {
    sweep::<f32>(100);
}

#[test]
fn f64_matches_reference() {
    sweep::<f64>(200);
}

#[test]
fn f16_matches_reference() {
    sweep::<f16>(300);
}

#[test]
fn bf16_matches_reference() {
    sweep::<bf16>(400);
}

// One small multiply with the context's forced variant: Err where the variant cannot run here.
fn runs_here(ctx: &Context) -> Result<(), bsrmm::Error> {
    let a = BsrMatrix::from_bsr(ctx, 8, 8, (8, 8), &[0i32, 1], &[0i32], &[1.0f32; 64], Default::default())?;
    let b = [1.0f32; 8];
    matmul(ctx, &a, DenseRef::new(&b, 8, 1, 1, Layout::RowMajor)?, Layout::RowMajor, &MatmulOptions::new())?;
    Ok(())
}

#[test]
fn both_cpu_variants_match_reference() {
    let ctx = Context::cpu().unwrap();
    let names = bsrmm::variants_of(bsrmm::VariantKind::Matmul);
    let cpu: Vec<&String> = names.iter().filter(|n| n.starts_with("cpu")).collect();
    assert!(!cpu.is_empty(), "the core lists no CPU variant: {names:?}");
    for name in cpu {
        ctx.set_variant(Some(name)).unwrap();
        if let Err(why) = runs_here(&ctx) {
            // cpu_dense_blas needs a CBLAS at run time (BSRMM_BLAS or a system one), and
            // cpu_rowwise_simd AVX2 + FMA or AVX-512 (an AMD EPYC without AVX-512 failed this test
            // when it assumed both); without them, forcing the variant is UNSUPPORTED and says why.
            let missing_blas = name == "cpu_dense_blas" && why.message().contains("no CBLAS");
            let missing_isa = why.message().contains("which this CPU lacks");
            assert!(why.code() == "BSRMM_STATUS_UNSUPPORTED" && (missing_blas || missing_isa), "{name}: {why}");
            eprintln!("{name} skipped: {why}");
            continue;
        }
        let case = Case {
            block_rows: 6,
            block_cols: 5,
            block: (8, 8),
            density: 0.5,
            n: 33,
            transpose: false,
            b_layout: Layout::RowMajor,
            c_layout: Layout::RowMajor,
            pad: 0,
            alpha: 1.0,
            beta: 0.0,
            bias: false,
            activation: Activation::None,
        };
        run_case::<f32>(&ctx, &case, 500);
        assert_eq!(&ctx.last_variant(), name);
    }
}

#[test]
fn empty_rows_and_no_blocks() {
    let ctx = Context::cpu().unwrap();
    // A matrix with no stored block at all multiplies to exactly zero (plus bias).
    let a = BsrMatrix::<f32>::from_bsr(&ctx, 4, 6, (2, 3), &[0i32, 0, 0], &[], &[], Default::default()).unwrap();
    let b = vec![1.0f32; 6 * 3];
    let bias = [1.0f32, 2.0, 3.0, 4.0];
    let c = matmul(
        &ctx,
        &a,
        DenseRef::packed(&b, 6, 3, Layout::RowMajor).unwrap(),
        Layout::RowMajor,
        &MatmulOptions::new().bias(DenseRef::vector(&bias)),
    )
    .unwrap();
    for i in 0..4 {
        for j in 0..3 {
            assert_eq!(c.get(i, j), bias[i]);
        }
    }
}

#[test]
fn one_matrix_many_threads() {
    // BsrMatrix and Context are Send + Sync: several threads multiply with one weight.
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(600);
    let a = RandomBsr::<f64>::new(&mut rng, 8, 8, (4, 4), 0.5);
    let matrix = BsrMatrix::from_bsr(&ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    let dense = a.dense_f64();
    std::thread::scope(|s| {
        for t in 0..4u64 {
            let (ctx, matrix, dense) = (&ctx, &matrix, &dense);
            s.spawn(move || {
                let mut rng = Rng::new(700 + t);
                let b: Vec<f64> = (0..32 * 7).map(|_| rng.value()).collect();
                let c = matmul(ctx, matrix, DenseRef::packed(&b, 32, 7, Layout::RowMajor).unwrap(), Layout::RowMajor, &MatmulOptions::new()).unwrap();
                let want = reference(dense, 32, 32, false, |p, j| b[p * 7 + j], 7, 1.0, 0.0, |_, _| 0.0, None, Activation::None);
                check::<f64>("threaded", &want, |i, j| c.get(i, j));
            });
        }
    });
}
