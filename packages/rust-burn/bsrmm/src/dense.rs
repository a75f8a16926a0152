//! Dense operands: borrowed views ([`DenseRef`], [`DenseMut`]) over host slices or raw device
//! memory, and an owned host matrix ([`Dense`]).

use std::marker::PhantomData;

use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result, Status};

/// Storage order of a dense matrix. Element (i, j) lives at `i * ld + j` (row-major) or
/// `j * ld + i` (column-major).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Layout {
    /// Rows are contiguous (C order).
    #[default]
    RowMajor,
    /// Columns are contiguous (Fortran order).
    ColMajor,
}

impl Layout {
    /// The smallest valid leading dimension for a `rows x cols` matrix.
    pub fn min_ld(self, rows: usize, cols: usize) -> usize {
        match self {
            Layout::RowMajor => cols,
            Layout::ColMajor => rows,
        }
    }

    /// The offset of element (i, j) with leading dimension `ld`.
    pub fn offset(self, i: usize, j: usize, ld: usize) -> usize {
        match self {
            Layout::RowMajor => i * ld + j,
            Layout::ColMajor => j * ld + i,
        }
    }

    fn to_c(self) -> i32 {
        self as i32
    }
}

/// The shape of a strided matrix view, checked once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Shape {
    rows: usize,
    cols: usize,
    ld: usize,
    layout: Layout,
}

impl Shape {
    /// Checks `ld` and returns how many elements the view spans, naming `what` in errors.
    fn span(&self, what: &str) -> Result<usize> {
        let (major, minor) = match self.layout {
            Layout::RowMajor => (self.rows, self.cols),
            Layout::ColMajor => (self.cols, self.rows),
        };
        if self.ld < minor.max(1) {
            return Err(Error::invalid_argument(format!(
                "{what}: ld = {} < {} ({} of a {:?} {}x{} matrix)",
                self.ld,
                minor.max(1),
                if self.layout == Layout::RowMajor { "cols" } else { "rows" },
                self.layout,
                self.rows,
                self.cols
            )));
        }
        if major == 0 || minor == 0 {
            return Ok(0);
        }
        (major - 1)
            .checked_mul(self.ld)
            .and_then(|n| n.checked_add(minor))
            .filter(|&n| n <= isize::MAX as usize)
            .ok_or_else(|| Error::invalid_argument(format!("{what}: {}x{} with ld {} overflows", self.rows, self.cols, self.ld)))
    }

    fn check_len(&self, what: &str, len: usize) -> Result<()> {
        let span = self.span(what)?;
        if len < span {
            return Err(Error::invalid_argument(format!(
                "{what}: a {:?} {}x{} matrix with ld {} needs {span} elements, the slice has {len}",
                self.layout, self.rows, self.cols, self.ld
            )));
        }
        Ok(())
    }
}

/// A read-only dense matrix view: host memory borrowed from a slice, or device memory named by
/// a raw pointer.
#[derive(Debug, Clone, Copy)]
pub struct DenseRef<'a, T: Element> {
    ptr: *const T,
    shape: Shape,
    device: Device,
    _borrow: PhantomData<&'a [T]>,
}

// SAFETY: a DenseRef is a shared borrow of T: Sync data (or the caller's promise for device
// memory), exactly like &[T].
unsafe impl<T: Element> Send for DenseRef<'_, T> {}
unsafe impl<T: Element> Sync for DenseRef<'_, T> {}

impl<'a, T: Element> DenseRef<'a, T> {
    /// A `rows x cols` view of host memory, with leading dimension `ld`.
    ///
    /// ```
    /// use bsrmm::{DenseRef, Layout};
    /// let data = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let b = DenseRef::new(&data, 2, 3, 3, Layout::RowMajor)?;
    /// assert_eq!(b.get(1, 0), Some(4.0));
    /// assert!(DenseRef::new(&data, 3, 3, 3, Layout::RowMajor).is_err()); // needs 9 elements
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn new(data: &'a [T], rows: usize, cols: usize, ld: usize, layout: Layout) -> Result<Self> {
        let shape = Shape { rows, cols, ld, layout };
        shape.check_len("dense view", data.len())?;
        Ok(DenseRef { ptr: data.as_ptr(), shape, device: Device::Cpu, _borrow: PhantomData })
    }

