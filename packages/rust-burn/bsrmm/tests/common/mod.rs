//! Test helpers: a seeded PRNG, random BSR operands and float64 references of the multiply and
//! the SDDMM.
#![allow(dead_code)]

pub mod fp8;

use bsrmm::{Activation, Element, Layout};

/// SplitMix64: small, seeded, the same sequence everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in [-1, 1), never exactly zero (a zero would hide a skipped element).
    pub fn value(&mut self) -> f64 {
        loop {
            let v = self.unit() * 2.0 - 1.0;
            if v.abs() > 1e-3 {
                return v;
            }
        }
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A random BSR matrix as its three arrays, with values already rounded to T.
pub struct RandomBsr<T> {
    pub rows: usize,
    pub cols: usize,
    pub block: (usize, usize),
    pub row_ptr: Vec<i32>,
    pub col_idx: Vec<i32>,
    pub values: Vec<T>,
}

impl<T: Element> RandomBsr<T> {
    pub fn new(rng: &mut Rng, block_rows: usize, block_cols: usize, block: (usize, usize), density: f64) -> Self {
        let mut row_ptr = vec![0i32];
        let mut col_idx = Vec::new();
        for _ in 0..block_rows {
            for c in 0..block_cols {
                if rng.unit() < density {
                    col_idx.push(c as i32);
                }
            }
            row_ptr.push(col_idx.len() as i32);
        }
        let values = (0..col_idx.len() * block.0 * block.1).map(|_| T::from_f64(rng.value())).collect();
        RandomBsr { rows: block_rows * block.0, cols: block_cols * block.1, block, row_ptr, col_idx, values }
    }

    /// The matrix as a dense f64 row-major array.
    pub fn dense_f64(&self) -> Vec<f64> {
        let (bh, bw) = self.block;
        let mut out = vec![0.0; self.rows * self.cols];
        for r in 0..self.row_ptr.len() - 1 {
            for k in self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize {
                let c = self.col_idx[k] as usize;
                for i in 0..bh {
                    for j in 0..bw {
                        out[(r * bh + i) * self.cols + c * bw + j] = self.values[(k * bh + i) * bw + j].to_f64();
                    }
                }
            }
        }
        out
    }
}

pub fn activate(x: f64, activation: Activation) -> f64 {
    match activation {
        Activation::None => x,
        Activation::Relu => x.max(0.0),
        Activation::Gelu => 0.5 * x * (1.0 + ((2.0 / std::f64::consts::PI).sqrt() * (x + 0.044715 * x * x * x)).tanh()),
        Activation::Silu => x / (1.0 + (-x).exp()),
    }
}

/// Reference `act(alpha * op(A) * B + beta * C0 + bias)` in f64, and for each element the
/// magnitude sum that bounds its rounding error. `b`/`c0` are read through `get(i, j)`.
pub struct Reference {
    pub values: Vec<f64>,
    pub magnitude: Vec<f64>,
    pub rows: usize,
    pub cols: usize,
}

#[allow(clippy::too_many_arguments)]
pub fn reference(
    a: &[f64],
    a_rows: usize,
    a_cols: usize,
    transpose: bool,
    b: impl Fn(usize, usize) -> f64,
    n: usize,
    alpha: f64,
    beta: f64,
    c0: impl Fn(usize, usize) -> f64,
    bias: Option<&[f64]>,
    activation: Activation,
) -> Reference {
    let (m, k) = if transpose { (a_cols, a_rows) } else { (a_rows, a_cols) };
    let at = |i: usize, p: usize| if transpose { a[p * a_cols + i] } else { a[i * a_cols + p] };
    let mut values = vec![0.0; m * n];
    let mut magnitude = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            let (mut acc, mut mag) = (0.0, 0.0);
            for p in 0..k {
                let prod = at(i, p) * b(p, j);
                acc += prod;
                mag += prod.abs();
            }
            let mut v = alpha * acc;
            mag *= alpha.abs();
            if beta != 0.0 {
                v += beta * c0(i, j);
                mag += (beta * c0(i, j)).abs();
            }
            if let Some(bias) = bias {
                v += bias[i];
                mag += bias[i].abs();
            }
            values[i * n + j] = activate(v, activation);
            magnitude[i * n + j] = mag + v.abs();
        }
    }
    Reference { values, magnitude, rows: m, cols: n }
}

