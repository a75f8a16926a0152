//! The SDDMM, element by element against a float64 reference on fresh random operands: every
//! dtype, X and Y in both layouts with padded leading dimensions, alpha and beta, the values
//! poisoned (NaN) beforehand when beta = 0; then its errors.

mod common;

use bsrmm::{
    bf16, f16, sddmm, sddmm_into, BsrMatrix, Context, DenseMut, DenseRef, Device, Element, Layout, SddmmOptions, Status,
};
use common::{check, sddmm_reference, strided, RandomBsr, Rng};

struct Case {
    block_rows: usize,
    block_cols: usize,
    block: (usize, usize),
    density: f64,
    t: usize,
    x_layout: Layout,
    y_layout: Layout,
    pad: usize,
    alpha: f64,
    beta: f64,
}

/// A `rows x cols` operand in `layout` with `pad` extra elements per leading dimension (NaN
/// there: the multiply must not read it), filled with fresh random values.
fn operand<T: Element>(rng: &mut Rng, rows: usize, cols: usize, layout: Layout, pad: usize) -> (Vec<T>, usize) {
    let (mut data, ld) = strided::<T>(rows, cols, layout, pad, T::from_f64(f64::NAN));
    for i in 0..rows {
        for j in 0..cols {
            data[layout.offset(i, j, ld)] = T::from_f64(rng.value());
        }
    }
    (data, ld)
}

fn run_case<T: Element>(ctx: &Context, case: &Case, seed: u64) {
    let mut rng = Rng::new(seed);
    let a = RandomBsr::<T>::new(&mut rng, case.block_rows, case.block_cols, case.block, case.density);
    let pattern = BsrMatrix::from_bsr(ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default())
        .expect("valid random matrix");
    let (bh, bw) = a.block;
    let (nnzb, t) = (a.col_idx.len(), case.t);
    let (x, ld_x) = operand::<T>(&mut rng, a.rows, t, case.x_layout, case.pad);
    let (y, ld_y) = operand::<T>(&mut rng, t, a.cols, case.y_layout, case.pad);
    // NaN in the values shows any element the SDDMM did not write; beta != 0 needs real values.
    let mut values: Vec<T> = if case.beta != 0.0 {
        (0..nnzb * bh * bw).map(|_| T::from_f64(rng.value())).collect()
    } else {
        vec![T::from_f64(f64::NAN); nnzb * bh * bw]
    };
    let values0 = values.clone();
    let options = SddmmOptions::new().alpha(case.alpha).beta(case.beta);
    sddmm_into(
        ctx,
        &pattern,
        DenseRef::new(&x, a.rows, t, ld_x, case.x_layout).unwrap(),
        DenseRef::new(&y, t, a.cols, ld_y, case.y_layout).unwrap(),
        DenseMut::packed(&mut values, nnzb, bh * bw, Layout::RowMajor).unwrap(),
        &options,
    )
    .unwrap();
    fn at<T: Element>(data: &[T], layout: Layout, ld: usize) -> impl Fn(usize, usize) -> f64 + '_ {
        move |i, j| data[layout.offset(i, j, ld)].to_f64()
    }
    let want = sddmm_reference(&a, at(&x, case.x_layout, ld_x), at(&y, case.y_layout, ld_y), t, case.alpha, case.beta, &values0);
    let what = format!(
        "{:?} sddmm {}x{} blocks {:?} nnzb {nnzb} t={t} X {:?} Y {:?} pad {} alpha {} beta {}",
        T::DTYPE,
        a.rows,
        a.cols,
        a.block,
        case.x_layout,
        case.y_layout,
        case.pad,
        case.alpha,
        case.beta
    );
    check::<T>(&what, &want, |b, e| values[b * bh * bw + e]);
}

