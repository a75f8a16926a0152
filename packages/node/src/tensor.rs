//! `NativeTensor`: a dense matrix owned by the addon, in host memory or in a CUDA allocation, so
//! that repeated multiplies read B and write C where they already are (no copy across the bus).
//!
//! Multiplies running on a worker thread hold *claims* on their tensors: any number of readers
//! (B, bias) or one writer (out). A claim is taken on the JS thread when the multiply is
//! submitted and released when it settles, so a conflicting use (a second multiply writing the
//! same `out`, `toArray()` of a tensor being written) is refused at once with an error that says
//! so, instead of blocking the event loop or racing.

use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};

use bsrmm::{bf16, f16, DType, DenseMut, DenseRef, Device, DeviceBuffer, Element, Layout, Status};
use napi::bindgen_prelude::Uint8Array;
use napi_derive::napi;

use crate::device;
use crate::dtype::{self, with_dtype, JsArray, JsElement};
use crate::error::{invalid, to_napi, IntoNapi};
use crate::matrix::{parse_layout, size};

/// A tensor's elements: a host vector, or a CUDA allocation.
pub enum Storage<T: Element> {
    Host(Vec<T>),
    Device(DeviceBuffer<T>),
}

/// Storage whatever the element type; `with_storage!` runs generic code on it.
pub enum AnyStorage {
    F32(Storage<f32>),
    F64(Storage<f64>),
    F16(Storage<f16>),
    BF16(Storage<bf16>),
}

macro_rules! with_storage {
    ($any:expr, |$s:ident| $body:expr) => {
        match $any {
            $crate::tensor::AnyStorage::F32($s) => $body,
            $crate::tensor::AnyStorage::F64($s) => $body,
            $crate::tensor::AnyStorage::F16($s) => $body,
            $crate::tensor::AnyStorage::BF16($s) => $body,
        }
    };
}

/// `T`'s storage inside and out of `AnyStorage` (the typed multiply needs its own type back).
pub trait TensorElement: JsElement {
    fn wrap_storage(storage: Storage<Self>) -> AnyStorage;
    fn storage(any: &AnyStorage) -> Option<&Storage<Self>>;
    fn storage_mut(any: &mut AnyStorage) -> Option<&mut Storage<Self>>;
}

macro_rules! tensor_element {
    ($t:ty, $variant:ident) => {
        impl TensorElement for $t {
            fn wrap_storage(storage: Storage<Self>) -> AnyStorage {
                AnyStorage::$variant(storage)
            }
            fn storage(any: &AnyStorage) -> Option<&Storage<Self>> {
                match any {
                    AnyStorage::$variant(s) => Some(s),
                    _ => None,
                }
            }
            fn storage_mut(any: &mut AnyStorage) -> Option<&mut Storage<Self>> {
                match any {
                    AnyStorage::$variant(s) => Some(s),
                    _ => None,
                }
            }
        }
    };
}
tensor_element!(f32, F32);
tensor_element!(f64, F64);
tensor_element!(f16, F16);
tensor_element!(bf16, BF16);

impl<T: Element> Storage<T> {
    fn new(values: Vec<T>, device: Device) -> bsrmm::Result<Self> {
        match device {
            Device::Cpu => Ok(Storage::Host(values)),
            Device::Cuda(_) => Ok(Storage::Device(DeviceBuffer::from_host(device, &values)?)),
        }
    }

    fn to_vec(&self) -> bsrmm::Result<Vec<T>> {
        match self {
            Storage::Host(values) => {
                let mut copy = bsrmm::try_filled(values.len(), T::default(), "toArray()")?;
                copy.copy_from_slice(values);
                Ok(copy)
            }
            Storage::Device(buffer) => buffer.to_vec(),
        }
    }

    /// A read view of the whole tensor, on whichever side it lives.
    pub fn view(&self, shape: &TensorShape) -> bsrmm::Result<DenseRef<'_, T>> {
        let ld = shape.layout.min_ld(shape.rows, shape.cols).max(1);
        match self {
            Storage::Host(values) => DenseRef::new(values, shape.rows, shape.cols, ld, shape.layout),
            Storage::Device(buffer) => buffer.view(shape.rows, shape.cols, ld, shape.layout),
        }
    }

    /// The elements as a `len x 1` column: the shape a bias takes, whatever the tensor's shape.
    pub fn vector(&self, len: usize) -> bsrmm::Result<DenseRef<'_, T>> {
        match self {
            Storage::Host(values) => DenseRef::new(values, len, 1, 1, Layout::RowMajor),
            Storage::Device(buffer) => buffer.view(len, 1, 1, Layout::RowMajor),
        }
    }

    /// A write view of the whole tensor.
    pub fn view_mut(&mut self, shape: &TensorShape) -> bsrmm::Result<DenseMut<'_, T>> {
        let ld = shape.layout.min_ld(shape.rows, shape.cols).max(1);
        match self {
            Storage::Host(values) => DenseMut::new(values, shape.rows, shape.cols, ld, shape.layout),
            Storage::Device(buffer) => buffer.view_mut(shape.rows, shape.cols, ld, shape.layout),
        }
    }
}

