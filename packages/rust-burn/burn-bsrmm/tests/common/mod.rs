//! Test helpers shared by the Flex and CUDA suites: a seeded PRNG and random block-sparse
//! problems with their dense float64 matrix.
#![allow(dead_code)]

use burn::module::Module;
use burn::optim::{AdamConfig, GradientsParams};
use burn::tensor::{activation, Device, Distribution, Tensor};
use burn_bsrmm::{BsrLinear, BsrPattern};

/// SplitMix64.
pub struct Rng(pub u64);
impl Rng {
    pub fn unit(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [-1, 1) away from zero.
    pub fn value(&mut self) -> f64 {
        loop {
            let v = self.unit() * 2.0 - 1.0;
            if v.abs() > 1e-3 {
                return v;
            }
        }
    }
    pub fn values(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.value() as f32).collect()
    }
}

pub struct Problem {
    pub pattern: BsrPattern,
    pub values: Vec<f32>,
    /// A as a dense row-major f64 matrix.
    pub a: Vec<f64>,
}

pub fn problem(rng: &mut Rng, block_rows: usize, block_cols: usize, block: (usize, usize)) -> Problem {
    let (bh, bw) = block;
    let pattern = BsrPattern::from_block_fn(block_rows * bh, block_cols * bw, block, |_, _| rng.unit() < 0.5).unwrap();
    let values = rng.values(pattern.nnzb() * bh * bw);
    let (rows, cols) = (pattern.rows(), pattern.cols());
    let mut a = vec![0.0; rows * cols];
    for (k, (&r, &c)) in pattern.block_row().iter().zip(pattern.col_idx()).enumerate() {
        for i in 0..bh {
            for j in 0..bw {
                a[(r as usize * bh + i) * cols + c as usize * bw + j] = values[(k * bh + i) * bw + j] as f64;
            }
        }
    }
    Problem { pattern, values, a }
}

/// op(A) as a function of (i, p).
pub fn op_a(p: &Problem, transpose: bool) -> impl Fn(usize, usize) -> f64 + '_ {
    let cols = p.pattern.cols();
    move |i, k| if transpose { p.a[k * cols + i] } else { p.a[i * cols + k] }
}

/// Two BsrLinear layers with a ReLU between: the second one's dense input is the first one's
/// output, so training it runs gradients through the op's dense input path as well as its values.
#[derive(Module, Debug)]
pub struct Mlp {
    hidden: BsrLinear,
    out: BsrLinear,
}

impl Mlp {
    pub fn forward(&self, x: Tensor<2>) -> Tensor<2> {
        self.out.forward(activation::relu(self.hidden.forward(x)))
    }
}

/// Trains a 32 -> 64 -> 8 Mlp (8x8 blocks) on `device` (an autodiff device) towards a fixed
/// random linear teacher for 60 Adam steps; the loss of each step.
pub fn train_mlp(device: &Device) -> Vec<f32> {
    // A band plus the diagonal of blocks, then every other block column.
    let hidden = BsrPattern::from_block_fn(64, 32, (8, 8), |r, c| r / 2 == c || r % 4 == c).unwrap();
    let out = BsrPattern::from_block_fn(8, 64, (8, 8), |_, c| c % 2 == 0).unwrap();
    let mut model = Mlp { hidden: BsrLinear::new(hidden, true, device), out: BsrLinear::new(out, true, device) };

    let x = Tensor::<2>::random([128, 32], Distribution::Uniform(-1.0, 1.0), device);
    let teacher = Tensor::<2>::random([32, 8], Distribution::Uniform(-0.5, 0.5), device);
    let y = x.clone().matmul(teacher).detach();

    let mut optim = AdamConfig::new().init();
    let mut losses = Vec::new();
    for _ in 0..60 {
        let loss = (model.forward(x.clone()) - y.clone()).powf_scalar(2.0).mean();
        losses.push(loss.clone().into_scalar::<f32>());
        let grads = GradientsParams::from_grads(loss.backward(), &model);
        model = optim.step(1e-2, model, grads);
    }
    losses
}
