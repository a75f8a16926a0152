//! [`BsrMatrix`]: an owned, validated block-sparse matrix on one device.

use std::marker::PhantomData;

use bsrmm_sys::cxx::UniquePtr;

use crate::context::Context;
use crate::dense::{try_filled, Dense, DenseRef, Layout};
use crate::device::Device;
use crate::element::{DType, Element, Index};
use crate::error::{Error, Result, Status};
use crate::scales::{ScaleKind, Scales};

/// The three BSR arrays (the scipy / torch `sparse_bsr` convention): block row `r` holds blocks
/// `row_ptr[r]..row_ptr[r + 1]`, block `k` sits at block column `col_idx[k]`, and its values are
/// `values[k * bh * bw..][..bh * bw]`, row-major inside the block.
#[derive(Debug, Clone, PartialEq)]
pub struct BsrParts<T, I = i32> {
    /// `rows / block_height + 1` offsets into `col_idx`.
    pub row_ptr: Vec<I>,
    /// The block column of each stored block.
    pub col_idx: Vec<I>,
    /// Each block's values, row-major, block after block.
    pub values: Vec<T>,
}

/// Options for building a matrix from BSR arrays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CreateOptions {
    /// Sort column indices (with their blocks) within each row instead of rejecting unsorted
    /// input.
    pub sort_indices: bool,
}

/// An owned block-sparse matrix (`rows x cols`, blocks of `block_height x block_width`) whose
/// structure the core has validated, with its values, on the device of the context it was made
/// in.
///
/// `BsrMatrix` is `Send + Sync`: the core allows every call on a matrix from several threads at
/// once (only destruction is exclusive, which `Drop` guarantees), so one matrix, say a weight,
/// can serve multiplies from many threads.
///
/// ```
/// use bsrmm::{BsrMatrix, Context};
/// let ctx = Context::cpu()?;
/// // 4x6 with 2x3 blocks: block (0, 1) and block (1, 0).
/// let a = BsrMatrix::<f32>::from_bsr(
///     &ctx, 4, 6, (2, 3),
///     &[0i32, 1, 2], &[1, 0],
///     &[1., 2., 3., 4., 5., 6., 7., 8., 9., 10., 11., 12.],
///     Default::default(),
/// )?;
/// assert_eq!((a.rows(), a.cols(), a.block_shape(), a.nnzb()), (4, 6, (2, 3), 2));
/// let dense = a.to_dense(bsrmm::Layout::RowMajor)?;
/// assert_eq!(dense.get(0, 3), 1.0);
/// assert_eq!(dense.get(2, 0), 7.0);
/// assert_eq!(dense.get(0, 0), 0.0);
/// # Ok::<(), bsrmm::Error>(())
/// ```
pub struct BsrMatrix<T: Element> {
    handle: UniquePtr<bsrmm_sys::ffi::Matrix>,
    info: Info,
    context: Context,
    _element: PhantomData<T>,
}

#[derive(Debug, Clone, Copy)]
struct Info {
    rows: usize,
    cols: usize,
    block_height: usize,
    block_width: usize,
    nnzb: usize,
    device: Device,
}

impl CreateOptions {
    fn to_flags(self) -> u32 {
        if self.sort_indices { 1 } else { 0 }
    }
}

