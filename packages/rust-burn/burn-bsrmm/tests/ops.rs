//! The op and its gradients on Flex (Burn's CPU backend), element by element against float64
//! references on fresh random operands.

use burn::tensor::{DType, Device, Tensor, TensorData};
use burn_bsrmm::{bsr_matmul, bsr_matmul_bias, bsr_sddmm, BsrPattern};

mod common;

use common::{op_a, problem, Rng};

fn assert_close(what: &str, got: &[f32], want: &[f64], scale: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (idx, ((&g, &w), &s)) in got.iter().zip(want).zip(scale).enumerate() {
        assert!((g as f64 - w).abs() <= 1e-5 * s + 1e-30, "{what}[{idx}] = {g}, reference {w}");
    }
}

/// op(A) * B in float64 (B row-major, n columns), with each element's sum of |terms|.
fn product_reference(p: &common::Problem, transpose: bool, b: &[f32], n: usize) -> (Vec<f64>, Vec<f64>) {
    let (m, k) = p.pattern.op_shape(transpose);
    let a = op_a(p, transpose);
    let mut want = vec![0.0; m * n];
    let mut scale = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for q in 0..k {
                want[i * n + j] += a(i, q) * b[q * n + j] as f64;
                scale[i * n + j] += (a(i, q) * b[q * n + j] as f64).abs();
            }
        }
    }
    (want, scale)
}

fn tensor3(data: Vec<f32>, shape: [usize; 3], device: &Device) -> Tensor<3> {
    Tensor::from_data(TensorData::new(data, shape), device)
}

fn tensor2(data: Vec<f32>, shape: [usize; 2], device: &Device) -> Tensor<2> {
    Tensor::from_data(TensorData::new(data, shape), device)
}

