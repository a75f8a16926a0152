//! The op on Burn's CUDA backend (built with feature `cuda` only, see Cargo.toml): bsrmm
//! multiplies Burn's own device tensors, checked element by element against float64 references
//! for f32, f16 and bf16; the SDDMM (the weight gradient) likewise; gradients and a BsrLinear
//! model training on the GPU; bad input; and
//! (ignored unless asked for) the timing of the README's product. Skips (with the reason) where
//! there is no CUDA device; with BSRMM_TEST_REQUIRE_CUDA=1 (the GPU machine's runners) that fails.

use std::time::Instant;

use burn::tensor::{Device, Distribution, FloatDType, Tensor, TensorData};
use burn_bsrmm::bsr_matmul;

mod common;

use common::{op_a, problem, Problem, Rng};

fn cuda_or_skip(test: &str) -> Option<Device> {
    let Some(reason) = bsrmm::cuda_unavailable_reason() else { return Some(Device::cuda(0)) };
    if std::env::var("BSRMM_TEST_REQUIRE_CUDA").is_ok_and(|v| v == "1") {
        panic!("{test}: BSRMM_TEST_REQUIRE_CUDA=1 but {reason}");
    }
    eprintln!("SKIP {test}: {reason}");
    None
}

/// `x` rounded to `dtype` and back, so references use exactly the values the GPU sees.
fn round(x: f32, dtype: FloatDType) -> f32 {
    match dtype {
        FloatDType::F16 => bsrmm::f16::from_f32(x).to_f32(),
        FloatDType::BF16 => bsrmm::bf16::from_f32(x).to_f32(),
        _ => x,
    }
}

/// Relative tolerance on the magnitude sum (fp32 accumulation; the output's own rounding).
fn tolerance(dtype: FloatDType) -> f64 {
    match dtype {
        FloatDType::F16 => 2e-3,
        FloatDType::BF16 => 1.6e-2,
        _ => 1e-5,
    }
}

fn on_device<const D: usize>(data: Vec<f32>, shape: [usize; D], device: &Device, dtype: FloatDType) -> Tensor<D> {
    Tensor::<D>::from_data(TensorData::new(data, shape), device).cast(dtype)
}

fn to_host<const D: usize>(tensor: Tensor<D>) -> Vec<f32> {
    tensor.cast(FloatDType::F32).into_data().try_to_vec::<f32>().unwrap()
}

/// Checks every element of `got` (m x n, row-major) against op(A) * dense.
fn check(what: &str, p: &Problem, transpose: bool, dense: impl Fn(usize, usize) -> f64, n: usize, got: &[f32], tol: f64) {
    let (m, k) = p.pattern.op_shape(transpose);
    assert_eq!(got.len(), m * n, "{what}: length");
    let a = op_a(p, transpose);
    for i in 0..m {
        for j in 0..n {
            let (mut want, mut scale) = (0.0, 0.0);
            for q in 0..k {
                want += a(i, q) * dense(q, j);
                scale += (a(i, q) * dense(q, j)).abs();
            }
            let g = got[i * n + j] as f64;
            let bound = tol * (scale + want.abs()) + 1e-30;
            assert!((g - want).abs() <= bound, "{what}: C[{i}][{j}] = {g}, reference {want} (bound {bound})");
        }
    }
}

/// A problem whose values are already rounded to `dtype`.
fn rounded_problem(rng: &mut Rng, block_rows: usize, block_cols: usize, block: (usize, usize), dtype: FloatDType) -> Problem {
    let mut p = problem(rng, block_rows, block_cols, block);
    let (bh, bw) = block;
    let cols = p.pattern.cols();
    for v in &mut p.values {
        *v = round(*v, dtype);
    }
    for (blk, (&r, &c)) in p.pattern.block_row().iter().zip(p.pattern.col_idx()).enumerate() {
        for i in 0..bh {
            for j in 0..bw {
                p.a[(r as usize * bh + i) * cols + c as usize * bw + j] = p.values[(blk * bh + i) * bw + j] as f64;
            }
        }
    }
    p
}

