//! The op and its gradients on Flex (Burn's CPU backend), element by element against float64
//! references on fresh random operands.

use burn::tensor::{Device, Tensor, TensorData};
use burn_bsrmm::{bsr_matmul, bsr_matmul_bias, BsrPattern};

mod common;

use common::{op_a, problem, Rng};

fn assert_close(what: &str, got: &[f32], want: &[f64], scale: &[f64]) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (idx, ((&g, &w), &s)) in got.iter().zip(want).zip(scale).enumerate() {
        assert!((g as f64 - w).abs() <= 1e-5 * s + 1e-30, "{what}[{idx}] = {g}, reference {w}");
    }
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
            let a = op_a(&p, transpose);
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
            assert_close(&format!("C {block:?} transpose={transpose}"), &out.into_data().try_to_vec::<f32>().unwrap(), &want, &scale);
        }
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