/// The descriptor of three host arrays, checked against the shape (the core checks the rest).
fn host_desc<T: Element, I: Index>(
    rows: usize,
    cols: usize,
    block_shape: (usize, usize),
    row_ptr: &[I],
    col_idx: &[I],
    values: &[T],
) -> Result<bsrmm_sys::ffi::BsrDesc> {
    let (bh, bw) = block_shape;
    if bh > 0 && rows % bh == 0 && row_ptr.len() != rows / bh + 1 {
        return Err(Error::invalid_argument(format!(
            "row_ptr has {} entries, a {rows}-row matrix with block height {bh} needs {}",
            row_ptr.len(),
            rows / bh + 1
        )));
    }
    // Indivisible dims: the core rejects them before reading row_ptr; an empty row_ptr
    // would still be read past, so refuse it here.
    if row_ptr.is_empty() {
        return Err(Error::invalid_argument("row_ptr is empty: it needs block_rows + 1 entries"));
    }
    let nnzb = col_idx.len();
    let block_len = bh.checked_mul(bw).and_then(|b| b.checked_mul(nnzb));
    if block_len != Some(values.len()) {
        return Err(Error::invalid_argument(format!(
            "values has {} elements, {nnzb} blocks of {bh}x{bw} need {}",
            values.len(),
            block_len.map_or("more than usize::MAX".into(), |n| n.to_string())
        )));
    }
    Ok(bsrmm_sys::ffi::BsrDesc {
        rows: count("rows", rows)?,
        cols: count("cols", cols)?,
        block_height: block_dim("block_height", bh)?,
        block_width: block_dim("block_width", bw)?,
        nnzb: count("nnzb", nnzb)?,
        row_ptr: row_ptr.as_ptr() as usize,
        col_idx: col_idx.as_ptr() as usize,
        index_type: I::C_TYPE,
        values: values.as_ptr() as usize,
        dtype: T::DTYPE.to_c(),
        device: Device::Cpu.to_c(),
    })
}

fn count(name: &str, value: usize) -> Result<i64> {
    i64::try_from(value).map_err(|_| Error::invalid_argument(format!("{name} = {value} does not fit in 64 bits")))
}

fn block_dim(name: &str, value: usize) -> Result<i32> {
    i32::try_from(value).map_err(|_| Error::invalid_argument(format!("{name} = {value} does not fit in 32 bits")))
}

impl<T: Element> BsrMatrix<T> {
    /// Builds a matrix from the three BSR arrays (host memory), copied onto `ctx`'s device.
    ///
    /// The core checks every structural rule (dims divisible by the block shape, `row_ptr`
    /// monotone from 0 to nnzb, `col_idx` in range and sorted/unique per row unless
    /// `sort_indices`); this function checks that the slices are as long as the shape says.
    #[allow(clippy::too_many_arguments)]
    pub fn from_bsr<I: Index>(
        ctx: &Context,
        rows: usize,
        cols: usize,
        block_shape: (usize, usize),
        row_ptr: &[I],
        col_idx: &[I],
        values: &[T],
        options: CreateOptions,
    ) -> Result<Self> {
        let desc = host_desc(rows, cols, block_shape, row_ptr, col_idx, values)?;
        // SAFETY: the three host arrays are live for the call and as long as `desc` says
        // (row_ptr: block_rows + 1, col_idx: nnzb, values: nnzb * bh * bw, checked by host_desc).
        let handle = unsafe { bsrmm_sys::ffi::matrix_new(ctx.lock().pin_mut(), &desc, options.to_flags())? };
        Self::wrap(handle, ctx)
    }

