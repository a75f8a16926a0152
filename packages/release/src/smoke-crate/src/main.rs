//! Smoke test of the packaged crates. crates.ts builds it in a temp project outside the workspace
//! that depends on `bsrmm` and `bsrmm-sys` as unpacked from their .crate files: fresh random
//! operands (the seed is printed), C poisoned with NaN, every element checked against a float64
//! sum over the stored blocks.
//!
//!     smoke <expected version>

use std::time::{SystemTime, UNIX_EPOCH};

use bsrmm::{matmul_into, BsrMatrix, Context, Dense, Layout, MatmulOptions};

/// SplitMix64: operands from a printed seed, no dependency.
struct Rng(u64);
impl Rng {
    fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    fn symmetric(&mut self) -> f32 {
        (self.uniform() * 2.0 - 1.0) as f32
    }
}

fn check_case(ctx: &Context, rng: &mut Rng, (m, k, n): (usize, usize, usize), (bh, bw): (usize, usize), layout: Layout)
    -> Result<(), Box<dyn std::error::Error>> {
    let mut row_ptr = vec![0i32];
    let mut col_idx = Vec::new();
    for r in 0..m / bh {
        col_idx.extend((0..(k / bw) as i32).filter(|&c| (r == 0 && c == 0) || rng.uniform() < 0.4));
        row_ptr.push(col_idx.len() as i32);
    }
    let values: Vec<f32> = (0..col_idx.len() * bh * bw).map(|_| rng.symmetric()).collect();
    let a = BsrMatrix::from_bsr(ctx, m, k, (bh, bw), &row_ptr, &col_idx, &values, Default::default())?;
    let b = Dense::from_fn(k, n, Layout::RowMajor, |_, _| rng.symmetric());
    let mut c = Dense::from_fn(m, n, layout, |_, _| f32::NAN);
    matmul_into(ctx, &a, b.view(), c.view_mut(), &MatmulOptions::new())?;

    let (mut want, mut magnitude) = (vec![0f64; m * n], vec![0f64; m * n]);
    for r in 0..m / bh {
        for block in row_ptr[r] as usize..row_ptr[r + 1] as usize {
            let col0 = col_idx[block] as usize * bw;
            for i in 0..bh {
                for p in 0..bw {
                    let av = values[(block * bh + i) * bw + p] as f64;
                    for j in 0..n {
                        let bv = b.get(col0 + p, j) as f64;
                        want[(r * bh + i) * n + j] += av * bv;
                        magnitude[(r * bh + i) * n + j] += (av * bv).abs();
                    }
                }
            }
        }
    }
    let mut worst = 0f64;
    for i in 0..m {
        for j in 0..n {
            let (got, w) = (c.get(i, j) as f64, want[i * n + j]);
            let bound = 2.0 * k as f64 * f32::EPSILON as f64 * magnitude[i * n + j] + f32::EPSILON as f64 * w.abs() + 1e-30;
            let error = (got - w).abs();
            // NaN (an element never written) fails this comparison too.
            if !(error <= bound) {
                return Err(format!("{m}x{k} ({bh}x{bw} blocks) x {k}x{n}, C {layout:?}: C[{i}][{j}] = {got}, want {w} (bound {bound:.3e})").into());
            }
            worst = worst.max(error);
        }
    }
    println!("smoke: {m}x{k} ({bh}x{bw} blocks, {} stored) x {k}x{n} f32, C {layout:?}: {} elements, max |error| {worst:.3e}",
        a.nnzb(), m * n);
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let expected = std::env::args().nth(1).ok_or("usage: smoke <expected version>")?;
    if bsrmm::version() != expected {
        return Err(format!("the core says version {}, the crates are {expected}", bsrmm::version()).into());
    }
    println!("smoke: bsrmm {expected}, CUDA compiled: {}, {} variants", bsrmm::cuda_compiled(), bsrmm::variants().len());

    let seed = SystemTime::now().duration_since(UNIX_EPOCH)?.as_nanos() as u64 ^ u64::from(std::process::id());
    println!("smoke: seed {seed}");
    let mut rng = Rng(seed);
    let ctx = Context::cpu()?;
    check_case(&ctx, &mut rng, (96, 80, 24), (16, 8), Layout::RowMajor)?;
    check_case(&ctx, &mut rng, (64, 64, 16), (32, 32), Layout::ColMajor)?;

    // Bad input is an Err naming the rule, never a panic.
    let err = BsrMatrix::<f32>::from_bsr(&ctx, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 5], &[0.; 8], Default::default())
        .err()
        .ok_or("a column index past the last block column was accepted")?;
    if err.code() != "BSRMM_STATUS_INVALID_ARGUMENT" {
        return Err(format!("out-of-range column index: {} ({}), expected BSRMM_STATUS_INVALID_ARGUMENT", err.code(), err.message()).into());
    }
    println!("smoke: out-of-range column index -> {}: {}", err.code(), err.message());
    println!("smoke: ok");
    Ok(())
}
