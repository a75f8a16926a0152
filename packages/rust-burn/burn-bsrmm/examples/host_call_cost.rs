//! What one `bsr_matmul` on Flex (Burn's CPU backend) costs beside the core's own multiply on
//! the same operands, by N: the per-call work of the host path (reading the tensors, the core
//! matrix for the call's values, the result) at decode sizes, where the multiply itself is short.
//!
//!     cargo run --release -p burn-bsrmm --example host_call_cost
//!
//! Prints microseconds per call (median of 15 timed batches); docs/perf-log.md entry 97.
use std::time::Instant;

use bsrmm::{BsrMatrix, Context, CreateOptions, DenseRef, Layout, MatmulOptions, SddmmOptions};
use burn::tensor::{Device, Tensor, TensorData};
use burn_bsrmm::{bsr_matmul, bsr_sddmm, BsrPattern};

fn median_us(mut run: impl FnMut(), calls: usize) -> f64 {
    run();
    let mut batches: Vec<f64> = (0..15)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..calls {
                run();
            }
            start.elapsed().as_secs_f64() * 1e6 / calls as f64
        })
        .collect();
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}

fn main() -> bsrmm::Result<()> {
    let device = Device::flex();
    let ctx = Context::cpu()?;
    // A 4096 x 4096 layer of 64 x 64 blocks, a quarter of each block row stored (fixed pattern).
    let (size, block) = (4096usize, 64usize);
    let blocks = size / block;
    let pattern = BsrPattern::from_block_fn(size, size, (block, block), |r, c| (r * 7 + c * 13) % 4 == 0)?;
    let values: Vec<f32> = (0..pattern.nnzb() * block * block).map(|i| ((i * 37 % 101) as f32 - 50.0) / 50.0).collect();
    let values_tensor = Tensor::<3>::from_data(TensorData::new(values.clone(), pattern.values_shape()), &device);
    let (row_ptr, col_idx): (Vec<i64>, Vec<i64>) = (pattern.row_ptr().to_vec(), pattern.col_idx().to_vec());
    let core = BsrMatrix::from_bsr(&ctx, size, size, (block, block), &row_ptr, &col_idx, &values, CreateOptions::default())?;
    println!("{size} x {size}, blocks {block}, {} of {} stored, f32", pattern.nnzb(), blocks * blocks);
    for n in [1usize, 4, 16, 64, 256] {
        let b: Vec<f32> = (0..size * n).map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0).collect();
        let dense = Tensor::<2>::from_data(TensorData::new(b.clone(), [size, n]), &device);
        let calls = if n <= 16 { 40 } else { 8 };
        let burn_us = median_us(|| drop(bsr_matmul(&pattern, values_tensor.clone(), dense.clone(), false).unwrap()), calls);
        let core_us = median_us(
            || {
                let view = DenseRef::packed(&b, size, n, Layout::RowMajor).unwrap();
                drop(bsrmm::matmul(&ctx, &core, view, Layout::RowMajor, &MatmulOptions::new()).unwrap());
            },
            calls,
        );
        println!("N = {n:4}: burn-bsrmm on Flex {burn_us:9.1} us, the core's multiply {core_us:9.1} us ({:.2}x)", burn_us / core_us);
    }
    // The values' gradient of C = A B as autodiff asks for it: sddmm(dC, B^T), B^T a swapped-dims
    // view of the row-major B (no copy made by the caller).
    for n in [16usize, 256] {
        let dc: Vec<f32> = (0..size * n).map(|i| ((i * 29 % 89) as f32 - 44.0) / 44.0).collect();
        let b: Vec<f32> = (0..size * n).map(|i| ((i * 53 % 97) as f32 - 48.0) / 48.0).collect();
        let dc_tensor = Tensor::<2>::from_data(TensorData::new(dc.clone(), [size, n]), &device);
        let b_tensor = Tensor::<2>::from_data(TensorData::new(b.clone(), [size, n]), &device);
        let burn_us = median_us(|| drop(bsr_sddmm(&pattern, dc_tensor.clone(), b_tensor.clone().transpose()).unwrap()), 4);
        let core_us = median_us(
            || {
                let x = DenseRef::packed(&dc, size, n, Layout::RowMajor).unwrap();
                let y = DenseRef::new(&b, n, size, n, Layout::ColMajor).unwrap();
                drop(bsrmm::sddmm(&ctx, &core, x, y, &SddmmOptions::new()).unwrap());
            },
            4,
        );
        println!("SDDMM, T = {n:4}: burn-bsrmm on Flex {burn_us:9.1} us, the core's {core_us:9.1} us ({:.2}x)", burn_us / core_us);
    }
    Ok(())
}