    /// Builds an fp8 matrix (`T` = `float8::F8E4M3` or `F8E5M2`) from the three BSR arrays and
    /// its fp32 scales (per tensor, per stored block in `col_idx`'s order, or per block row),
    /// all copied onto `ctx`'s device. The element `values[i]` stands for `values[i] * scale`.
    /// A block that `sort_indices` moves keeps its scale. Other dtypes take no scales (use
    /// [`from_bsr`](Self::from_bsr), which refuses fp8).
    ///
    /// ```
    /// use bsrmm::{BsrMatrix, Context, F8E4M3, Scales, ScaleKind};
    /// let ctx = Context::cpu()?;
    /// let values: Vec<F8E4M3> = [1.0, -2.0, 0.5, 448.0].iter().map(|&v| F8E4M3::from_f64(v)).collect();
    /// // 2x4 with 2x1 blocks at block columns 0 and 3; each block has its scale.
    /// let a = BsrMatrix::from_bsr_scaled(&ctx, 2, 4, (2, 1), &[0i32, 2], &[0, 3], &values,
    ///                                     Scales::per_block(&[0.25, 2.0]), Default::default())?;
    /// assert_eq!(a.scales()?, (ScaleKind::PerBlock, vec![0.25, 2.0]));
    /// // One scale short is an error, not a read past the end.
    /// assert!(BsrMatrix::from_bsr_scaled(&ctx, 2, 4, (2, 1), &[0i32, 2], &[0, 3], &values,
    ///                                     Scales::per_block(&[0.25]), Default::default()).is_err());
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn from_bsr_scaled<I: Index>(
        ctx: &Context,
        rows: usize,
        cols: usize,
        block_shape: (usize, usize),
        row_ptr: &[I],
        col_idx: &[I],
        values: &[T],
        scales: Scales<'_>,
        options: CreateOptions,
    ) -> Result<Self> {
        let desc = host_desc(rows, cols, block_shape, row_ptr, col_idx, values)?;
        let c_scales = scales.as_c()?;
        // SAFETY: as from_bsr; the scales point at `scales.len()` f32 borrowed for the call (or
        // memory its unsafe constructor's caller vouched for), which the core copies.
        let handle =
            unsafe { bsrmm_sys::ffi::matrix_new_scaled(ctx.lock().pin_mut(), &desc, &c_scales, options.to_flags())? };
        Self::wrap(handle, ctx)
    }