#[test]
fn cuda_forward_matches_reference() {
    let Some(device) = cuda_or_skip("cuda_forward_matches_reference") else { return };
    let mut rng = Rng(21);
    for dtype in [FloatDType::F32, FloatDType::F16, FloatDType::BF16] {
        for (block_rows, block_cols, block) in [(6, 5, (16, 16)), (3, 4, (32, 32)), (2, 2, (64, 64))] {
            for transpose in [false, true] {
                let p = rounded_problem(&mut rng, block_rows, block_cols, block, dtype);
                let (m, k) = p.pattern.op_shape(transpose);
                let n = 24;
                let b: Vec<f32> = rng.values(k * n).into_iter().map(|v| round(v, dtype)).collect();
                let values = on_device(p.values.clone(), p.pattern.values_shape(), &device, dtype);
                let dense = on_device(b.clone(), [k, n], &device, dtype);
                let out = bsr_matmul(&p.pattern, values, dense, transpose).unwrap();
                assert_eq!(out.dims(), [m, n]);
                assert_eq!(out.device(), device, "the result stays on the GPU");
                assert_eq!(out.dtype(), dtype.into());
                let what = format!("{dtype:?} block {block:?} transpose {transpose}");
                check(&what, &p, transpose, |q, j| b[q * n + j] as f64, n, &to_host(out), tolerance(dtype));
            }
        }
    }
}

#[test]
fn cuda_transposed_view_as_dense_input() {
    // BsrLinear passes x^T: a transposed contiguous tensor, read in place as column-major.
    let Some(device) = cuda_or_skip("cuda_transposed_view_as_dense_input") else { return };
    let mut rng = Rng(22);
    for dtype in [FloatDType::F32, FloatDType::F16, FloatDType::BF16] {
        let p = rounded_problem(&mut rng, 4, 3, (16, 16), dtype);
        let (batch, k) = (20, p.pattern.cols());
        let x: Vec<f32> = rng.values(batch * k).into_iter().map(|v| round(v, dtype)).collect();
        let xt = on_device(x.clone(), [batch, k], &device, dtype).transpose();
        let values = on_device(p.values.clone(), p.pattern.values_shape(), &device, dtype);
        let out = bsr_matmul(&p.pattern, values, xt, false).unwrap();
        check(&format!("{dtype:?} from x^T"), &p, false, |q, j| x[j * k + q] as f64, batch, &to_host(out), tolerance(dtype));
    }
}

#[test]
fn cuda_gradients_match_reference() {
    let Some(device) = cuda_or_skip("cuda_gradients_match_reference") else { return };
    let device = device.autodiff();
    let mut rng = Rng(23);
    let p = problem(&mut rng, 3, 2, (16, 16));
    let (m, k) = p.pattern.op_shape(false);
    let n = 6;
    let b = rng.values(k * n);
    let w = rng.values(m * n); // loss = sum(C * W), so dC = W
    let values = on_device(p.values.clone(), p.pattern.values_shape(), &device, FloatDType::F32).require_grad();
    let dense = on_device(b.clone(), [k, n], &device, FloatDType::F32).require_grad();
    let out = bsr_matmul(&p.pattern, values.clone(), dense.clone(), false).unwrap();
    let grads = (out * on_device(w.clone(), [m, n], &device, FloatDType::F32)).sum().backward();
    // dB = A^T dC: the op itself, transposed, on the GPU.
    let grad_dense = to_host(dense.grad(&grads).expect("dense gradient"));
    check("dB", &p, true, |i, j| w[i * n + j] as f64, n, &grad_dense, 1e-5);
    // dV = (dC B^T)[stored blocks]: bsrmm's SDDMM on the GPU, B^T read in place.
    let grad_values = to_host(values.grad(&grads).expect("values gradient"));
    check_sddmm("dV", &p, |i, q| w[i * n + q] as f64, |q, j| b[j * n + q] as f64, n, &grad_values, 1e-5);
}