/// `alpha * (X Y)[block b] + beta * values0[b]` in f64 for every stored block, as an
/// `nnzb x (bh * bw)` reference with each element's magnitude sum.
pub fn sddmm_reference<T: Element>(
    a: &RandomBsr<T>,
    x: impl Fn(usize, usize) -> f64,
    y: impl Fn(usize, usize) -> f64,
    t: usize,
    alpha: f64,
    beta: f64,
    values0: &[T],
) -> Reference {
    let (bh, bw) = a.block;
    let nnzb = a.col_idx.len();
    let (mut values, mut magnitude) = (vec![0.0; nnzb * bh * bw], vec![0.0; nnzb * bh * bw]);
    for r in 0..a.row_ptr.len() - 1 {
        for k in a.row_ptr[r] as usize..a.row_ptr[r + 1] as usize {
            let c = a.col_idx[k] as usize;
            for i in 0..bh {
                for j in 0..bw {
                    let (mut acc, mut mag) = (0.0, 0.0);
                    for p in 0..t {
                        let prod = x(r * bh + i, p) * y(p, c * bw + j);
                        acc += prod;
                        mag += prod.abs();
                    }
                    let e = (k * bh + i) * bw + j;
                    let mut v = alpha * acc;
                    mag *= alpha.abs();
                    if beta != 0.0 {
                        v += beta * values0[e].to_f64();
                        mag += (beta * values0[e].to_f64()).abs();
                    }
                    values[e] = v;
                    magnitude[e] = mag + v.abs();
                }
            }
        }
    }
    Reference { values, magnitude, rows: nnzb, cols: bh * bw }
}

/// Relative tolerance per dtype (PERF.md: f32 exact path < 1e-5, f16 < 1e-3, bf16 < 1e-2),
/// applied to the magnitude sum, with room for the output's own rounding.
pub fn tolerance<T: Element>() -> f64 {
    match T::DTYPE {
        bsrmm::DType::F64 => 1e-12,
        bsrmm::DType::F32 => 1e-5,
        bsrmm::DType::F16 => 2e-3,
        bsrmm::DType::BF16 => 1.6e-2,
        bsrmm::DType::F8E4M3 | bsrmm::DType::F8E5M2 => panic!("fp8 is an input dtype only: C is f32, f16 or bf16"),
    }
}

/// Checks every element of `get(i, j)` against the reference; panics naming the first bad one.
pub fn check<T: Element>(what: &str, reference: &Reference, get: impl Fn(usize, usize) -> T) {
    let tol = tolerance::<T>();
    for i in 0..reference.rows {
        for j in 0..reference.cols {
            let got = get(i, j).to_f64();
            let want = reference.values[i * reference.cols + j];
            let bound = tol * reference.magnitude[i * reference.cols + j] + 1e-30;
            assert!(
                (got - want).abs() <= bound,
                "{what}: C[{i}][{j}] = {got}, reference {want} (|diff| {} > {bound})",
                (got - want).abs()
            );
        }
    }
}

/// A strided host buffer for a `rows x cols` matrix with `pad` extra elements per leading
/// dimension, filled with `fill`.
pub fn strided<T: Element>(rows: usize, cols: usize, layout: Layout, pad: usize, fill: T) -> (Vec<T>, usize) {
    let ld = layout.min_ld(rows, cols) + pad;
    let major = if layout == Layout::RowMajor { rows } else { cols };
    (vec![fill; major * ld], ld)
}