    /// A tightly packed `rows x cols` view (`ld` = cols for row-major, rows for column-major;
    /// at least 1, so an empty matrix has a valid view).
    pub fn packed(data: &'a [T], rows: usize, cols: usize, layout: Layout) -> Result<Self> {
        Self::new(data, rows, cols, layout.min_ld(rows, cols).max(1), layout)
    }

    /// A column vector (`len x 1`) over a slice: the shape a bias takes.
    pub fn vector(data: &'a [T]) -> Self {
        let shape = Shape { rows: data.len(), cols: 1, ld: 1, layout: Layout::RowMajor };
        DenseRef { ptr: data.as_ptr(), shape, device: Device::Cpu, _borrow: PhantomData }
    }

    /// A view of memory on `device` (typically a CUDA allocation).
    ///
    /// # Safety
    /// `ptr` must point to memory on `device` that holds the whole strided matrix and stays
    /// valid and unchanged (no writes from elsewhere) while the view, and any GPU work that
    /// reads it, is alive; for `Device::Cpu` the memory must be readable host memory.
    pub unsafe fn from_raw_parts(
        ptr: *const T,
        rows: usize,
        cols: usize,
        ld: usize,
        layout: Layout,
        device: Device,
    ) -> Result<Self> {
        let shape = Shape { rows, cols, ld, layout };
        shape.span("dense view")?;
        Ok(DenseRef { ptr, shape, device, _borrow: PhantomData })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.shape.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.shape.cols
    }
    /// Leading dimension, in elements.
    pub fn ld(&self) -> usize {
        self.shape.ld
    }
    /// Storage order.
    pub fn layout(&self) -> Layout {
        self.shape.layout
    }
    /// Where the memory is.
    pub fn device(&self) -> Device {
        self.device
    }
    /// The address of element (0, 0).
    pub fn as_ptr(&self) -> *const T {
        self.ptr
    }

    /// Element (i, j) of a host view; `None` out of bounds or for device memory.
    pub fn get(&self, i: usize, j: usize) -> Option<T> {
        if self.device != Device::Cpu || i >= self.shape.rows || j >= self.shape.cols {
            return None;
        }
        // SAFETY: in bounds of a host view whose span was checked against its slice.
        Some(unsafe { *self.ptr.add(self.shape.layout.offset(i, j, self.shape.ld)) })
    }

    pub(crate) fn to_c(&self) -> bsrmm_sys::ffi::Dense {
        descriptor::<T>(self.ptr as usize, &self.shape, self.device)
    }
}

/// A writable dense matrix view, for outputs (host slice or raw device memory).
#[derive(Debug)]
pub struct DenseMut<'a, T: Element> {
    ptr: *mut T,
    shape: Shape,
    device: Device,
    _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: an exclusive borrow of T: Send data (or the caller's promise), like &mut [T].
unsafe impl<T: Element> Send for DenseMut<'_, T> {}
unsafe impl<T: Element> Sync for DenseMut<'_, T> {}

impl<'a, T: Element> DenseMut<'a, T> {
    /// A `rows x cols` view of host memory with leading dimension `ld`.
    pub fn new(data: &'a mut [T], rows: usize, cols: usize, ld: usize, layout: Layout) -> Result<Self> {
        let shape = Shape { rows, cols, ld, layout };
        shape.check_len("dense output view", data.len())?;
        Ok(DenseMut { ptr: data.as_mut_ptr(), shape, device: Device::Cpu, _borrow: PhantomData })
    }

    /// A tightly packed `rows x cols` view.
    pub fn packed(data: &'a mut [T], rows: usize, cols: usize, layout: Layout) -> Result<Self> {
        Self::new(data, rows, cols, layout.min_ld(rows, cols).max(1), layout)
    }

    /// A writable view of memory on `device`.
    ///
    /// # Safety
    /// As [`DenseRef::from_raw_parts`], and the memory must also be writable and not accessed
    /// elsewhere while the view, and any GPU work that writes it, is alive.
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        rows: usize,
        cols: usize,
        ld: usize,
        layout: Layout,
        device: Device,
    ) -> Result<Self> {
        let shape = Shape { rows, cols, ld, layout };
        shape.span("dense output view")?;
        Ok(DenseMut { ptr, shape, device, _borrow: PhantomData })
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.shape.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.shape.cols
    }
    /// Leading dimension, in elements.
    pub fn ld(&self) -> usize {
        self.shape.ld
    }
    /// Storage order.
    pub fn layout(&self) -> Layout {
        self.shape.layout
    }
    /// Where the memory is.
    pub fn device(&self) -> Device {
        self.device
    }

    /// A read-only view of the same memory.
    pub fn as_ref(&self) -> DenseRef<'_, T> {
        DenseRef { ptr: self.ptr, shape: self.shape, device: self.device, _borrow: PhantomData }
    }

    pub(crate) fn to_c(&self) -> bsrmm_sys::ffi::Dense {
        descriptor::<T>(self.ptr as usize, &self.shape, self.device)
    }
}