/// Checks `got` (`[nnzb, bh, bw]`, flat) against (X Y)[stored blocks] with `x(i, q)`, `y(q, j)`.
fn check_sddmm(what: &str, p: &Problem, x: impl Fn(usize, usize) -> f64, y: impl Fn(usize, usize) -> f64, t: usize, got: &[f32], tol: f64) {
    let (bh, bw) = p.pattern.block_shape();
    assert_eq!(got.len(), p.pattern.nnzb() * bh * bw, "{what}: length");
    for (blk, (&r, &c)) in p.pattern.block_row().iter().zip(p.pattern.col_idx()).enumerate() {
        for i in 0..bh {
            for j in 0..bw {
                let (row, col) = (r as usize * bh + i, c as usize * bw + j);
                let (mut want, mut scale) = (0.0, 0.0);
                for q in 0..t {
                    want += x(row, q) * y(q, col);
                    scale += (x(row, q) * y(q, col)).abs();
                }
                let g = got[(blk * bh + i) * bw + j] as f64;
                let bound = tol * (scale + want.abs()) + 1e-30;
                assert!((g - want).abs() <= bound, "{what}: block {blk} [{i}][{j}] = {g}, reference {want} (bound {bound})");
            }
        }
    }
}

/// The SDDMM on Burn's CUDA tensors for f32, f16 and bf16, square and non-square blocks, with Y
/// a transposed view (read in place as column-major), as the weight gradient passes it.
#[test]
fn cuda_sddmm_matches_reference() {
    let Some(device) = cuda_or_skip("cuda_sddmm_matches_reference") else { return };
    let mut rng = Rng(25);
    for dtype in [FloatDType::F32, FloatDType::F16, FloatDType::BF16] {
        for (block_rows, block_cols, block) in [(6, 5, (16, 16)), (3, 2, (32, 64)), (2, 2, (64, 64)), (2, 3, (128, 128))] {
            let p = problem(&mut rng, block_rows, block_cols, block);
            let (rows, cols, t) = (p.pattern.rows(), p.pattern.cols(), 72);
            let x: Vec<f32> = rng.values(rows * t).into_iter().map(|v| round(v, dtype)).collect();
            let y: Vec<f32> = rng.values(cols * t).into_iter().map(|v| round(v, dtype)).collect(); // [cols, t]
            let values = burn_bsrmm::bsr_sddmm(
                &p.pattern,
                on_device(x.clone(), [rows, t], &device, dtype),
                on_device(y.clone(), [cols, t], &device, dtype).transpose(),
            )
            .unwrap();
            assert_eq!((values.dims(), values.device()), (p.pattern.values_shape(), device.clone()));
            let what = format!("{dtype:?} sddmm block {block:?}");
            check_sddmm(&what, &p, |i, q| x[i * t + q] as f64, |q, j| y[j * t + q] as f64, t, &to_host(values), tolerance(dtype));
        }
    }
}

/// The op between CubeCL kernels with no host synchronisation of the test's own: the dense input
/// is made by CubeCL kernels just before the op; the op's inputs are dropped right after it and
/// new tensors may take their memory; its output is read by a CubeCL kernel and by a second op
/// at once. f32 on 2048 x 2048 (32x32 blocks, half stored) x 512 keeps the GPU busy long enough
/// for a missing order to show, and three threads run the chain at once (CubeCL gives each its
/// own stream, and the op launches on the calling thread's). The op returns before its multiply
/// ends, so this is what guards the ordering (an earlier attempt with device flags deadlocked
/// here: docs/perf-log.md entry 14).
/// 16 sampled columns of both results are checked in full against float64.
#[test]
fn cuda_chained_ops_stay_ordered() {
    let Some(device) = cuda_or_skip("cuda_chained_ops_stay_ordered") else { return };
    let p = rounded_problem(&mut Rng(24), 64, 64, (32, 32), FloatDType::F32);
    std::thread::scope(|scope| {
        let runs: Vec<_> = (0..3u64).map(|t| {
            let (p, device) = (&p, device.clone());
            scope.spawn(move || chain_of_ops(p, &device, 100 + t))
        }).collect();
        for run in runs {
            run.join().expect("a chain panicked");
        }
    });
}