#[test]
fn forward_matches_reference() {
    let device = Device::flex();
    let mut rng = Rng(11);
    for (block_rows, block_cols, block) in [(3, 4, (2, 3)), (5, 2, (4, 4)), (4, 4, (1, 1))] {
        for transpose in [false, true] {
            let p = problem(&mut rng, block_rows, block_cols, block);
            let (m, k) = p.pattern.op_shape(transpose);
            let n = 7;
            let b = rng.values(k * n);
            let out = bsr_matmul(
                &p.pattern,
                tensor3(p.values.clone(), p.pattern.values_shape(), &device),
                tensor2(b.clone(), [k, n], &device),
                transpose,
            )
            .unwrap();
            assert_eq!(out.dims(), [m, n]);
            let (want, scale) = product_reference(&p, transpose, &b, n);
            assert_close(&format!("C {block:?} transpose={transpose}"), &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
        }
    }
}

// The host multiply keeps one validated core matrix per pattern (shared with the SDDMM) and
// borrows each call's values into it: every call must read its own values, never the zeros the
// structure was built with nor an earlier call's.
#[test]
fn repeated_calls_on_one_pattern_each_use_their_own_values() {
    let device = Device::flex();
    let mut rng = Rng(23);
    let mut p = problem(&mut rng, 4, 3, (3, 2));
    let (rows, cols) = (p.pattern.rows(), p.pattern.cols());
    for call in 0..4 {
        // Fresh values in the same structure, and A's dense copy to match.
        p.values = rng.values(p.values.len());
        let (bh, bw) = p.pattern.block_shape();
        p.a = vec![0.0; rows * cols];
        for (k, (&r, &c)) in p.pattern.block_row().iter().zip(p.pattern.col_idx()).enumerate() {
            for i in 0..bh {
                for j in 0..bw {
                    p.a[(r as usize * bh + i) * cols + c as usize * bw + j] = p.values[(k * bh + i) * bw + j] as f64;
                }
            }
        }
        if call == 2 {
            // An SDDMM on the same pattern in between (it reads the cached structure too).
            let x = tensor2(rng.values(rows * 3), [rows, 3], &device);
            let y = tensor2(rng.values(3 * cols), [3, cols], &device);
            assert_eq!(bsr_sddmm(&p.pattern, x, y).unwrap().dims(), p.pattern.values_shape());
        }
        let transpose = call % 2 == 1;
        let (_, k) = p.pattern.op_shape(transpose);
        let n = 5;
        let b = rng.values(k * n);
        let out = bsr_matmul(&p.pattern, tensor3(p.values.clone(), p.pattern.values_shape(), &device), tensor2(b.clone(), [k, n], &device), transpose)
            .unwrap();
        let (want, scale) = product_reference(&p, transpose, &b, n);
        assert_close(&format!("call {call} transpose={transpose}"), &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
    }
}

#[test]
fn a_transposed_view_as_dense_input() {
    // The dense operand may be a non-contiguous view (what BsrLinear passes).
    let device = Device::flex();
    let mut rng = Rng(12);
    let p = problem(&mut rng, 2, 3, (2, 2));
    let x = rng.values(5 * p.pattern.cols());
    let xt = tensor2(x.clone(), [5, p.pattern.cols()], &device).transpose();
    let out = bsr_matmul(&p.pattern, tensor3(p.values.clone(), p.pattern.values_shape(), &device), xt, false).unwrap();
    let a = op_a(&p, false);
    let (m, k) = (p.pattern.rows(), p.pattern.cols());
    let mut want = vec![0.0; m * 5];
    let mut scale = vec![0.0; m * 5];
    for i in 0..m {
        for j in 0..5 {
            for q in 0..k {
                want[i * 5 + j] += a(i, q) * x[j * k + q] as f64;
                scale[i * 5 + j] += (a(i, q) * x[j * k + q] as f64).abs();
            }
        }
    }
    assert_close("C from a transposed view", &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
}

// Views Flex reads in place (flex_matrix): a narrowed B (rows of a wider tensor, so the leading
// dimension exceeds N, and an offset), a narrowed then transposed one (column-major with a
// leading dimension past K); and every other column of a wider tensor, through reshapes and a
// narrow (in whatever layout Flex gives it: read in place or copied).
#[test]
fn strided_dense_views_match_reference() {
    let device = Device::flex();
    let mut rng = Rng(14);
    let p = problem(&mut rng, 3, 4, (2, 3));
    let k = p.pattern.cols();
    let n = 4;
    let b = rng.values(k * n);
    let (want, scale) = product_reference(&p, false, &b, n);
    let values = || tensor3(p.values.clone(), p.pattern.values_shape(), &device);
    // B inside columns 3..3+n of a k x (n + 5) tensor.
    let mut wide = vec![0.0f32; k * (n + 5)];
    for r in 0..k {
        wide[r * (n + 5) + 3..r * (n + 5) + 3 + n].copy_from_slice(&b[r * n..(r + 1) * n]);
    }
    let narrowed = tensor2(wide, [k, n + 5], &device).narrow(1, 3, n);
    let out = bsr_matmul(&p.pattern, values(), narrowed, false).unwrap();
    assert_close("a narrowed B", &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
    // B^T stored as rows 2..2+n of an (n + 3) x k tensor, then transposed: column-major B.
    let mut tall = vec![0.0f32; (n + 3) * k];
    for j in 0..n {
        for r in 0..k {
            tall[(2 + j) * k + r] = b[r * n + j];
        }
    }
    let column_major = tensor2(tall, [n + 3, k], &device).narrow(0, 2, n).transpose();
    let out = bsr_matmul(&p.pattern, values(), column_major, false).unwrap();
    assert_close("a narrowed, transposed B", &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
    // Every other column of a k x 2n tensor.
    let mut doubled = vec![0.0f32; k * 2 * n];
    for r in 0..k {
        for j in 0..n {
            doubled[r * 2 * n + 2 * j] = b[r * n + j];
        }
    }
    let every_other = tensor2(doubled, [k, 2 * n], &device).slice([0..k as i64, 0..2 * n as i64]).reshape([k, n, 2]).narrow(2, 0, 1).reshape([k, n]);
    let out = bsr_matmul(&p.pattern, values(), every_other, false).unwrap();
    assert_close("a B of stride 2", &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
}

// Flex reads f64, f16 and bf16 tensors in place as well (flex_elements / flex_matrix per dtype):
// the multiply in each against float64 within the dtype's rounding, and the SDDMM's dtype and
// shape (its values are checked in f32 by sddmm_and_its_gradients_match_reference).
#[test]
fn every_float_dtype_on_flex_matches_reference() {
    let device = Device::flex();
    let mut rng = Rng(15);
    let p = problem(&mut rng, 3, 2, (4, 4));
    let (m, k) = p.pattern.op_shape(false);
    let n = 6;
    let b = rng.values(k * n);
    let (want, scale) = product_reference(&p, false, &b, n);
    for (dtype, tolerance) in [(DType::F64, 1e-12), (DType::F16, 4e-3), (DType::BF16, 3e-2)] {
        let values = tensor3(p.values.clone(), p.pattern.values_shape(), &device).cast(dtype);
        let dense = tensor2(b.clone(), [k, n], &device).cast(dtype);
        // Values and B rounded to the dtype, then the product: the reference's error bound
        // covers the rounding of both (relative to the sum of |terms|) and of the result.
        let out = bsr_matmul(&p.pattern, values, dense.clone(), false).unwrap();
        assert_eq!(out.dtype(), dtype);
        let got = out.cast(DType::F64).into_data().try_to_vec::<f64>().unwrap();
        for (idx, ((&g, &w), &s)) in got.iter().zip(&want).zip(&scale).enumerate() {
            assert!((g - w).abs() <= tolerance * (s + w.abs()) + 1e-30, "{dtype:?} C[{idx}] = {g}, reference {w}");
        }
        // The SDDMM of C's shape against this B^T (a view): dtype in, dtype out.
        let x = tensor2(rng.values(m * n), [m, n], &device).cast(dtype);
        let sampled = bsr_sddmm(&p.pattern, x, dense.transpose()).unwrap();
        assert_eq!((sampled.dtype(), sampled.dims()), (dtype, p.pattern.values_shape()));
    }
    assert_eq!(m, p.pattern.rows());
}

#[test]
fn gradients_match_reference() {
    let device = Device::flex().autodiff();
    let mut rng = Rng(13);
    for transpose in [false, true] {
        let p = problem(&mut rng, 3, 2, (2, 4));
        let (bh, bw) = p.pattern.block_shape();
        let (m, k) = p.pattern.op_shape(transpose);
        let n = 6;
        let b = rng.values(k * n);
        let w = rng.values(m * n); // loss = sum(C * W), so dC = W
        let values = tensor3(p.values.clone(), p.pattern.values_shape(), &device).require_grad();
        let dense = tensor2(b.clone(), [k, n], &device).require_grad();
        let out = bsr_matmul(&p.pattern, values.clone(), dense.clone(), transpose).unwrap();
        let loss = (out * tensor2(w.clone(), [m, n], &device)).sum();
        let grads = loss.backward();

        // dB = op(A)^T dC
        let a = op_a(&p, transpose);
        let (mut want, mut scale) = (vec![0.0; k * n], vec![0.0; k * n]);
        for q in 0..k {
            for j in 0..n {
                for i in 0..m {
                    want[q * n + j] += a(i, q) * w[i * n + j] as f64;
                    scale[q * n + j] += (a(i, q) * w[i * n + j] as f64).abs();
                }
            }
        }
        let grad_dense = dense.grad(&grads).expect("dense gradient");
        assert_close(&format!("dB transpose={transpose}"), &grad_dense.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);

        // dV: the stored blocks of dA, dA = dC B^T (no transpose) or B dC^T (transpose).
        let nnzb = p.pattern.nnzb();
        let (mut want, mut scale) = (vec![0.0; nnzb * bh * bw], vec![0.0; nnzb * bh * bw]);
        for (blk, (&r, &c)) in p.pattern.block_row().iter().zip(p.pattern.col_idx()).enumerate() {
            for i in 0..bh {
                for j in 0..bw {
                    let (row, col) = (r as usize * bh + i, c as usize * bw + j);
                    for t in 0..n {
                        let term = if transpose { b[row * n + t] as f64 * w[col * n + t] as f64 } else { w[row * n + t] as f64 * b[col * n + t] as f64 };
                        want[(blk * bh + i) * bw + j] += term;
                        scale[(blk * bh + i) * bw + j] += term.abs();
                    }
                }
            }
        }
        let grad_values = values.grad(&grads).expect("values gradient");
        assert_close(&format!("dV transpose={transpose}"), &grad_values.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
    }
}

#[test]
fn bad_input_is_an_error() {
    let device = Device::flex();
    let pattern = BsrPattern::from_block_fn(4, 6, (2, 3), |r, c| r == c).unwrap();
    let values = Tensor::<3>::ones(pattern.values_shape(), &device);
    let err = bsr_matmul(&pattern, Tensor::<3>::ones([2, 3, 2], &device), Tensor::<2>::ones([6, 2], &device), false).unwrap_err();
    assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT");
    assert!(err.message().contains("values"), "{err}");
    let err = bsr_matmul(&pattern, values.clone(), Tensor::<2>::ones([4, 2], &device), false).unwrap_err();
    assert!(err.message().contains("dense has 4 rows"), "{err}");
    // Transposed, op(A) is 6x4: a 4-row dense operand is right.
    assert_eq!(bsr_matmul(&pattern, values, Tensor::<2>::ones([4, 2], &device), true).unwrap().dims(), [6, 2]);
    // Invalid patterns are rejected by the core.
    let err = BsrPattern::new(4, 6, (2, 3), vec![0, 2, 1], vec![0, 1]).unwrap_err();
    assert_eq!(err.code(), "BSRMM_STATUS_INVALID_ARGUMENT");
    assert!(BsrPattern::from_block_fn(5, 6, (2, 3), |_, _| true).is_err());
}

#[test]
fn the_bias_is_fused_and_differentiable() {
    let device = Device::flex().autodiff();
    let mut rng = Rng(14);
    for transpose in [false, true] {
        let p = problem(&mut rng, 3, 2, (2, 3));
        let (m, k) = p.pattern.op_shape(transpose);
        let n = 5;
        let b = rng.values(k * n);
        let bias = rng.values(m);
        let values = tensor3(p.values.clone(), p.pattern.values_shape(), &device).require_grad();
        let dense = tensor2(b.clone(), [k, n], &device).require_grad();
        let bias_t = Tensor::<1>::from_data(TensorData::new(bias.clone(), [m]), &device).require_grad();
        let out = bsr_matmul_bias(&p.pattern, values, dense, bias_t.clone(), transpose).unwrap();
        let got = out.clone().into_data().try_to_vec::<f32>().unwrap();
        let a = op_a(&p, transpose);
        let (mut want, mut scale) = (vec![0.0; m * n], vec![0.0; m * n]);
        for i in 0..m {
            for j in 0..n {
                want[i * n + j] = bias[i] as f64;
                scale[i * n + j] = (bias[i] as f64).abs();
                for q in 0..k {
                    want[i * n + j] += a(i, q) * b[q * n + j] as f64;
                    scale[i * n + j] += (a(i, q) * b[q * n + j] as f64).abs();
                }
            }
        }
        assert_close(&format!("C + bias transpose={transpose}"), &got, &want, &scale);
        // d(sum C)/d bias = n for every row.
        let grads = out.sum().backward();
        let grad_bias = bias_t.grad(&grads).expect("bias gradient").into_data().try_to_vec::<f32>().unwrap();
        assert_eq!(grad_bias, vec![n as f32; m], "transpose={transpose}");
    }
    // Without autodiff the bias goes through the core's epilogue (Flex's one call).
    let flex = Device::flex();
    let pattern = BsrPattern::from_block_fn(4, 4, (2, 2), |r, c| r == c).unwrap();
    let out = bsr_matmul_bias(
        &pattern,
        Tensor::<3>::ones(pattern.values_shape(), &flex),
        Tensor::<2>::ones([4, 2], &flex),
        Tensor::<1>::from_floats([1.0, 2.0, 3.0, 4.0], &flex),
        false,
    )
    .unwrap();
    assert_eq!(out.into_data().try_to_vec::<f32>().unwrap(), vec![3.0, 3.0, 4.0, 4.0, 5.0, 5.0, 6.0, 6.0]);
    let err = bsr_matmul_bias(&pattern, Tensor::<3>::ones(pattern.values_shape(), &flex), Tensor::<2>::ones([4, 2], &flex), Tensor::<1>::ones([3], &flex), false)
        .unwrap_err();
    assert!(err.message().contains("bias has shape [3]"), "{err}");
}

#[test]
fn sddmm_and_its_gradients_match_reference() {
    let device = Device::flex().autodiff();
    let mut rng = Rng(15);
    let p = problem(&mut rng, 3, 4, (2, 3));
    let (bh, bw) = p.pattern.block_shape();
    let (rows, cols, t) = (p.pattern.rows(), p.pattern.cols(), 5);
    let (x, y) = (rng.values(rows * t), rng.values(t * cols));
    let w = rng.values(p.pattern.nnzb() * bh * bw); // loss = sum(V * W), so dV = W
    let x_t = tensor2(x.clone(), [rows, t], &device).require_grad();
    // Y as a transposed view of a [cols, t] matrix: the layout the weight gradient passes.
    let y_data: Vec<f32> = (0..cols * t).map(|i| y[(i % t) * cols + i / t]).collect();
    let y_t = tensor2(y_data, [cols, t], &device).require_grad();
    let values = burn_bsrmm::bsr_sddmm(&p.pattern, x_t.clone(), y_t.clone().transpose()).unwrap();
    assert_eq!(values.dims(), p.pattern.values_shape());
    let got = values.clone().into_data().try_to_vec::<f32>().unwrap();
    let grads = (values * tensor3(w.clone(), p.pattern.values_shape(), &device)).sum().backward();

    let nnzb = p.pattern.nnzb();
    let (mut want, mut scale) = (vec![0.0; nnzb * bh * bw], vec![0.0; nnzb * bh * bw]);
    let (mut dx, mut dx_scale) = (vec![0.0; rows * t], vec![0.0; rows * t]);
    let (mut dy, mut dy_scale) = (vec![0.0; cols * t], vec![0.0; cols * t]); // [cols, t], as y_t
    for (blk, (&r, &c)) in p.pattern.block_row().iter().zip(p.pattern.col_idx()).enumerate() {
        for i in 0..bh {
            for j in 0..bw {
                let (row, col, e) = (r as usize * bh + i, c as usize * bw + j, (blk * bh + i) * bw + j);
                for q in 0..t {
                    let (xv, yv, wv) = (x[row * t + q] as f64, y[q * cols + col] as f64, w[e] as f64);
                    want[e] += xv * yv;
                    scale[e] += (xv * yv).abs();
                    dx[row * t + q] += wv * yv;
                    dx_scale[row * t + q] += (wv * yv).abs();
                    dy[col * t + q] += xv * wv;
                    dy_scale[col * t + q] += (xv * wv).abs();
                }
            }
        }
    }
    assert_close("V = (X Y)[blocks]", &got, &want, &scale);
    assert_close("dX", &x_t.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap(), &dx, &dx_scale);
    assert_close("dY", &y_t.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap(), &dy, &dy_scale);

    let flex = Device::flex();
    let err = burn_bsrmm::bsr_sddmm(&p.pattern, Tensor::<2>::ones([rows + 1, t], &flex), Tensor::<2>::ones([t, cols], &flex)).unwrap_err();
    assert!(err.message().contains("x has 7 rows"), "{err}");
    let err = burn_bsrmm::bsr_sddmm(&p.pattern, Tensor::<2>::ones([rows, t], &flex), Tensor::<2>::ones([t + 1, cols], &flex)).unwrap_err();
    assert!(err.message().contains("x's columns must be y's rows"), "{err}");
}

/// BsrLinear's gradients against Burn's own autodiff of the dense layer it stands for, on a
/// skewed pattern (block row 0 full, the others one block) with blocks 4 high and 2 wide.
#[test]
fn bsr_linear_gradients_match_dense_autodiff_on_a_skewed_non_square_pattern() {
    let device = Device::flex().autodiff();
    let mut rng = Rng(16);
    let (bh, bw, block_rows, block_cols) = (4, 2, 3, 5);
    let pattern = BsrPattern::from_block_fn(block_rows * bh, block_cols * bw, (bh, bw), |r, c| r == 0 || c == (2 * r) % block_cols).unwrap();
    let (d_out, d_in, batch) = (pattern.rows(), pattern.cols(), 7);
    let values = rng.values(pattern.nnzb() * bh * bw);
    let bias = rng.values(d_out);
    let x = rng.values(batch * d_in);
    let r = rng.values(batch * d_out); // loss = sum(y * R)

    let layer = burn_bsrmm::BsrLinear {
        values: burn::module::Param::from_tensor(tensor3(values.clone(), pattern.values_shape(), &device).require_grad()),
        bias: Some(burn::module::Param::from_tensor(Tensor::<1>::from_data(TensorData::new(bias.clone(), [d_out]), &device).require_grad())),
        pattern: pattern.clone(),
    };
    let x_sparse = tensor2(x.clone(), [batch, d_in], &device).require_grad();
    let loss = (layer.forward(x_sparse.clone()) * tensor2(r.clone(), [batch, d_out], &device)).sum();
    let grads = loss.backward();

    // The dense layer: W [d_out, d_in] holding the blocks, y = x W^T + b.
    let mut dense_w = vec![0.0f32; d_out * d_in];
    for (blk, (&br, &bc)) in pattern.block_row().iter().zip(pattern.col_idx()).enumerate() {
        for i in 0..bh {
            for j in 0..bw {
                dense_w[(br as usize * bh + i) * d_in + bc as usize * bw + j] = values[(blk * bh + i) * bw + j];
            }
        }
    }
    let w = tensor2(dense_w, [d_out, d_in], &device).require_grad();
    let b = Tensor::<1>::from_data(TensorData::new(bias, [d_out]), &device).require_grad();
    let x_dense = tensor2(x, [batch, d_in], &device).require_grad();
    let y = x_dense.clone().matmul(w.clone().transpose()) + b.clone().reshape([1, d_out]);
    let dense_grads = (y * tensor2(r, [batch, d_out], &device)).sum().backward();

    let dw = w.grad(&dense_grads).unwrap().into_data().try_to_vec::<f32>().unwrap();
    let mut want = Vec::new();
    for (&br, &bc) in pattern.block_row().iter().zip(pattern.col_idx()) {
        for i in 0..bh {
            for j in 0..bw {
                want.push(dw[(br as usize * bh + i) * d_in + bc as usize * bw + j] as f64);
            }
        }
    }
    // Both are f32 sums of `batch` products of values in [-1, 1]: scale by the batch.
    let scale = vec![batch as f64; want.len()];
    let got = layer.values.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap();
    assert_close("dValues vs dense dW", &got, &want, &scale);
    let want_dx: Vec<f64> = x_dense.grad(&dense_grads).unwrap().into_data().try_to_vec::<f32>().unwrap().iter().map(|&v| v as f64).collect();
    let got_dx = x_sparse.grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap();
    assert_close("dX vs dense", &got_dx, &want_dx, &vec![d_out as f64; want_dx.len()]);
    let want_db: Vec<f64> = b.grad(&dense_grads).unwrap().into_data().try_to_vec::<f32>().unwrap().iter().map(|&v| v as f64).collect();
    let got_db = layer.bias.as_ref().unwrap().grad(&grads).unwrap().into_data().try_to_vec::<f32>().unwrap();
    assert_close("dBias vs dense", &got_db, &want_db, &vec![batch as f64; want_db.len()]);
}