    /// Builds a matrix from BSR arrays that live on `device` (e.g. CUDA buffers another
    /// library owns). With `borrow_values` the core uses the device values in place instead
    /// of copying them; indices are always copied (they are validated).
    ///
    /// # Safety
    /// `row_ptr` (`rows / block_height + 1` entries), `col_idx` (`nnzb`) and `values`
    /// (`nnzb * block_height * block_width`) must be readable on `device` for the call; with
    /// `borrow_values`, `values` must also stay valid and unchanged while the matrix lives.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn from_raw_parts<I: Index>(
        ctx: &Context,
        rows: usize,
        cols: usize,
        block_shape: (usize, usize),
        nnzb: usize,
        row_ptr: *const I,
        col_idx: *const I,
        values: *const T,
        device: Device,
        borrow_values: bool,
    ) -> Result<Self> {
        let desc = bsrmm_sys::ffi::BsrDesc {
            rows: count("rows", rows)?,
            cols: count("cols", cols)?,
            block_height: block_dim("block_height", block_shape.0)?,
            block_width: block_dim("block_width", block_shape.1)?,
            nnzb: count("nnzb", nnzb)?,
            row_ptr: row_ptr as usize,
            col_idx: col_idx as usize,
            index_type: I::C_TYPE,
            values: values as usize,
            dtype: T::DTYPE.to_c(),
            device: device.to_c(),
        };
        let flags = if borrow_values { 2 } else { 0 };
        // SAFETY: the caller guarantees the arrays (this function's contract).
        let handle = unsafe { bsrmm_sys::ffi::matrix_new(ctx.lock().pin_mut(), &desc, flags)? };
        Self::wrap(handle, ctx)
    }

    /// Keeps every `block_shape` block of `dense` holding any non-zero (NaN counts as non-zero).
    /// `dense` must be on `ctx`'s device.
    ///
    /// ```
    /// use bsrmm::{BsrMatrix, Context, DenseRef, Layout};
    /// let ctx = Context::cpu()?;
    /// let data = [1.0f64, 0., 0., 0., 0., 0., 0., 2.];
    /// let a = BsrMatrix::from_dense(&ctx, DenseRef::packed(&data, 2, 4, Layout::RowMajor)?, (1, 2))?;
    /// assert_eq!(a.nnzb(), 2);
    /// let parts = a.export::<i64>()?;
    /// assert_eq!(parts.row_ptr, vec![0, 1, 2]);
    /// assert_eq!(parts.col_idx, vec![0, 1]);
    /// assert_eq!(parts.values, vec![1.0, 0.0, 0.0, 2.0]);
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn from_dense(ctx: &Context, dense: DenseRef<'_, T>, block_shape: (usize, usize)) -> Result<Self> {
        let bh = block_dim("block_height", block_shape.0)?;
        let bw = block_dim("block_width", block_shape.1)?;
        // SAFETY: a DenseRef is readable for its whole span (checked for host slices, promised by
        // the caller of from_raw_parts for device memory).
        let handle = unsafe { bsrmm_sys::ffi::matrix_from_dense(ctx.lock().pin_mut(), &dense.to_c(), bh, bw)? };
        Self::wrap(handle, ctx)
    }

    fn wrap(handle: UniquePtr<bsrmm_sys::ffi::Matrix>, ctx: &Context) -> Result<Self> {
        let i = bsrmm_sys::ffi::matrix_info(&handle)?;
        if DType::from_c(i.dtype) != Some(T::DTYPE) {
            return Err(Error::new(Status::Internal, format!("the core made a matrix of dtype {} for {:?}", i.dtype, T::DTYPE)));
        }
        let info = Info {
            rows: i.rows as usize,
            cols: i.cols as usize,
            block_height: i.block_height as usize,
            block_width: i.block_width as usize,
            nnzb: i.nnzb as usize,
            device: Device::from_c(i.device),
        };
        Ok(BsrMatrix { handle, info, context: ctx.clone(), _element: PhantomData })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.info.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.info.cols
    }
    /// `(rows, cols)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.info.rows, self.info.cols)
    }
    /// `(block_height, block_width)`.
    pub fn block_shape(&self) -> (usize, usize) {
        (self.info.block_height, self.info.block_width)
    }
    /// Stored blocks.
    pub fn nnzb(&self) -> usize {
        self.info.nnzb
    }
    /// Stored values (`nnzb * block_height * block_width`).
    pub fn nnz(&self) -> usize {
        self.info.nnzb * self.info.block_height * self.info.block_width
    }
    /// The element type.
    pub fn dtype(&self) -> DType {
        T::DTYPE
    }
    /// Where the matrix lives.
    pub fn device(&self) -> Device {
        self.info.device
    }
    /// The context the matrix was made in.
    pub fn context(&self) -> &Context {
        &self.context
    }

    /// Copies the structure and values out to host memory, with indices of type `I`.
    pub fn export<I: Index>(&self) -> Result<BsrParts<T, I>> {
        let block_rows = if self.info.block_height == 0 { 0 } else { self.info.rows / self.info.block_height };
        let mut parts = BsrParts {
            row_ptr: try_filled(block_rows + 1, I::default(), "export: row_ptr")?,
            col_idx: try_filled(self.info.nnzb, I::default(), "export: col_idx")?,
            values: try_filled(self.nnz(), T::default(), "export: values")?,
        };
        // SAFETY: the three vectors are sized exactly as the matrix's info says.
        unsafe {
            bsrmm_sys::ffi::matrix_export(
                self.native(),
                I::C_TYPE,
                parts.row_ptr.as_mut_ptr() as usize,
                parts.col_idx.as_mut_ptr() as usize,
                parts.values.as_mut_ptr() as usize,
            )?
        };
        Ok(parts)
    }

    /// An fp8 matrix's scales: their kind and values (one per tensor, stored block in the
    /// matrix's block order, or block row). Another dtype's matrix has none:
    /// `BSRMM_STATUS_INVALID_ARGUMENT`.
    pub fn scales(&self) -> Result<(ScaleKind, Vec<f32>)> {
        // SAFETY: a null address asks for the kind and count only.
        let info = unsafe { bsrmm_sys::ffi::matrix_export_scales(self.native(), 0)? };
        let count = usize::try_from(info.count)
            .map_err(|_| Error::new(Status::Internal, format!("the core reported {} scales", info.count)))?;
        let mut values = try_filled(count, 0.0f32, "scales")?;
        // SAFETY: `values` holds the count the core just reported for this (immutable) matrix.
        unsafe { bsrmm_sys::ffi::matrix_export_scales(self.native(), values.as_mut_ptr() as usize)? };
        let kind = ScaleKind::from_c(info.kind)
            .ok_or_else(|| Error::new(Status::Internal, format!("the core reported scale kind {}", info.kind)))?;
        Ok((kind, values))
    }

    /// The matrix as a dense host matrix in `layout` (a device matrix is copied to the host
    /// first). A dense copy too large to allocate (a sparse matrix need not fit densely) is
    /// `BSRMM_STATUS_OUT_OF_MEMORY`.
    pub fn to_dense(&self, layout: Layout) -> Result<Dense<T>> {
        if self.info.device != Device::Cpu {
            return self.copy_to(&Context::cpu()?)?.to_dense(layout);
        }
        let mut out = Dense::try_zeros(self.info.rows, self.info.cols, layout)
            .map_err(|e| Error::new(e.status(), format!("to_dense: {}", e.message())))?;
        let view = out.view_mut();
        // SAFETY: `out` is a packed host matrix of the matrix's shape and dtype.
        unsafe { bsrmm_sys::ffi::matrix_to_dense(self.context.lock().pin_mut(), self.native(), &view.to_c())? };
        Ok(out)
    }

    /// A copy of the matrix on `ctx`'s device.
    pub fn copy_to(&self, ctx: &Context) -> Result<BsrMatrix<T>> {
        let handle = bsrmm_sys::ffi::matrix_copy_to(ctx.lock().pin_mut(), self.native())?;
        Self::wrap(handle, ctx)
    }

    /// A matrix with this one's structure and new `values` (host memory, [`nnz`](Self::nnz)
    /// long, blocks in this matrix's order), copied onto its device. The structure is not
    /// validated, uploaded or scheduled again: both matrices share it, which makes this the
    /// cheap way to multiply with weights that change every step.
    ///
    /// ```
    /// use bsrmm::{BsrMatrix, Context, CreateOptions};
    /// let ctx = Context::cpu()?;
    /// // 4x4, 2x2 blocks on the diagonal.
    /// let a = BsrMatrix::from_bsr(&ctx, 4, 4, (2, 2), &[0i32, 1, 2], &[0, 1], &[1.0f32; 8], CreateOptions::default())?;
    /// let doubled = a.with_values(&[2.0; 8])?;
    /// assert_eq!(doubled.export::<i32>()?.values, vec![2.0; 8]);
    /// assert!(a.with_values(&[2.0; 7]).is_err()); // one value short
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn with_values(&self, values: &[T]) -> Result<Self> {
        if values.len() != self.nnz() {
            return Err(Error::invalid_argument(format!(
                "values has {} elements; the matrix has nnzb * block_height * block_width = {}",
                values.len(),
                self.nnz()
            )));
        }
        // SAFETY: a host slice of exactly the matrix's value count, copied before returning.
        unsafe { self.with_raw_values(values.as_ptr(), Device::Cpu, false) }
    }

    /// [`with_values`](Self::with_values) from a raw pointer on `device`; with `borrow` the
    /// values (which must then be where this matrix is: on the host, or on its CUDA device) are
    /// used in place instead of copied.
    ///
    /// # Safety
    /// `values` must be readable for [`nnz`](Self::nnz) elements on `device` for the call; with
    /// `borrow`, it must also stay valid and unchanged while the new matrix lives.
    pub unsafe fn with_raw_values(&self, values: *const T, device: Device, borrow: bool) -> Result<Self> {
        let flags = if borrow { 2 } else { 0 };
        // SAFETY: the caller guarantees the values (this function's contract).
        let handle = unsafe {
            bsrmm_sys::ffi::matrix_with_values(
                self.context.lock().pin_mut(),
                self.native(),
                values as usize,
                &device.to_c(),
                flags,
            )?
        };
        Self::wrap(handle, &self.context)
    }

    pub(crate) fn native(&self) -> &bsrmm_sys::ffi::Matrix {
        &self.handle
    }
}

impl<T: Element> std::fmt::Debug for BsrMatrix<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BsrMatrix")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.shape())
            .field("block_shape", &self.block_shape())
            .field("nnzb", &self.info.nnzb)
            .field("device", &self.info.device)
            .finish()
    }
}