fn sweep<T: Element>(seed: u64) {
    let ctx = Context::cpu().unwrap();
    let mut count = 0;
    for (block, block_rows, block_cols, density) in [((1, 1), 7, 9, 0.4), ((4, 4), 5, 3, 0.5), ((2, 3), 4, 6, 0.3), ((16, 8), 3, 4, 0.6)] {
        for x_layout in [Layout::RowMajor, Layout::ColMajor] {
            for y_layout in [Layout::RowMajor, Layout::ColMajor] {
                let case = Case {
                    block_rows,
                    block_cols,
                    block,
                    density,
                    t: [1, 5, 17, 40][count % 4],
                    x_layout,
                    y_layout,
                    pad: count % 3,
                    alpha: if count % 2 == 0 { 1.0 } else { -0.75 },
                    beta: if count % 4 == 1 { 0.5 } else { 0.0 },
                };
                run_case::<T>(&ctx, &case, seed + count as u64);
                count += 1;
            }
        }
    }
}

#[test]
fn f32_matches_reference() {
    sweep::<f32>(1100);
}

#[test]
fn f64_matches_reference() {
    sweep::<f64>(1200);
}

#[test]
fn f16_matches_reference() {
    sweep::<f16>(1300);
}

#[test]
fn bf16_matches_reference() {
    sweep::<bf16>(1400);
}

/// The training use: W (M x K) of a layer Y = W X, dW = sddmm(W, dY, X^T) with X^T a
/// column-major view of X's own memory (no copy), through the allocating form, then as a matrix
/// with W's structure (`with_sddmm_values`).
#[test]
fn weight_gradient_from_a_transposed_view() {
    let ctx = Context::cpu().unwrap();
    let mut rng = Rng::new(1500);
    // A skewed pattern: block row 0 full, the others one block each; blocks 3 high, 2 wide.
    let (bh, bw, block_rows, block_cols) = (3, 2, 4, 5);
    let mut row_ptr = vec![0i32];
    let mut col_idx = Vec::new();
    for r in 0..block_rows {
        col_idx.extend(if r == 0 { (0..block_cols as i32).collect::<Vec<_>>() } else { vec![(r % block_cols) as i32] });
        row_ptr.push(col_idx.len() as i32);
    }
    let values: Vec<f32> = (0..col_idx.len() * bh * bw).map(|_| rng.value() as f32).collect();
    let a = RandomBsr { rows: block_rows * bh, cols: block_cols * bw, block: (bh, bw), row_ptr, col_idx, values };
    let w = BsrMatrix::from_bsr(&ctx, a.rows, a.cols, a.block, &a.row_ptr, &a.col_idx, &a.values, Default::default()).unwrap();
    let n = 9;
    let x: Vec<f32> = (0..a.cols * n).map(|_| rng.value() as f32).collect(); // K x N, row-major
    let dy: Vec<f32> = (0..a.rows * n).map(|_| rng.value() as f32).collect(); // M x N, row-major
    let dy_view = DenseRef::packed(&dy, a.rows, n, Layout::RowMajor).unwrap();
    let xt_view = DenseRef::new(&x, n, a.cols, n, Layout::ColMajor).unwrap(); // X^T, N x K
    let dw = sddmm(&ctx, &w, dy_view, xt_view, &SddmmOptions::new()).unwrap();
    let want = sddmm_reference(&a, |i, p| dy[i * n + p] as f64, |p, j| x[j * n + p] as f64, n, 1.0, 0.0, &[]);
    check::<f32>("dW", &want, |b, e| dw[b * bh * bw + e]);
    let grad = w.with_sddmm_values(dy_view, xt_view, &SddmmOptions::new().alpha(2.0)).unwrap();
    let parts = grad.export::<i32>().unwrap();
    assert_eq!((parts.row_ptr, parts.col_idx), (a.row_ptr.clone(), a.col_idx.clone()));
    for (got, want) in parts.values.iter().zip(&dw) {
        assert_eq!(*got, 2.0 * want);
    }
}

