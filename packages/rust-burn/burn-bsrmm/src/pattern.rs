//! [`BsrPattern`]: the fixed block structure of a BSR matrix whose values live in a Burn tensor.

use std::any::Any;
use std::sync::{Arc, Mutex};

use bsrmm::{Dense, Layout};
use burn::module::ParamId;
use burn::serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where the blocks of a `rows x cols` block-sparse matrix are: block row `r` holds blocks
/// `row_ptr[r]..row_ptr[r + 1]`, block `k` sits at block column `col_idx[k]`. The values are a
/// Burn tensor of shape `[nnzb, block_height, block_width]` beside it.
///
/// Validated by the core when made; cheap to clone (shared). As a field of a Burn module it is
/// part of the module's record (`save_file` / `load_file`, see [`BsrLinear`](crate::BsrLinear));
/// it serialises (serde) as its dims and index arrays, validated again when read.
///
/// ```
/// use burn_bsrmm::BsrPattern;
/// let p = BsrPattern::new(4, 6, (2, 3), vec![0, 1, 2], vec![1, 0])?;
/// assert_eq!((p.nnzb(), p.block_rows(), p.block_cols()), (2, 2, 2));
/// assert!(BsrPattern::new(4, 6, (2, 3), vec![0, 1, 2], vec![1, 2]).is_err()); // column 2 >= 2
/// # Ok::<(), bsrmm::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BsrPattern(Arc<Inner>);

#[derive(Debug, PartialEq, Eq)]
struct Inner {
    rows: usize,
    cols: usize,
    block_height: usize,
    block_width: usize,
    row_ptr: Vec<i64>,
    col_idx: Vec<i64>,
    /// The block row of each block (row_ptr expanded): the gradient of the values needs it.
    block_row: Vec<i64>,
    /// Backends' per-device state for this pattern (the CUDA op keeps one validated core
    /// matrix per dtype and GPU here and swaps each call's values into its structure; the host
    /// SDDMM keeps one per dtype); dropped with the pattern.
    device_state: DeviceState,
    /// The ids of the pattern's arrays in module records (see record.rs).
    record_ids: RecordIds,
}

/// Parameter ids, like the cache, are not part of the pattern's value.
#[derive(Debug)]
pub(crate) struct RecordIds(pub(crate) [ParamId; 3]);

impl PartialEq for RecordIds {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for RecordIds {}

/// A cache beside the pattern, not part of its value: equal patterns compare equal whatever
/// their caches hold.
#[derive(Default)]
pub(crate) struct DeviceState(Mutex<Vec<Box<dyn Any + Send>>>);

impl DeviceState {
    /// The first entry of type `S` for which `matches` holds, made by `make` if there is none.
    pub(crate) fn get_or_insert<S: Any + Send, R>(
        &self,
        matches: impl Fn(&S) -> bool,
        make: impl FnOnce() -> bsrmm::Result<S>,
        with: impl FnOnce(&S) -> R,
    ) -> bsrmm::Result<R> {
        let mut entries = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(found) = entries.iter().filter_map(|e| e.downcast_ref::<S>()).find(|s| matches(s)) {
            return Ok(with(found));
        }
        let made = make()?;
        let result = with(&made);
        entries.push(Box::new(made));
        Ok(result)
    }
}

impl PartialEq for DeviceState {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}
impl Eq for DeviceState {}
impl std::fmt::Debug for DeviceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("DeviceState")
    }
}

impl BsrPattern {
    /// A pattern from CSR-of-blocks arrays; the core checks every rule (dims divisible by the
    /// block shape, `row_ptr` monotone from 0 to nnzb, `col_idx` in range, sorted and unique
    /// within each row).
    pub fn new(
        rows: usize,
        cols: usize,
        block_shape: (usize, usize),
        row_ptr: Vec<i64>,
        col_idx: Vec<i64>,
    ) -> bsrmm::Result<Self> {
        Self::with_record_ids(rows, cols, block_shape, row_ptr, col_idx, RecordIds([(); 3].map(|_| ParamId::new())))
    }

    pub(crate) fn with_record_ids(
        rows: usize,
        cols: usize,
        block_shape: (usize, usize),
        row_ptr: Vec<i64>,
        col_idx: Vec<i64>,
        record_ids: RecordIds,
    ) -> bsrmm::Result<Self> {
        let (bh, bw) = block_shape;
        // The core validates a structure together with values: zeros, allocated fallibly (a
        // pattern may name more values than memory holds).
        let values = col_idx
            .len()
            .checked_mul(bh)
            .ok_or_else(|| bsrmm::Error::invalid_argument(format!("{} blocks of {bh}x{bw} overflow usize", col_idx.len())))?;
        let zeros = Dense::<f32>::try_zeros(values, bw, Layout::RowMajor)?;
        bsrmm::BsrMatrix::from_bsr(
            &crate::host::cpu_context()?,
            rows,
            cols,
            block_shape,
            &row_ptr,
            &col_idx,
            zeros.data(),
            bsrmm::CreateOptions::default(),
        )?;
        let block_row = (0..row_ptr.len() - 1)
            .flat_map(|r| std::iter::repeat_n(r as i64, (row_ptr[r + 1] - row_ptr[r]) as usize))
            .collect();
        Ok(BsrPattern(Arc::new(Inner {
            rows,
            cols,
            block_height: bh,
            block_width: bw,
            row_ptr,
            col_idx,
            block_row,
            device_state: DeviceState::default(),
            record_ids,
        })))
    }

