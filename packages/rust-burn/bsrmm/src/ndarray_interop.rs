//! Conversions between ndarray's 2-D arrays and the dense operands (cargo feature `ndarray`).
//!
//! A view converts without a copy when bsrmm can address it: one axis contiguous (stride 1) and
//! the other a positive stride at least that axis's length (a row- or column-major matrix,
//! possibly a slice of a wider one). Other views (stepped, reversed, broadcast) are an
//! `InvalidArgument` error that says so; `.as_standard_layout()` gives a view that converts.
//!
//! ```
//! use bsrmm::{matmul, BsrMatrix, Context, DenseRef, Layout, MatmulOptions};
//! use ndarray::{array, Array2};
//!
//! let ctx = Context::cpu()?;
//! let a = BsrMatrix::<f64>::from_bsr(&ctx, 2, 2, (1, 1), &[0i32, 1, 2], &[0, 1], &[2.0, 3.0], Default::default())?;
//! let b = array![[1.0, 2.0], [3.0, 4.0]];
//! let c: Array2<f64> = matmul(&ctx, &a, DenseRef::try_from(b.t())?, Layout::RowMajor, &MatmulOptions::new())?.into();
//! assert_eq!(c, array![[2.0, 6.0], [6.0, 12.0]]); // A * B^T, B^T read in place as column-major
//! # Ok::<(), bsrmm::Error>(())
//! ```

use ndarray::{Array2, ArrayView2, ArrayViewMut2, ShapeBuilder};

use crate::dense::{Dense, DenseMut, DenseRef, Layout};
use crate::device::Device;
use crate::element::Element;
use crate::error::{Error, Result};

/// The layout and leading dimension bsrmm reads a `rows x cols` view with `strides` in, if any.
fn addressable(rows: usize, cols: usize, strides: &[isize]) -> Result<(Layout, usize)> {
    let (s0, s1) = (strides[0], strides[1]);
    // ndarray may report any stride for an axis of length <= 1: it is never stepped over.
    let contiguous = |len: usize, stride: isize| len <= 1 || stride == 1;
    let leading = |other_len: usize, stride: isize, minor: usize| {
        if other_len <= 1 {
            Some(minor.max(1))
        } else {
            usize::try_from(stride).ok().filter(|&ld| ld >= minor.max(1))
        }
    };
    if contiguous(cols, s1)
        && let Some(ld) = leading(rows, s0, cols)
    {
        return Ok((Layout::RowMajor, ld));
    }
    if contiguous(rows, s0)
        && let Some(ld) = leading(cols, s1, rows)
    {
        return Ok((Layout::ColMajor, ld));
    }
    Err(Error::invalid_argument(format!(
        "an ndarray view of shape [{rows}, {cols}] with strides [{s0}, {s1}] is not row- or column-major \
         (one stride 1, the other >= that axis's length): convert .as_standard_layout() first"
    )))
}

impl<'a, T: Element> TryFrom<ArrayView2<'a, T>> for DenseRef<'a, T> {
    type Error = Error;

    fn try_from(view: ArrayView2<'a, T>) -> Result<Self> {
        let (rows, cols) = view.dim();
        let (layout, ld) = addressable(rows, cols, view.strides())?;
        // SAFETY: host memory ndarray lends for 'a, read-only; the core reads only the elements
        // (i, j) of the view, each at i * ld + j (row-major) or j * ld + i from the first, which
        // is where the view's strides put it.
        unsafe { DenseRef::from_raw_parts(view.as_ptr(), rows, cols, ld, layout, Device::Cpu) }
    }
}

impl<'a, T: Element> TryFrom<ArrayViewMut2<'a, T>> for DenseMut<'a, T> {
    type Error = Error;

    fn try_from(mut view: ArrayViewMut2<'a, T>) -> Result<Self> {
        let (rows, cols) = view.dim();
        let (layout, ld) = addressable(rows, cols, view.strides())?;
        // SAFETY: as for DenseRef, and the view is an exclusive borrow for 'a (ndarray's mutable
        // views never alias), so the core may write every element.
        unsafe { DenseMut::from_raw_parts(view.as_mut_ptr(), rows, cols, ld, layout, Device::Cpu) }
    }
}

impl<'a, T: Element> TryFrom<DenseRef<'a, T>> for ArrayView2<'a, T> {
    type Error = Error;

    /// Host views only: device memory is `InvalidArgument`.
    fn try_from(view: DenseRef<'a, T>) -> Result<Self> {
        if view.device() != Device::Cpu {
            return Err(Error::invalid_argument(format!(
                "the dense view is on {}: an ndarray view needs host memory (copy it to the host first)",
                view.device()
            )));
        }
        let strides = match view.layout() {
            Layout::RowMajor => (view.ld(), 1),
            Layout::ColMajor => (1, view.ld()),
        };
        // SAFETY: a host DenseRef spans its whole strided matrix (checked against its slice, or
        // promised by from_raw_parts) and borrows it for 'a, read-only.
        Ok(unsafe { ArrayView2::from_shape_ptr((view.rows(), view.cols()).strides(strides), view.as_ptr()) })
    }
}

impl<T: Element> From<Dense<T>> for Array2<T> {
    /// The matrix without a copy, in its own layout (C order or Fortran order).
    fn from(dense: Dense<T>) -> Self {
        let (rows, cols, layout) = (dense.rows(), dense.cols(), dense.layout());
        let shape = (rows, cols).set_f(layout == Layout::ColMajor);
        Array2::from_shape_vec(shape, dense.into_vec()).expect("a Dense holds exactly rows * cols elements")
    }
}