#[test]
fn an_empty_inner_dimension_scales_the_values_and_no_blocks_is_a_no_op() {
    let ctx = Context::cpu().unwrap();
    let w = BsrMatrix::<f64>::from_bsr(&ctx, 4, 4, (2, 2), &[0i32, 1, 1], &[1], &[1.0; 4], Default::default()).unwrap();
    let empty: [f64; 0] = [];
    let mut values = [1.0, 2.0, 3.0, 4.0];
    sddmm_into(
        &ctx,
        &w,
        DenseRef::packed(&empty, 4, 0, Layout::RowMajor).unwrap(),
        DenseRef::packed(&empty, 0, 4, Layout::RowMajor).unwrap(),
        DenseMut::packed(&mut values, 1, 4, Layout::RowMajor).unwrap(),
        &SddmmOptions::new().beta(0.5),
    )
    .unwrap();
    assert_eq!(values, [0.5, 1.0, 1.5, 2.0]);
    let none = BsrMatrix::<f64>::from_bsr(&ctx, 4, 4, (2, 2), &[0i32, 0, 0], &[], &[], Default::default()).unwrap();
    let ones = [1.0; 12];
    let got = sddmm(
        &ctx,
        &none,
        DenseRef::packed(&ones, 4, 3, Layout::RowMajor).unwrap(),
        DenseRef::packed(&ones, 3, 4, Layout::RowMajor).unwrap(),
        &SddmmOptions::new(),
    )
    .unwrap();
    assert!(got.is_empty());
}

fn assert_invalid(result: bsrmm::Result<()>, needle: &str) {
    let err = result.expect_err("bad input must be rejected");
    assert_eq!(err.status(), Status::InvalidArgument, "{err}");
    assert!(err.message().contains(needle), "message {:?} should mention {needle:?}", err.message());
}

#[test]
fn shapes_and_devices_must_agree() {
    let ctx = Context::cpu().unwrap();
    // 4x6 of 2x3 blocks, two stored: values is 2 x 6.
    let w = BsrMatrix::<f32>::from_bsr(&ctx, 4, 6, (2, 3), &[0i32, 1, 2], &[1, 0], &[1.0; 12], Default::default()).unwrap();
    let data = vec![1.0f32; 64];
    let mut out = vec![0.0f32; 64];
    let d: &[f32] = &data;
    let view = move |rows: usize, cols: usize| DenseRef::packed(&d[..rows * cols], rows, cols, Layout::RowMajor).unwrap();
    let run = |x: DenseRef<'_, f32>, y: DenseRef<'_, f32>, values: DenseMut<'_, f32>| {
        sddmm_into(&ctx, &w, x, y, values, &SddmmOptions::new())
    };
    fn values(out: &mut [f32], rows: usize, cols: usize, layout: Layout) -> DenseMut<'_, f32> {
        DenseMut::packed(&mut out[..rows * cols], rows, cols, layout).unwrap()
    }
    assert_invalid(run(view(3, 5), view(5, 6), values(&mut out, 2, 6, Layout::RowMajor)), "");
    assert_invalid(run(view(4, 5), view(4, 6), values(&mut out, 2, 6, Layout::RowMajor)), "");
    assert_invalid(run(view(4, 5), view(5, 7), values(&mut out, 2, 6, Layout::RowMajor)), "");
    assert_invalid(run(view(4, 5), view(5, 6), values(&mut out, 3, 6, Layout::RowMajor)), "");
    assert_invalid(run(view(4, 5), view(5, 6), values(&mut out, 2, 5, Layout::RowMajor)), "");
    assert_invalid(run(view(4, 5), view(5, 6), values(&mut out, 2, 6, Layout::ColMajor)), "");
    // An operand that claims to live on a GPU, handed to a CPU context.
    // SAFETY: the core rejects the device before touching the pointer.
    let fake = unsafe { DenseRef::<f32>::from_raw_parts(data.as_ptr(), 4, 5, 5, Layout::RowMajor, Device::Cuda(0)) }.unwrap();
    assert_invalid(run(fake, view(5, 6), values(&mut out, 2, 6, Layout::RowMajor)), "");
    // The allocating form needs a host result: it reports the same shape errors.
    let err = sddmm(&ctx, &w, view(4, 5), view(6, 6), &SddmmOptions::new()).unwrap_err();
    assert_eq!(err.status(), Status::InvalidArgument, "{err}");
}
