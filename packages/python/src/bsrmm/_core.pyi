# Type stubs for the compiled extension (csrc/). Private: the bsrmm package wraps all of it.
from typing import Any, Callable, List, Optional, Tuple

package_version: str

STATUS_SUCCESS: int
STATUS_INVALID_ARGUMENT: int
STATUS_UNSUPPORTED: int
STATUS_OUT_OF_MEMORY: int
STATUS_NO_DEVICE: int
STATUS_CUDA_ERROR: int
STATUS_INTERNAL: int
STATUS_IO_ERROR: int
DTYPE_F32: int
DTYPE_F16: int
DTYPE_BF16: int
DTYPE_F64: int
DTYPE_FLOAT8_E4M3: int
DTYPE_FLOAT8_E5M2: int
SCALE_PER_TENSOR: int
SCALE_PER_BLOCK: int
SCALE_PER_BLOCK_ROW: int
SCALE_PER_COLUMN: int
INDEX_I32: int
INDEX_I64: int
LAYOUT_ROW_MAJOR: int
LAYOUT_COL_MAJOR: int
DEVICE_CPU: int
DEVICE_CUDA: int
F32_EXACT: int
F32_TF32: int
TUNING_OFF: int
TUNING_AUTO: int
TUNING_FORCE: int
ACTIVATION_NONE: int
ACTIVATION_RELU: int
ACTIVATION_GELU: int
ACTIVATION_SILU: int
CREATE_DEFAULT: int
CREATE_SORT_INDICES: int
CREATE_BORROW_VALUES: int

def _set_error_factory(factory: Callable[[int, str], BaseException]) -> None: ...
def core_version() -> str: ...
def status_name(status: int) -> str: ...
def cuda_compiled() -> bool: ...
def cuda_device_count() -> int: ...
def variants() -> List[Tuple[str, str]]: ...

class Context:
    def __init__(self, device_type: int, ordinal: int) -> None: ...
    def device(self) -> Tuple[int, int]: ...
    def set_stream(self, stream: int) -> None: ...
    def stream(self) -> int: ...
    def set_num_threads(self, threads: int) -> None: ...
    def num_threads(self) -> int: ...
    def set_f32_mode(self, mode: int) -> None: ...
    def set_tuning_mode(self, mode: int) -> None: ...
    def set_variant(self, name: str) -> None: ...
    def set_sm_budget(self, count: int) -> None: ...
    def sm_budget(self) -> int: ...
    def last_variant(self) -> str: ...
    def synchronize(self) -> None: ...

class Dense:
    def __init__(
        self,
        data: int,
        rows: int,
        cols: int,
        ld: int,
        layout: int,
        dtype: int,
        device_type: int,
        device_ordinal: int,
    ) -> None: ...
    @property
    def data(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def ld(self) -> int: ...
    @property
    def layout(self) -> int: ...
    @property
    def dtype(self) -> int: ...
    @property
    def device_type(self) -> int: ...
    @property
    def device_ordinal(self) -> int: ...

class MatrixInfo:
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def block_height(self) -> int: ...
    @property
    def block_width(self) -> int: ...
    @property
    def nnzb(self) -> int: ...
    @property
    def dtype(self) -> int: ...
    @property
    def device_type(self) -> int: ...
    @property
    def device_ordinal(self) -> int: ...

class Matrix:
    @staticmethod
    def create(
        ctx: Context,
        rows: int,
        cols: int,
        block_height: int,
        block_width: int,
        nnzb: int,
        row_ptr: int,
        col_idx: int,
        index_type: int,
        values: int,
        dtype: int,
        device_type: int,
        device_ordinal: int,
        flags: int,
    ) -> Matrix: ...
    @staticmethod
    def create_scaled(
        ctx: Context,
        rows: int,
        cols: int,
        block_height: int,
        block_width: int,
        nnzb: int,
        row_ptr: int,
        col_idx: int,
        index_type: int,
        values: int,
        dtype: int,
        flags: int,
        scales: int,
        scale_kind: int,
        scale_count: int,
    ) -> Matrix: ...
    def scale_info(self) -> Tuple[int, int]: ...
    def export_scales(self, scales: int) -> None: ...
    @staticmethod
    def from_dense(ctx: Context, dense: Dense, block_height: int, block_width: int) -> Matrix: ...
    def info(self) -> MatrixInfo: ...
    def export_to(self, index_type: int, row_ptr: int, col_idx: int, values: int) -> None: ...
    def to_dense(self, ctx: Context, out: Dense) -> None: ...
    def copy_to(self, ctx: Context) -> Matrix: ...
    def transpose(self, ctx: Context) -> Matrix: ...
    def with_values(
        self, ctx: Context, values: int, device_type: int, device_ordinal: int, flags: int = ...
    ) -> Matrix: ...

def matmul(
    ctx: Context,
    a: Matrix,
    b: Dense,
    c: Dense,
    transpose_a: bool,
    alpha: float,
    beta: float,
    bias: int,
    activation: int,
    b_scales: int = ...,
    b_scale_kind: int = ...,
    b_scale_count: int = ...,
    b_scale_device_type: int = ...,
    b_scale_device_ordinal: int = ...,
) -> None: ...

def tune(
    ctx: Context,
    a: Matrix,
    b: Dense,
    c: Dense,
    transpose_a: bool,
    alpha: float,
    beta: float,
    bias: int,
    activation: int,
    b_scales: int = ...,
    b_scale_kind: int = ...,
    b_scale_count: int = ...,
    b_scale_device_type: int = ...,
    b_scale_device_ordinal: int = ...,
) -> str: ...

def sddmm(
    ctx: Context,
    pattern: Matrix,
    x: Dense,
    y: Dense,
    values: Dense,
    alpha: float,
    beta: float,
) -> None: ...

def matmul_direct(
    ctx: Context,
    a: Matrix,
    b: object,
    c: object,
    transpose_a: bool,
    alpha: float,
    beta: float,
    activation: int,
    b_scales: object = None,
    bias: object = None,
) -> bool: ...
def matmul_step(
    ctx: Context,
    like: Matrix,
    values: object,
    b: object,
    c: object,
    bias: object,
    activation: int,
) -> bool: ...
def transpose_step_values(ctx: Context, like: Matrix, values: object, out: object) -> bool: ...
def tuner_cache_path() -> str: ...
def tuner_cache_entries() -> str: ...
def tuner_cache_warning() -> str: ...
def tuner_cache_clear() -> None: ...

class ArrayView:
    @property
    def kind(self) -> str: ...
    @property
    def source(self) -> Any: ...
    @property
    def address(self) -> int: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def strides(self) -> Tuple[int, ...]: ...
    @property
    def dtype(self) -> str: ...
    @property
    def itemsize(self) -> int: ...
    @property
    def device(self) -> Tuple[int, int]: ...
    @property
    def read_only(self) -> bool: ...
    @property
    def size(self) -> int: ...
    @property
    def is_contiguous(self) -> bool: ...
    def byte_span(self) -> Tuple[int, int]: ...

def read_array(obj: object, argument: str, stream: Optional[int] = None) -> ArrayView: ...
def array_kind(obj: object) -> Optional[str]: ...
def array_device(obj: object, argument: str) -> Tuple[int, int]: ...
def readable_layout(view: ArrayView) -> bool: ...
def readable_contiguous(view: ArrayView) -> bool: ...
def dense_shape(
    view: ArrayView, argument: str, written: bool
) -> Tuple[int, int, int, int, int]: ...