/// What never changes about a tensor.
#[derive(Clone, Copy)]
pub struct TensorShape {
    pub rows: usize,
    pub cols: usize,
    pub layout: Layout,
    pub dtype: DType,
    pub device: Device,
}

/// Multiplies in flight that use a tensor (see the module comment).
#[derive(Default)]
struct Claims {
    readers: usize,
    writer: bool,
}

pub struct TensorInner {
    pub shape: TensorShape,
    /// `None` once disposed: the memory is freed, the shape stays for messages.
    data: RwLock<Option<AnyStorage>>,
    claims: Mutex<Claims>,
}

impl TensorInner {
    fn claims(&self) -> std::sync::MutexGuard<'_, Claims> {
        // Claims are plain counters: a panic elsewhere cannot leave them half-updated.
        self.claims.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The elements, for a holder of a read claim (or the JS thread with no writer in flight);
    /// see [`present`].
    pub fn read(&self) -> RwLockReadGuard<'_, Option<AnyStorage>> {
        self.data.read().unwrap_or_else(|p| p.into_inner())
    }

    /// The elements, for the holder of the write claim.
    pub fn write(&self) -> RwLockWriteGuard<'_, Option<AnyStorage>> {
        self.data.write().unwrap_or_else(|p| p.into_inner())
    }
}

/// The storage of a tensor that has not been disposed (`what` names it in the error).
pub fn present<'a>(data: &'a Option<AnyStorage>, what: &str) -> napi::Result<&'a AnyStorage> {
    data.as_ref().ok_or_else(|| disposed(what))
}

/// [`present`], writable.
pub fn present_mut<'a>(data: &'a mut Option<AnyStorage>, what: &str) -> napi::Result<&'a mut AnyStorage> {
    data.as_mut().ok_or_else(|| disposed(what))
}

fn disposed(what: &str) -> napi::Error {
    invalid(format!("{what}: the tensor was disposed (dispose() freed its memory)"))
}

/// A multiply's hold on one tensor, released when dropped (when the multiply has settled).
pub struct Claim {
    pub tensor: Arc<TensorInner>,
    write: bool,
}

impl Claim {
    /// Claims `tensor` for reading (`what` names it in the error: "B", "bias").
    pub fn read(tensor: &Arc<TensorInner>, what: &str) -> napi::Result<Claim> {
        let mut claims = tensor.claims();
        if claims.writer {
            return Err(busy(what, "is the output of a multiply still in flight"));
        }
        claims.readers += 1;
        Ok(Claim { tensor: tensor.clone(), write: false })
    }

    /// Claims `tensor` for writing (only `out` is written).
    pub fn write(tensor: &Arc<TensorInner>, what: &str) -> napi::Result<Claim> {
        let mut claims = tensor.claims();
        if claims.writer {
            return Err(busy(what, "is already the output of a multiply still in flight"));
        }
        if claims.readers > 0 {
            return Err(busy(what, &format!("is read by {} multiply(s) still in flight", claims.readers)));
        }
        claims.writer = true;
        Ok(Claim { tensor: tensor.clone(), write: true })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        let mut claims = self.tensor.claims();
        if self.write {
            claims.writer = false;
        } else {
            claims.readers -= 1;
        }
    }
}

fn busy(what: &str, why: &str) -> napi::Error {
    invalid(format!("{what}: the tensor {why}; await that multiply before using the tensor again"))
}

/// A dense matrix in host or device memory (see the `Tensor` TypeScript class).
#[napi]
pub struct NativeTensor {
    pub(crate) inner: Arc<TensorInner>,
}

fn shape(rows: i64, cols: i64, layout: &str, dtype: &str, device: &str) -> napi::Result<TensorShape> {
    Ok(TensorShape {
        rows: size("rows", rows)?,
        cols: size("cols", cols)?,
        layout: parse_layout(layout)?,
        dtype: dtype::parse(dtype)?,
        device: device::parse(device)?,
    })
}

/// The element count of a tensor of `shape`, or OUT_OF_MEMORY naming the shape when its bytes
/// overflow (a count that wraps would make a tensor that holds nothing).
fn elements(shape: &TensorShape) -> napi::Result<usize> {
    shape
        .rows
        .checked_mul(shape.cols)
        .filter(|n| n.checked_mul(shape.dtype.size()).is_some_and(|bytes| bytes <= isize::MAX as usize))
        .ok_or_else(|| {
            to_napi(bsrmm::Error::new(
                Status::OutOfMemory,
                format!(
                    "a {}x{} {} tensor (rows x cols) has more bytes than an address space holds",
                    shape.rows,
                    shape.cols,
                    shape.dtype.name()
                ),
            ))
        })
}

/// What a new tensor holds.
enum Init<'a> {
    /// These raw bytes (e.g. the existing C).
    Bytes(&'a [u8]),
    Zeros,
    /// Unset: whatever the device allocation held, NaN on the host (a multiply with beta = 0
    /// writes every element; NaN shows one it missed).
    Unset,
}