fn descriptor<T: Element>(data: usize, shape: &Shape, device: Device) -> bsrmm_sys::ffi::Dense {
    // usize -> i64 cannot truncate: the span check bounds every size by isize::MAX.
    bsrmm_sys::ffi::Dense {
        data,
        rows: shape.rows as i64,
        cols: shape.cols as i64,
        ld: shape.ld as i64,
        layout: shape.layout.to_c(),
        dtype: T::DTYPE.to_c(),
        device: device.to_c(),
    }
}

/// An owned, packed dense matrix in host memory.
///
/// ```
/// use bsrmm::{Dense, Layout};
/// let mut m = Dense::<f64>::zeros(2, 3, Layout::ColMajor);
/// m.set(1, 2, 7.0);
/// assert_eq!(m.get(1, 2), 7.0);
/// assert_eq!(m.data()[2 * 2 + 1], 7.0); // column 2, row 1
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Dense<T: Element> {
    data: Vec<T>,
    rows: usize,
    cols: usize,
    layout: Layout,
}

/// A vector of `len` copies of `value`, or `BSRMM_STATUS_OUT_OF_MEMORY` instead of the process
/// abort `vec!` ends in when the allocation fails: sizes here come from callers (a result's
/// shape, a dense copy of a sparse matrix), so a request no machine can serve must be an error
/// the caller can handle. `what` names the buffer in the message. Public for the bindings, which
/// allocate buffers of sizes JS or Python hands them.
///
/// ```
/// let err = bsrmm::try_filled(usize::MAX / 4, 0f32, "C").unwrap_err();
/// assert_eq!(err.code(), "BSRMM_STATUS_OUT_OF_MEMORY");
/// assert!(err.message().starts_with("C: "));
/// ```
pub fn try_filled<T: Clone>(len: usize, value: T, what: &str) -> Result<Vec<T>> {
    let bytes = len.checked_mul(std::mem::size_of::<T>()).filter(|&b| b <= isize::MAX as usize);
    let Some(bytes) = bytes else {
        return Err(Error::new(
            Status::OutOfMemory,
            format!("{what}: {len} elements of {} bytes exceed the address space", std::mem::size_of::<T>()),
        ));
    };
    let mut data = Vec::new();
    data.try_reserve_exact(len)
        .map_err(|_| Error::new(Status::OutOfMemory, format!("{what}: allocating {bytes} bytes ({len} elements) failed")))?;
    data.resize(len, value);
    Ok(data)
}

/// `rows * cols`, or an error naming the shape when it overflows.
fn elements(rows: usize, cols: usize, what: &str) -> Result<usize> {
    rows.checked_mul(cols)
        .ok_or_else(|| Error::new(Status::OutOfMemory, format!("{what}: a {rows}x{cols} matrix has more elements than usize holds")))
}

impl<T: Element> Dense<T> {
    /// A `rows x cols` matrix of zeros.
    ///
    /// # Panics
    /// When the matrix cannot be allocated, naming its shape (as `Vec` panics on capacity
    /// overflow, but without aborting the process); [`try_zeros`](Self::try_zeros) returns that
    /// as an error.
    pub fn zeros(rows: usize, cols: usize, layout: Layout) -> Self {
        Self::try_zeros(rows, cols, layout).unwrap_or_else(|e| panic!("Dense::zeros: {e}"))
    }