fn chain_of_ops(p: &Problem, device: &Device, seed: u64) {
    let mut rng = Rng(seed);
    let (m, n) = (p.pattern.rows(), 512);
    for round in 0..2 {
        let b = rng.values(m * n);
        let values = on_device(p.values.clone(), p.pattern.values_shape(), device, FloatDType::F32);
        // d = 2 b + 1, made on CubeCL's stream right before the op.
        let dense = on_device(b.clone(), [m, n], device, FloatDType::F32) * 2.0 + 1.0;
        let first = bsr_matmul(&p.pattern, values.clone(), dense, false).unwrap();
        // New tensors, free to land in the dense input's memory while the multiply runs.
        let _noise: Vec<Tensor<2>> = (0..4).map(|_| Tensor::<2>::random([m, n], Distribution::Default, device)).collect();
        let halved = first.clone() * 0.5;
        let second = bsr_matmul(&p.pattern, values, first, false).unwrap();
        let (halved, second) = (to_host(halved), to_host(second));

        // References, float64 throughout: r1 = A d, then 0.5 r1 and A r1, on 16 columns; bounds
        // relative to the sums of term magnitudes (f32 accumulation, as check() allows).
        let a = op_a(p, false);
        let tol = tolerance(FloatDType::F32);
        for j in (0..16).map(|_| (rng.unit() * n as f64) as usize) {
            let d = |r: usize| 2.0 * b[r * n + j] as f64 + 1.0;
            let first_ref: Vec<f64> = (0..m).map(|q| (0..m).map(|r| a(q, r) * d(r)).sum()).collect();
            let first_mag: Vec<f64> = (0..m).map(|q| (0..m).map(|r| (a(q, r) * d(r)).abs()).sum()).collect();
            for i in 0..m {
                let want_half = 0.5 * first_ref[i];
                let got_half = halved[i * n + j] as f64;
                assert!((got_half - want_half).abs() <= tol * first_mag[i], "seed {seed} round {round}: 0.5 C1[{i}][{j}] = {got_half}, reference {want_half}");
                let (mut want, mut scale) = (0.0, 0.0);
                for q in 0..m {
                    want += a(i, q) * first_ref[q];
                    scale += a(i, q).abs() * first_mag[q];
                }
                let got = second[i * n + j] as f64;
                assert!((got - want).abs() <= tol * scale, "seed {seed} round {round}: C2[{i}][{j}] = {got}, reference {want}");
            }
        }
    }
}

#[test]
fn cuda_bsr_linear_model_trains() {
    let Some(device) = cuda_or_skip("cuda_bsr_linear_model_trains") else { return };
    let losses = common::train_mlp(&device.autodiff());
    let (first, last) = (losses[0], *losses.last().unwrap());
    eprintln!("BsrLinear MLP on CUDA, loss: {first:.5} -> {last:.5}");
    assert!(last.is_finite() && last < 0.25 * first, "loss did not fall enough: {losses:?}");
}

#[test]
fn cuda_operands_on_two_devices_are_an_error() {
    let Some(device) = cuda_or_skip("cuda_operands_on_two_devices_are_an_error") else { return };
    let pattern = burn_bsrmm::BsrPattern::from_block_fn(32, 32, (16, 16), |r, c| r == c).unwrap();
    let values = Tensor::<3>::ones(pattern.values_shape(), &device);
    let err = bsr_matmul(&pattern, values.clone(), Tensor::<2>::ones([32, 4], &Device::flex()), false).unwrap_err();
    assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT");
    assert!(err.message().contains("values are on"), "{err}");
    let err = bsr_matmul(&pattern, values, Tensor::<2>::ones([32, 4], &device).cast(FloatDType::F16), false).unwrap_err();
    assert!(err.message().contains("values are"), "{err}");
}

