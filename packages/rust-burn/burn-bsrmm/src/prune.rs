//! Pruning a dense weight to a block-sparse one: which blocks to keep ([`Keep`]), and the
//! pattern and values that result.

use burn::tensor::{Int, Tensor, TensorData};

use crate::pattern::BsrPattern;

/// Which blocks of a dense matrix to keep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Keep<'a> {
    /// The `round(density * blocks)` blocks of largest magnitude (Frobenius norm); equal norms
    /// keep the earlier block in row-major block order. `density` is in [0, 1].
    Density(f64),
    /// A block mask: block (r, c) is kept when `mask[r * block_cols + c]` is true.
    Mask(&'a [bool]),
}

/// The blocks (row-major block order indices) that `keep` selects among `blocks`
/// (`[block_rows * block_cols, bh, bw]`), ascending.
fn selected(blocks: &Tensor<3>, count: usize, keep: Keep<'_>) -> bsrmm::Result<Vec<usize>> {
    let invalid = bsrmm::Error::invalid_argument;
    match keep {
        Keep::Mask(mask) => {
            if mask.len() != count {
                return Err(invalid(format!("mask has {} entries, the matrix has {count} blocks", mask.len())));
            }
            Ok((0..count).filter(|&i| mask[i]).collect())
        }
        Keep::Density(density) => {
            if !(0.0..=1.0).contains(&density) {
                return Err(invalid(format!("density = {density}: expected a value in [0, 1]")));
            }
            let norms = blocks
                .clone()
                .square()
                .sum_dim(2)
                .sum_dim(1)
                .reshape([count])
                .try_to_vec_as::<f64>()
                .map_err(|e| bsrmm::Error::new(bsrmm::Status::Internal, format!("reading the block norms failed: {e:?}")))?;
            let mut order: Vec<usize> = (0..count).collect();
            // Stable: equal norms keep row-major order.
            order.sort_by(|&a, &b| norms[b].total_cmp(&norms[a]));
            order.truncate((density * count as f64).round() as usize);
            order.sort_unstable();
            Ok(order)
        }
    }
}

impl BsrPattern {
    /// The pattern of the `block_shape` blocks of `weight` (`[rows, cols]`) that `keep`
    /// selects, and their values (`[nnzb, block_height, block_width]`, on the weight's device,
    /// in its dtype): what [`BsrLinear::from_dense`](crate::BsrLinear::from_dense) builds a
    /// layer from.
    ///
    /// ```
    /// use burn::tensor::{Device, Tensor};
    /// use burn_bsrmm::{BsrPattern, Keep};
    ///
    /// let w = Tensor::<2>::ones([4, 6], &Device::flex());
    /// let mask = [true, false, false, true]; // 2x2 blocks of 2x3: the diagonal
    /// let (pattern, values) = BsrPattern::prune(w, (2, 3), Keep::Mask(&mask))?;
    /// assert_eq!((pattern.nnzb(), values.dims()), (2, [2, 2, 3]));
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn prune(weight: Tensor<2>, block_shape: (usize, usize), keep: Keep<'_>) -> bsrmm::Result<(BsrPattern, Tensor<3>)> {
        let [rows, cols] = weight.dims();
        let (bh, bw) = block_shape;
        if bh == 0 || bw == 0 || rows % bh != 0 || cols % bw != 0 {
            return Err(bsrmm::Error::invalid_argument(format!(
                "block_shape = {bh}x{bw} does not divide the {rows}x{cols} weight"
            )));
        }
        let (block_rows, block_cols) = (rows / bh, cols / bw);
        let count = block_rows * block_cols;
        // [block_rows, bh, block_cols, bw] -> one [bh, bw] block per (block row, block column).
        let blocks = weight.reshape([block_rows, bh, block_cols, bw]).swap_dims(1, 2).reshape([count, bh, bw]);
        let kept = selected(&blocks, count, keep)?;

        let mut row_ptr = vec![0i64; block_rows + 1];
        for &i in &kept {
            row_ptr[i / block_cols + 1] += 1;
        }
        for r in 0..block_rows {
            row_ptr[r + 1] += row_ptr[r];
        }
        let col_idx: Vec<i64> = kept.iter().map(|&i| (i % block_cols) as i64).collect();
        let pattern = BsrPattern::new(rows, cols, block_shape, row_ptr, col_idx)?;

        let index: Vec<i64> = kept.iter().map(|&i| i as i64).collect();
        let device = blocks.device();
        let values = blocks.select(0, Tensor::<1, Int>::from_data(TensorData::new(index, [kept.len()]), &device));
        Ok((pattern, values))
    }
}
