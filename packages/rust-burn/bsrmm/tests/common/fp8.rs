//! fp8 operands quantised for the tests: random f64 values rounded to fp8 with scales that map
//! each group's largest magnitude onto the format's largest finite value (so every value is
//! normal and fp8's relative rounding bound holds), with the dense f64 forms the references need.

use bsrmm::{Fp8Element, ScaleKind, Scales};

use super::{RandomBsr, Rng};

/// Scales that map each group's largest magnitude onto the format's largest finite value.
pub fn scales_for(groups: &[Vec<f64>], max_finite: f64) -> Vec<f32> {
    groups
        .iter()
        .map(|g| {
            let amax = g.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            if amax == 0.0 { 1.0 } else { (amax / max_finite) as f32 }
        })
        .collect()
}

/// An fp8 A quantised from random f64 blocks with scales of `kind`: the matrix's arrays, the
/// scales, and A dense in f64 both dequantised and as it was before quantising.
pub struct QuantisedA<T> {
    pub bsr: RandomBsr<T>,
    pub scales: Vec<f32>,
    pub dequantised: Vec<f64>,
    pub original: Vec<f64>,
}

pub fn quantise_a<T: Fp8Element>(rng: &mut Rng, kind: ScaleKind) -> QuantisedA<T> {
    let exact = RandomBsr::<f64>::new(rng, 5, 4, (4, 3), 0.5);
    let block_len = 12;
    let nnzb = exact.col_idx.len();
    let block_row_of: Vec<usize> =
        (0..5).flat_map(|r| std::iter::repeat_n(r, (exact.row_ptr[r + 1] - exact.row_ptr[r]) as usize)).collect();
    let group_of = |k: usize| match kind {
        ScaleKind::PerTensor => 0,
        ScaleKind::PerBlock => k,
        ScaleKind::PerBlockRow => block_row_of[k],
        ScaleKind::PerColumn => unreachable!("A has no per-column scales"),
    };
    let groups = match kind {
        ScaleKind::PerTensor => 1,
        ScaleKind::PerBlock => nnzb,
        _ => 5,
    };
    let mut members = vec![Vec::new(); groups];
    for k in 0..nnzb {
        members[group_of(k)].extend_from_slice(&exact.values[k * block_len..(k + 1) * block_len]);
    }
    let scales = scales_for(&members, T::MAX_FINITE);
    let values: Vec<T> =
        (0..nnzb * block_len).map(|e| T::from_f64(exact.values[e] / scales[group_of(e / block_len)] as f64)).collect();
    let dequantised_values: Vec<f64> =
        (0..nnzb * block_len).map(|e| values[e].to_f64() * scales[group_of(e / block_len)] as f64).collect();
    let dequantised = with_values(&exact, dequantised_values).dense_f64();
    let original = exact.dense_f64();
    QuantisedA { bsr: with_values(&exact, values), scales, dequantised, original }
}

/// `m`'s structure with other values.
pub fn with_values<T, U>(m: &RandomBsr<U>, values: Vec<T>) -> RandomBsr<T> {
    RandomBsr { rows: m.rows, cols: m.cols, block: m.block, row_ptr: m.row_ptr.clone(), col_idx: m.col_idx.clone(), values }
}

/// B (k x n, row-major) quantised with scales of `kind` (PerTensor or PerColumn).
pub struct QuantisedB<T> {
    pub values: Vec<T>,
    pub scales: Vec<f32>,
    pub dequantised: Vec<f64>,
    pub original: Vec<f64>,
}

pub fn quantise_b<T: Fp8Element>(rng: &mut Rng, k: usize, n: usize, kind: ScaleKind) -> QuantisedB<T> {
    let original: Vec<f64> = (0..k * n).map(|_| rng.value() * 3.0).collect();
    let column = |e: usize| if kind == ScaleKind::PerColumn { e % n } else { 0 };
    let groups: Vec<Vec<f64>> = if kind == ScaleKind::PerColumn {
        (0..n).map(|j| (0..k).map(|p| original[p * n + j]).collect()).collect()
    } else {
        vec![original.clone()]
    };
    let scales = scales_for(&groups, T::MAX_FINITE);
    let values: Vec<T> = (0..k * n).map(|e| T::from_f64(original[e] / scales[column(e)] as f64)).collect();
    let dequantised = (0..k * n).map(|e| values[e].to_f64() * scales[column(e)] as f64).collect();
    QuantisedB { values, scales, dequantised, original }
}

pub fn scales_of<'a>(kind: ScaleKind, scales: &'a [f32]) -> Scales<'a> {
    if kind == ScaleKind::PerTensor { Scales::per_tensor(scales[0]) } else { Scales::new(kind, scales) }
}