impl NativeTensor {
    fn wrap(shape: TensorShape, storage: AnyStorage) -> Self {
        NativeTensor { inner: Arc::new(TensorInner { shape, data: RwLock::new(Some(storage)), claims: Mutex::default() }) }
    }

    /// A fresh tensor of `shape` holding `init`. Every size is checked and every allocation
    /// fallible: a tensor that does not fit is OUT_OF_MEMORY, never an abort.
    fn allocate(shape: TensorShape, init: Init<'_>) -> napi::Result<Self> {
        let len = elements(&shape)?;
        if shape.device != Device::Cpu {
            device::context(shape.device)?; // NO_DEVICE before any allocation
        }
        let what = format!("a {}x{} {} tensor", shape.rows, shape.cols, shape.dtype.name());
        let storage = with_dtype!(shape.dtype, |T| {
            let storage = match (init, shape.device) {
                (Init::Bytes(bytes), device) => Storage::new(dtype::to_vec::<T>(&what, bytes)?, device).napi()?,
                (Init::Zeros, Device::Cpu) => Storage::Host(bsrmm::try_filled(len, T::default(), &what).napi()?),
                (Init::Unset, Device::Cpu) => Storage::Host(bsrmm::try_filled(len, T::from_f64(f64::NAN), &what).napi()?),
                (Init::Zeros, device) => {
                    let zeros = bsrmm::try_filled(len, T::default(), &what).napi()?;
                    Storage::new(zeros, device).napi()?
                }
                (Init::Unset, device) => Storage::Device(DeviceBuffer::new(device, len).napi()?),
            };
            T::wrap_storage(storage)
        });
        Ok(NativeTensor::wrap(shape, storage))
    }
}

#[napi]
impl NativeTensor {
    /// From the raw bytes of `rows * cols` elements in `layout` order, copied to `device`.
    #[napi(factory)]
    pub fn from_host(values: Uint8Array, rows: i64, cols: i64, layout: String, dtype: String, device: String) -> napi::Result<Self> {
        let shape = shape(rows, cols, &layout, &dtype, &device)?;
        let len = elements(&shape)?;
        let size = shape.dtype.size();
        // len * size cannot overflow: elements() checked the byte count.
        if values.len() != len * size {
            return Err(invalid(format!(
                "values: {} bytes, a {}x{} {} tensor needs {}",
                values.len(),
                shape.rows,
                shape.cols,
                shape.dtype.name(),
                len * size
            )));
        }
        NativeTensor::allocate(shape, Init::Bytes(&values))
    }

    /// `rows x cols` zeros (`zeroed`) or unset elements (NaN on the host).
    #[napi(factory)]
    pub fn allocate_new(rows: i64, cols: i64, layout: String, dtype: String, device: String, zeroed: bool) -> napi::Result<Self> {
        let shape = shape(rows, cols, &layout, &dtype, &device)?;
        NativeTensor::allocate(shape, if zeroed { Init::Zeros } else { Init::Unset })
    }

    #[napi(getter)]
    pub fn rows(&self) -> f64 {
        self.inner.shape.rows as f64
    }

    #[napi(getter)]
    pub fn cols(&self) -> f64 {
        self.inner.shape.cols as f64
    }

    #[napi(getter)]
    pub fn layout(&self) -> &'static str {
        match self.inner.shape.layout {
            Layout::RowMajor => "row-major",
            Layout::ColMajor => "col-major",
        }
    }

    #[napi(getter)]
    pub fn dtype(&self) -> String {
        self.inner.shape.dtype.name().to_owned()
    }

    #[napi(getter)]
    pub fn device(&self) -> String {
        self.inner.shape.device.to_string()
    }

    /// The elements copied to a new host array, in the tensor's layout. Device work queued
    /// before (a `matmulSync` into this tensor) is finished first: the copy runs after it on
    /// the device's stream.
    #[napi(ts_return_type = "Float32Array | Float64Array | Uint16Array")]
    pub fn to_host(&self) -> napi::Result<JsArray> {
        // Only a reader: refused while an async multiply writes the tensor.
        let claim = Claim::read(&self.inner, "toArray()")?;
        let data = claim.tensor.read();
        Ok(with_storage!(present(&data, "toArray()")?, |s| JsElement::wrap(s.to_vec().napi()?)).into_js())
    }

    /// Frees the elements now (device memory included) instead of when JS collects the tensor;
    /// refused while a multiply in flight uses it. Disposing twice is a no-op.
    #[napi]
    pub fn dispose(&self) -> napi::Result<()> {
        let claim = Claim::write(&self.inner, "dispose()")?;
        // Dropping a device buffer frees it after the work queued on the device (cudaFree
        // waits), so a matmulSync still running on the GPU finishes first.
        claim.tensor.write().take();
        Ok(())
    }

    /// Whether `dispose()` has freed the tensor.
    #[napi(getter)]
    pub fn disposed(&self) -> bool {
        self.inner.read().is_none()
    }
}