    /// A `rows x cols` matrix of zeros, or `BSRMM_STATUS_OUT_OF_MEMORY` when `rows * cols`
    /// overflows or the allocation fails.
    ///
    /// ```
    /// use bsrmm::{Dense, Layout};
    /// let err = Dense::<f32>::try_zeros(1 << 26, 1 << 26, Layout::RowMajor).unwrap_err(); // 16 PiB
    /// assert_eq!(err.code(), "BSRMM_STATUS_OUT_OF_MEMORY");
    /// assert_eq!(Dense::<f32>::try_zeros(2, 3, Layout::RowMajor)?.data(), &[0.0; 6]);
    /// # Ok::<(), bsrmm::Error>(())
    /// ```
    pub fn try_zeros(rows: usize, cols: usize, layout: Layout) -> Result<Self> {
        let what = "Dense::zeros";
        let data = try_filled(elements(rows, cols, what)?, T::default(), what)?;
        Ok(Dense { data, rows, cols, layout })
    }

    /// Wraps packed data (`rows * cols` elements in `layout` order).
    pub fn from_vec(data: Vec<T>, rows: usize, cols: usize, layout: Layout) -> Result<Self> {
        let expected = rows.checked_mul(cols).ok_or_else(|| Error::invalid_argument(format!("{rows}x{cols} overflows")))?;
        if data.len() != expected {
            return Err(Error::invalid_argument(format!(
                "data has {} elements, a {rows}x{cols} matrix needs {expected}",
                data.len()
            )));
        }
        Ok(Dense { data, rows, cols, layout })
    }

    /// A matrix whose element (i, j) is `f(i, j)`.
    ///
    /// # Panics
    /// As [`zeros`](Self::zeros); [`try_from_fn`](Self::try_from_fn) returns the error instead.
    pub fn from_fn(rows: usize, cols: usize, layout: Layout, f: impl FnMut(usize, usize) -> T) -> Self {
        Self::try_from_fn(rows, cols, layout, f).unwrap_or_else(|e| panic!("Dense::from_fn: {e}"))
    }

    /// [`from_fn`](Self::from_fn), with an unallocatable shape as `BSRMM_STATUS_OUT_OF_MEMORY`.
    pub fn try_from_fn(rows: usize, cols: usize, layout: Layout, mut f: impl FnMut(usize, usize) -> T) -> Result<Self> {
        let mut m = Self::try_zeros(rows, cols, layout)?;
        for i in 0..rows {
            for j in 0..cols {
                m.set(i, j, f(i, j));
            }
        }
        Ok(m)
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.rows
    }
    /// Columns.
    pub fn cols(&self) -> usize {
        self.cols
    }
    /// Storage order.
    pub fn layout(&self) -> Layout {
        self.layout
    }
    /// The packed elements.
    pub fn data(&self) -> &[T] {
        &self.data
    }
    /// The packed elements, mutably.
    pub fn data_mut(&mut self) -> &mut [T] {
        &mut self.data
    }
    /// The packed elements, by value.
    pub fn into_vec(self) -> Vec<T> {
        self.data
    }

    /// Element (i, j). Panics out of bounds, like slice indexing.
    pub fn get(&self, i: usize, j: usize) -> T {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) outside a {}x{} matrix", self.rows, self.cols);
        self.data[self.layout.offset(i, j, self.layout.min_ld(self.rows, self.cols))]
    }

    /// Sets element (i, j). Panics out of bounds, like slice indexing.
    pub fn set(&mut self, i: usize, j: usize, value: T) {
        assert!(i < self.rows && j < self.cols, "({i}, {j}) outside a {}x{} matrix", self.rows, self.cols);
        let ld = self.layout.min_ld(self.rows, self.cols);
        self.data[self.layout.offset(i, j, ld)] = value;
    }

    /// A read-only view.
    pub fn view(&self) -> DenseRef<'_, T> {
        let shape = Shape { rows: self.rows, cols: self.cols, ld: self.layout.min_ld(self.rows, self.cols).max(1), layout: self.layout };
        DenseRef { ptr: self.data.as_ptr(), shape, device: Device::Cpu, _borrow: PhantomData }
    }

    /// A writable view.
    pub fn view_mut(&mut self) -> DenseMut<'_, T> {
        let shape = Shape { rows: self.rows, cols: self.cols, ld: self.layout.min_ld(self.rows, self.cols).max(1), layout: self.layout };
        DenseMut { ptr: self.data.as_mut_ptr(), shape, device: Device::Cpu, _borrow: PhantomData }
    }
}
