//! Multiply a random block-sparse matrix by a dense one and time it.
//!
//!     cargo run --release -p bsrmm --example matmul -- [M K N BLOCK DENSITY]
//!     cargo run --release -p bsrmm --example matmul -- 2048 2048 512 32 0.1
//!
//! Runs on the CPU context (GPU operands are device pointers, passed through
//! `DenseRef::from_raw_parts`; the benchmark suite in packages/bench times the GPU). Prints the
//! effective GFLOP/s (work on stored blocks only) and spot-checks the result against a float64
//! reference.

use std::time::Instant;

use bsrmm::{matmul_into, BsrMatrix, Context, Dense, Layout, MatmulOptions};

fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: T) -> T {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// SplitMix64, for reproducible operands without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Errors print as `matmul: BSRMM_STATUS_...: message` (their Display), not the Debug dump a
/// `main` returning `Result` prints.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("matmul: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), bsrmm::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (m, k, n): (usize, usize, usize) = (arg(&args, 0, 2048), arg(&args, 1, 2048), arg(&args, 2, 512));
    let block: usize = arg(&args, 3, 32);
    let density: f64 = arg(&args, 4, 0.1);
    let mut rng = Rng(42);
    let (block_rows, block_cols) = (m / block.max(1), k / block.max(1));
    let mut row_ptr = vec![0i32];
    let mut col_idx = Vec::new();
    for _ in 0..block_rows {
        col_idx.extend((0..block_cols as i32).filter(|_| rng.next() < density));
        row_ptr.push(col_idx.len() as i32);
    }
    let values: Vec<f32> = (0..col_idx.len() * block * block).map(|_| (rng.next() * 2.0 - 1.0) as f32).collect();
    let ctx = Context::cpu()?;
    let a = BsrMatrix::from_bsr(&ctx, m, k, (block, block), &row_ptr, &col_idx, &values, Default::default())?;
    let b = Dense::from_fn(k, n, Layout::RowMajor, |_, _| (rng.next() * 2.0 - 1.0) as f32);
    let mut c = Dense::<f32>::zeros(m, n, Layout::RowMajor);

    let options = MatmulOptions::new();
    matmul_into(&ctx, &a, b.view(), c.view_mut(), &options)?; // warm-up (and tuning)
    let mut times = Vec::new();
    for _ in 0..10 {
        let start = Instant::now();
        matmul_into(&ctx, &a, b.view(), c.view_mut(), &options)?;
        ctx.synchronize()?;
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let flops = 2.0 * a.nnz() as f64 * n as f64;
    println!(
        "A {m}x{k} f32, {block}x{block} blocks, {} stored ({:.1}% dense), B {k}x{n}, on the CPU: \
         median {:.3} ms, {:.1} effective GFLOP/s, variant {}",
        a.nnzb(),
        100.0 * a.nnzb() as f64 / (block_rows * block_cols).max(1) as f64,
        median * 1e3,
        flops / median / 1e9,
        ctx.last_variant()
    );

    // Spot-check 64 elements against a float64 dot product over the stored blocks.
    let mut worst: f64 = 0.0;
    for _ in 0..64 {
        let (i, j) = ((rng.next() * m as f64) as usize, (rng.next() * n as f64) as usize);
        let r = i / block;
        let (mut want, mut scale) = (0.0f64, 0.0f64);
        for idx in row_ptr[r] as usize..row_ptr[r + 1] as usize {
            let col0 = col_idx[idx] as usize * block;
            for p in 0..block {
                let term = values[(idx * block + i % block) * block + p] as f64 * b.get(col0 + p, j) as f64;
                want += term;
                scale += term.abs();
            }
        }
        worst = worst.max((c.get(i, j) as f64 - want).abs() / scale.max(f64::MIN_POSITIVE));
    }
    println!("spot check: worst relative error {worst:.2e} over 64 elements");
    if worst > 1e-5 {
        return Err(bsrmm::Error::new(bsrmm::Status::Internal, format!("relative error {worst:.2e} > 1e-5")));
    }
    Ok(())
}