/// The product of bsrmm's gpu_timing example and its Python twin (M = K = 8192, N = 4096, 64x64
/// blocks, density 1/8, fp16), on Burn tensors that live on the GPU: the op reads Burn's device
/// buffers in place, no operand goes through the host. Each call allocates its output and
/// queues the multiply on CubeCL's stream (src/cuda.rs); 50 calls are timed to a final device
/// synchronisation, as the Python twin is: milliseconds per call.
/// 256 elements of the result are checked against float64. A timing, not a test: run it with
///     cargo test -p burn-bsrmm --features cuda --test cuda -- --ignored --nocapture cuda_timing
#[test]
#[ignore = "a timing: run with --ignored --nocapture on a GPU"]
fn cuda_timing() {
    let Some(device) = cuda_or_skip("cuda_timing") else { return };
    let (m, k, n, block, iters) = (8192, 8192, 4096, 64, 50);
    // In block row r, block column group j (8 columns wide) holds one block, at 8j + (3r + 5j) mod 8.
    let pattern = burn_bsrmm::BsrPattern::from_block_fn(m, k, (block, block), |r, c| c % 8 == (3 * r + 5 * (c / 8)) % 8).unwrap();
    let uniform = Distribution::Uniform(-1.0, 1.0);
    let values = Tensor::<3>::random(pattern.values_shape(), uniform, &device).cast(FloatDType::F16);
    let dense = Tensor::<2>::random([k, n], uniform, &device).cast(FloatDType::F16);

    for _ in 0..3 {
        bsr_matmul(&pattern, values.clone(), dense.clone(), false).unwrap();
    }
    device.sync().unwrap();
    let start = Instant::now();
    let mut out = bsr_matmul(&pattern, values.clone(), dense.clone(), false).unwrap();
    for _ in 1..iters {
        out = bsr_matmul(&pattern, values.clone(), dense.clone(), false).unwrap();
    }
    let queued_ms = start.elapsed().as_secs_f64() * 1e3 / iters as f64;
    device.sync().unwrap();
    let ms = start.elapsed().as_secs_f64() * 1e3 / iters as f64;
    let flops = 2.0 * (pattern.nnzb() * block * block) as f64 * n as f64;
    println!(
        "burn-bsrmm (Burn CUDA tensors): {ms:.3} ms per call ({:.0} effective TFLOPS), A {m}x{k} fp16 {block}x{block} blocks, {} stored, B {k}x{n}, {iters} iterations",
        flops / (ms * 1e-3) / 1e12,
        pattern.nnzb()
    );
    println!("burn-bsrmm: {queued_ms:.3} ms per call had returned to the caller (the rest is the final synchronisation)");

    // 256 elements against float64, from host copies of the operands.
    let to_host = |t: Tensor<2>| t.cast(FloatDType::F32).into_data().try_to_vec::<f32>().unwrap();
    let (c, b) = (to_host(out), to_host(dense));
    let v = values.cast(FloatDType::F32).into_data().try_to_vec::<f32>().unwrap();
    let (row_ptr, col_idx) = (pattern.row_ptr(), pattern.col_idx());
    let mut state = 8u64;
    let mut pick = |limit: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as usize % limit
    };
    for _ in 0..256 {
        let (i, j) = (pick(m), pick(n));
        let r = i / block;
        let (mut want, mut scale) = (0.0f64, 0.0f64);
        for idx in row_ptr[r] as usize..row_ptr[r + 1] as usize {
            let col0 = col_idx[idx] as usize * block;
            for p in 0..block {
                let term = v[(idx * block + i % block) * block + p] as f64 * b[(col0 + p) * n + j] as f64;
                want += term;
                scale += term.abs();
            }
        }
        let got = c[i * n + j] as f64;
        assert!((got - want).abs() <= 2e-3 * (scale + want.abs()), "C[{i}][{j}] = {got}, float64 reference {want}");
    }
    println!("checked 256 elements of the result against float64: ok");
}
