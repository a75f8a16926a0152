//! Times the device-resident GPU multiply of the Rust API: A (a BSR matrix on the GPU) times B
//! into C, both in device memory, no host copy per call. The same product, operand for operand,
//! as the Python one-liner in packages/rust-burn/README.md, so the two times compare directly.
//!
//!     cargo run --release -p bsrmm --example gpu_timing -- [M K N BLOCK ITERS]
//!     (defaults 8192 8192 4096 64 50; fp16; density 1/8)
//!
//! The pattern is deterministic: in block row r, block column group j (8 columns wide) holds one
//! block, at column 8j + (3r + 5j) mod 8: density exactly 0.125, spread over every column.
//! Warm-up runs first (the tuner measures its candidates there), then ITERS multiplies are
//! queued back to back and timed to the final synchronisation: milliseconds per multiply. Then
//! the same ITERS the way burn-bsrmm's CUDA op runs them (new values each call, synchronised).
//! 256 elements of C are then checked against float64 dot products.

use std::time::Instant;

use bsrmm::{f16, matmul_into, BsrMatrix, Context, Device, DeviceBuffer, Layout, MatmulOptions};

fn arg(args: &[String], i: usize, default: usize) -> usize {
    args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// SplitMix64 in [-1, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// Errors print as `gpu_timing: BSRMM_STATUS_...: message` (their Display), not the Debug dump a
/// `main` returning `Result` prints.
fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpu_timing: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), bsrmm::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (m, k, n, block, iters) = (arg(&args, 0, 8192), arg(&args, 1, 8192), arg(&args, 2, 4096), arg(&args, 3, 64), arg(&args, 4, 50).max(1));
    if bsrmm::cuda_device_count().unwrap_or(0) == 0 {
        eprintln!("gpu_timing: no CUDA device ({})", bsrmm::cuda_device_count().err().map_or("0 devices".into(), |e| e.to_string()));
        std::process::exit(2);
    }
    let (block_rows, groups) = (m / block, k / block / 8);
    let mut row_ptr = vec![0i32];
    let mut col_idx = Vec::new();
    for r in 0..block_rows {
        col_idx.extend((0..groups).map(|j| (8 * j + (3 * r + 5 * j) % 8) as i32));
        row_ptr.push(col_idx.len() as i32);
    }
    let mut rng = Rng(7);
    let values: Vec<f16> = (0..col_idx.len() * block * block).map(|_| f16::from_f64(rng.next())).collect();
    let b: Vec<f16> = (0..k * n).map(|_| f16::from_f64(rng.next())).collect();

    let gpu = Context::new(Device::Cuda(0))?;
    let a = BsrMatrix::from_bsr(&Context::cpu()?, m, k, (block, block), &row_ptr, &col_idx, &values, Default::default())?.copy_to(&gpu)?;
    let d_b = DeviceBuffer::from_host(Device::Cuda(0), &b)?;
    // Poisoned: an element no multiply writes stays NaN and fails the check below.
    let mut d_c = DeviceBuffer::from_host(Device::Cuda(0), &vec![f16::NAN; m * n])?;
    let options = MatmulOptions::new();
    for _ in 0..3 {
        matmul_into(&gpu, &a, d_b.view(k, n, n, Layout::RowMajor)?, d_c.view_mut(m, n, n, Layout::RowMajor)?, &options)?;
    }
    gpu.synchronize()?;
    let start = Instant::now();
    for _ in 0..iters {
        matmul_into(&gpu, &a, d_b.view(k, n, n, Layout::RowMajor)?, d_c.view_mut(m, n, n, Layout::RowMajor)?, &options)?;
    }
    gpu.synchronize()?;
    let ms = start.elapsed().as_secs_f64() * 1e3 / iters as f64;
    let flops = 2.0 * a.nnz() as f64 * n as f64;
    println!(
        "rust bsrmm (device-resident): {ms:.3} ms per multiply ({:.0} effective TFLOPS), A {m}x{k} fp16 {block}x{block} blocks, {} stored, B {k}x{n}, {iters} iterations, variant {}",
        flops / (ms * 1e-3) / 1e12,
        a.nnzb(),
        gpu.last_variant()
    );

    // What a training step pays per multiply when the values change (burn-bsrmm's CUDA op does
    // this): a matrix over device values that shares A's structure, the multiply, and a
    // synchronisation, call after call. Same values, so the check below still holds.
    let d_values = DeviceBuffer::from_host(Device::Cuda(0), &values)?;
    let values_ptr = d_values.view(values.len(), 1, 1, Layout::RowMajor)?.as_ptr();
    let start = Instant::now();
    for _ in 0..iters {
        // SAFETY: d_values holds a.nnz() values on the GPU and outlives `step`.
        let step = unsafe { a.with_raw_values(values_ptr, Device::Cuda(0), true)? };
        matmul_into(&gpu, &step, d_b.view(k, n, n, Layout::RowMajor)?, d_c.view_mut(m, n, n, Layout::RowMajor)?, &options)?;
        gpu.synchronize()?;
    }
    let step_ms = start.elapsed().as_secs_f64() * 1e3 / iters as f64;
    println!("rust bsrmm (values swapped in and synchronised every call, as burn-bsrmm does): {step_ms:.3} ms per call");

    // Every output is checked somewhere: here 256 elements against float64.
    let c = d_c.to_vec()?;
    let mut pick = Rng(8);
    for _ in 0..256 {
        let i = ((pick.next() + 1.0) * 0.5 * m as f64) as usize % m;
        let j = ((pick.next() + 1.0) * 0.5 * n as f64) as usize % n;
        let r = i / block;
        let (mut want, mut scale) = (0.0f64, 0.0f64);
        for idx in row_ptr[r] as usize..row_ptr[r + 1] as usize {
            let col0 = col_idx[idx] as usize * block;
            for p in 0..block {
                let term = values[(idx * block + i % block) * block + p].to_f64() * b[(col0 + p) * n + j].to_f64();
                want += term;
                scale += term.abs();
            }
        }
        let got = c[i * n + j].to_f64();
        if (got - want).abs() > 2e-3 * (scale + want.abs()) {
            eprintln!("gpu_timing: C[{i}][{j}] = {got}, float64 reference {want}");
            std::process::exit(1);
        }
    }
    println!("checked 256 elements of C against float64: ok");
    Ok(())
}