    /// A pattern keeping the blocks for which `keep(block_row, block_col)` is true.
    ///
    /// ```
    /// use burn_bsrmm::BsrPattern;
    /// let diagonal = BsrPattern::from_block_fn(8, 8, (4, 4), |r, c| r == c)?;
    /// assert_eq!(diagonal.nnzb(), 2);
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn from_block_fn(
        rows: usize,
        cols: usize,
        block_shape: (usize, usize),
        mut keep: impl FnMut(usize, usize) -> bool,
    ) -> bsrmm::Result<Self> {
        let (bh, bw) = block_shape;
        if bh == 0 || bw == 0 || rows % bh != 0 || cols % bw != 0 {
            // Let the core word the error for the shape it rejects.
            return Self::new(rows, cols, block_shape, vec![0], vec![]);
        }
        let mut row_ptr = vec![0i64];
        let mut col_idx = Vec::new();
        for r in 0..rows / bh {
            col_idx.extend((0..cols / bw).filter(|&c| keep(r, c)).map(|c| c as i64));
            row_ptr.push(col_idx.len() as i64);
        }
        Self::new(rows, cols, block_shape, row_ptr, col_idx)
    }

    /// Rows of the matrix.
    pub fn rows(&self) -> usize {
        self.0.rows
    }
    /// Columns of the matrix.
    pub fn cols(&self) -> usize {
        self.0.cols
    }
    /// `(block_height, block_width)`.
    pub fn block_shape(&self) -> (usize, usize) {
        (self.0.block_height, self.0.block_width)
    }
    /// Block rows (`rows / block_height`).
    pub fn block_rows(&self) -> usize {
        self.0.row_ptr.len() - 1
    }
    /// Block columns (`cols / block_width`).
    pub fn block_cols(&self) -> usize {
        self.0.cols / self.0.block_width
    }
    /// Stored blocks.
    pub fn nnzb(&self) -> usize {
        self.0.col_idx.len()
    }
    /// The shape of the values tensor: `[nnzb, block_height, block_width]`.
    pub fn values_shape(&self) -> [usize; 3] {
        [self.nnzb(), self.0.block_height, self.0.block_width]
    }
    /// Offsets of each block row's blocks.
    pub fn row_ptr(&self) -> &[i64] {
        &self.0.row_ptr
    }
    /// Block column of each block.
    pub fn col_idx(&self) -> &[i64] {
        &self.0.col_idx
    }
    /// Block row of each block.
    pub fn block_row(&self) -> &[i64] {
        &self.0.block_row
    }
    pub(crate) fn device_state(&self) -> &DeviceState {
        &self.0.device_state
    }
    pub(crate) fn record_ids(&self) -> &[ParamId; 3] {
        &self.0.record_ids.0
    }
    /// `(rows, cols)` of `op(A)`.
    pub fn op_shape(&self, transpose: bool) -> (usize, usize) {
        if transpose { (self.0.cols, self.0.rows) } else { (self.0.rows, self.0.cols) }
    }
}

impl std::fmt::Display for BsrPattern {
    /// `8x32, 8x8 blocks, 4 of 16 stored`: what errors about two patterns name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (bh, bw) = self.block_shape();
        let blocks = self.block_rows() * self.block_cols();
        write!(f, "{}x{}, {bh}x{bw} blocks, {} of {blocks} stored", self.rows(), self.cols(), self.nnzb())
    }
}

/// The serialised form (a `BsrLinearConfig` holds a pattern; configs are JSON).
#[derive(Serialize, Deserialize)]
#[serde(crate = "burn::serde")]
struct PatternSpec {
    rows: usize,
    cols: usize,
    block_shape: (usize, usize),
    row_ptr: Vec<i64>,
    col_idx: Vec<i64>,
}

impl Serialize for BsrPattern {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        PatternSpec {
            rows: self.rows(),
            cols: self.cols(),
            block_shape: self.block_shape(),
            row_ptr: self.row_ptr().to_vec(),
            col_idx: self.col_idx().to_vec(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for BsrPattern {
    /// Validated as [`BsrPattern::new`] validates: a broken pattern in a file is an error.
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let spec = PatternSpec::deserialize(deserializer)?;
        BsrPattern::new(spec.rows, spec.cols, spec.block_shape, spec.row_ptr, spec.col_idx).map_err(burn::serde::de::Error::custom)
    }
}
