//! [`Scales`]: the fp32 scales of an fp8 operand (`bsrmm_scales`). The value an fp8 element
//! stands for is its fp8 value times its scale.

use crate::device::Device;
use crate::error::{Error, Result};

/// Which elements share one scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScaleKind {
    /// A or B: one scale for every element.
    PerTensor,
    /// A: one per stored block, in the matrix's block order (`nnzb` scales).
    PerBlock,
    /// A: one per block row (`rows / block_height` scales).
    PerBlockRow,
    /// B: one per column (`B.cols` scales).
    PerColumn,
}

impl ScaleKind {
    pub(crate) fn to_c(self) -> i32 {
        match self {
            ScaleKind::PerTensor => 0,
            ScaleKind::PerBlock => 1,
            ScaleKind::PerBlockRow => 2,
            ScaleKind::PerColumn => 3,
        }
    }

    pub(crate) fn from_c(value: i32) -> Option<ScaleKind> {
        [ScaleKind::PerTensor, ScaleKind::PerBlock, ScaleKind::PerBlockRow, ScaleKind::PerColumn]
            .into_iter()
            .find(|k| k.to_c() == value)
    }
}

#[derive(Debug, Clone, Copy)]
enum Source<'a> {
    One(f32),
    Host(&'a [f32]),
    Raw { data: *const f32, count: usize, device: Device },
}

/// The scales of an fp8 operand, borrowed for the call that takes them (a matrix copies its
/// own; B's are read during the multiply). The core checks the count against the kind and
/// the operand, and that every scale is finite.
///
/// ```
/// use bsrmm::{ScaleKind, Scales};
/// let per_block = [0.5f32, 2.0, 0.25];
/// assert_eq!(Scales::per_block(&per_block).kind(), ScaleKind::PerBlock);
/// assert_eq!(Scales::per_tensor(1.5).len(), 1);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Scales<'a> {
    kind: ScaleKind,
    source: Source<'a>,
}

impl<'a> Scales<'a> {
    /// One scale for the whole operand (A or B).
    pub fn per_tensor(scale: f32) -> Self {
        Scales { kind: ScaleKind::PerTensor, source: Source::One(scale) }
    }
    /// A: one scale per stored block, in the order of the blocks given to the constructor.
    pub fn per_block(scales: &'a [f32]) -> Self {
        Scales { kind: ScaleKind::PerBlock, source: Source::Host(scales) }
    }
    /// A: one scale per block row.
    pub fn per_block_row(scales: &'a [f32]) -> Self {
        Scales { kind: ScaleKind::PerBlockRow, source: Source::Host(scales) }
    }
    /// B: one scale per column.
    pub fn per_column(scales: &'a [f32]) -> Self {
        Scales { kind: ScaleKind::PerColumn, source: Source::Host(scales) }
    }
    /// `kind`'s scales from host memory.
    pub fn new(kind: ScaleKind, scales: &'a [f32]) -> Self {
        Scales { kind, source: Source::Host(scales) }
    }

    /// Scales in memory the caller manages, e.g. B's per-column scales on the GPU (a CUDA
    /// multiply reads those in place from B's device and refuses host ones).
    ///
    /// # Safety
    /// `data` must be readable for `count` f32 on `device` until the call that takes the scales
    /// has finished (for a CUDA multiply: until the context's queued work is done).
    pub unsafe fn from_raw_parts(kind: ScaleKind, data: *const f32, count: usize, device: Device) -> Self {
        Scales { kind, source: Source::Raw { data, count, device } }
    }

    /// Which elements share a scale.
    pub fn kind(&self) -> ScaleKind {
        self.kind
    }
    /// How many scales.
    pub fn len(&self) -> usize {
        match self.source {
            Source::One(_) => 1,
            Source::Host(s) => s.len(),
            Source::Raw { count, .. } => count,
        }
    }
    /// Whether there are none (a PER_BLOCK matrix without stored blocks needs none).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The C descriptor of no scales (an operand that takes none).
    pub(crate) fn none() -> bsrmm_sys::ffi::Scales {
        bsrmm_sys::ffi::Scales { kind: 0, data: 0, count: 0, device: Device::Cpu.to_c() }
    }

    /// The C descriptor, pointing into `self` (so valid while `self` is borrowed).
    pub(crate) fn as_c(&self) -> Result<bsrmm_sys::ffi::Scales> {
        let (data, device) = match &self.source {
            Source::One(value) => (value as *const f32, Device::Cpu),
            Source::Host(s) => (s.as_ptr(), Device::Cpu),
            Source::Raw { data, device, .. } => (*data, *device),
        };
        let count = i64::try_from(self.len())
            .map_err(|_| Error::invalid_argument(format!("scales: {} does not fit in 64 bits", self.len())))?;
        Ok(bsrmm_sys::ffi::Scales { kind: self.kind.to_c(), data: data as usize, count, device: device.to_c() })
    }
}
