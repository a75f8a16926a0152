"""bsrmm.Context: a device plus how to use it (stream, CPU threads, f32 mode, tuning, forced
variant, SM budget). A context serialises its calls with a lock, so one may be shared across
threads; the GIL is released inside every call, so threads with their own contexts run in
parallel."""

from __future__ import annotations

import threading
from typing import Any, Dict, Optional

from . import _core, _streams
from ._devices import Device, device_name, is_cuda, parse_device
from ._errors import InvalidArgumentError, reworded
from ._typing import DeviceLike, StreamLike

_INT32_MAX = 2**31 - 1  # the ABI's thread count is an int32
_F32_MODES = {"exact": _core.F32_EXACT, "tf32": _core.F32_TF32}
_TUNING_MODES = {"off": _core.TUNING_OFF, "auto": _core.TUNING_AUTO, "force": _core.TUNING_FORCE}


def _choice(value: Any, choices: Dict[str, int], argument: str) -> int:
    if isinstance(value, str) and value in choices:
        return choices[value]
    names = ", ".join(repr(name) for name in choices)
    raise InvalidArgumentError(f"{argument} must be one of {names}; got {value!r}")


class Context:
    """Where and how bsrmm runs.

    ``device``: ``"cpu"``, ``"cuda"`` or ``"cuda:N"``. ``num_threads``: CPU worker threads
    (0 = the core's default: ``BSRMM_NUM_THREADS``, else ``OMP_NUM_THREADS``, else one per CPU
    the process may run on). ``f32_mode``: ``"exact"`` (full f32 products) or ``"tf32"``
    (tensor cores, ~1e-3 relative error). ``tuning``: ``"auto"`` (the core's default: a problem
    the tuner cache does not know runs the heuristics' choice until its third multiply in this
    process, which measures the eligible variants and stores the fastest; later ones, in any
    process, reuse it), ``"off"`` (heuristics only, nothing measured or stored: for
    latency-critical serving, after :func:`bsrmm.tune` ahead of time) or ``"force"`` (always
    measure). ``variant``: force a kernel variant by name (see :func:`bsrmm.variants`): a matmul
    variant for :func:`bsrmm.matmul`, an SDDMM variant for :func:`bsrmm.sddmm` (each call refuses
    the other kind).
    ``stream``: for CUDA contexts, a stream every call runs on; left as None, each call runs on
    the current stream of the caller's array library (torch / cupy), else on the legacy default
    stream. ``sm_budget``: the most SMs a multiply's persistent kernels may occupy (0 = all; more
    than the device has = all), to leave SMs to work running beside it, such as NCCL's
    reductions; CPU contexts accept it and ignore it.
    """

    def __init__(
        self,
        device: DeviceLike = "cpu",
        *,
        num_threads: int = 0,
        f32_mode: str = "exact",
        tuning: str = "auto",
        variant: Optional[str] = None,
        stream: Optional[StreamLike] = None,
        sm_budget: int = 0,
    ) -> None:
        self._device: Device = parse_device(device)
        if (
            isinstance(num_threads, bool)
            or not isinstance(num_threads, int)
            or not 0 <= num_threads <= _INT32_MAX
        ):
            raise InvalidArgumentError(
                f"num_threads must be an int in 0..{_INT32_MAX} (0: the core's default); got "
                f"{num_threads!r}"
            )
        if variant is not None and not isinstance(variant, str):
            raise InvalidArgumentError(f"variant must be a variant name or None; got {variant!r}")
        f32_code = _choice(f32_mode, _F32_MODES, "f32_mode")
        tuning_code = _choice(tuning, _TUNING_MODES, "tuning")

        self._handle = _core.Context(*self._device)
        if num_threads:
            self._handle.set_num_threads(num_threads)
        self._handle.set_f32_mode(f32_code)
        self._handle.set_tuning_mode(tuning_code)
        if variant:
            try:
                self._handle.set_variant(variant)
            except InvalidArgumentError as error:
                raise reworded(error, (("name = ", "variant = "),)) from None
        self._num_threads = num_threads
        self._f32_mode = f32_mode
        self._tuning = tuning
        self._variant = variant
        self._lock = threading.Lock()
        self._sm_budget = 0
        if sm_budget:
            self.sm_budget = sm_budget
        self._core_stream = 0  # what the core context is set to
        self._explicit_stream: Optional[int] = None
        if stream is not None:
            self.stream = stream

    @property
    def device(self) -> str:
        return device_name(self._device)

    @property
    def num_threads(self) -> int:
        return self._num_threads

    @property
    def f32_mode(self) -> str:
        return self._f32_mode

    @property
    def tuning(self) -> str:
        return self._tuning

    @property
    def variant(self) -> Optional[str]:
        return self._variant

    @property
    def sm_budget(self) -> int:
        """The most SMs this context's multiplies and SDDMMs may occupy (0: every SM)."""
        return self._sm_budget

    @sm_budget.setter
    def sm_budget(self, count: int) -> None:
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= _INT32_MAX:
            raise InvalidArgumentError(
                f"sm_budget must be an int in 0..{_INT32_MAX} (0: every SM); got {count!r}"
            )
        with self._lock:
            self._handle.set_sm_budget(count)
            self._sm_budget = count

    @property
    def last_variant(self) -> str:
        """The kernel variant the last multiply on this context ran ("" before any)."""
        return self._handle.last_variant()

    @property
    def stream(self) -> Optional[int]:
        """The stream set on this context, or None when calls follow the caller's current stream."""
        return self._explicit_stream

    @stream.setter
    def stream(self, stream: Optional[StreamLike]) -> None:
        if not is_cuda(self._device):
            raise InvalidArgumentError(f"stream: a {self.device} context has no CUDA stream")
        self._explicit_stream = None if stream is None else _streams.stream_handle(stream)

    def synchronize(self) -> None:
        """Waits until the work this context queued is done: its stream, or the stream its last
        call ran on when it follows the caller's streams (a no-op on the CPU)."""
        with self._lock:
            self._handle.synchronize()

    def __repr__(self) -> str:
        return (
            f"bsrmm.Context(device={self.device!r}, num_threads={self._num_threads}, "
            f"f32_mode={self._f32_mode!r}, tuning={self._tuning!r}, variant={self._variant!r}, "
            f"sm_budget={self._sm_budget})"
        )

    def _stream_for(self, *arrays: Any) -> Optional[int]:
        """The stream a call on these arrays runs on (None on the CPU)."""
        if not is_cuda(self._device):
            return None
        if self._explicit_stream is not None:
            return self._explicit_stream
        for array in arrays:
            stream = None if array is None else _streams.current_stream(array)
            if stream is not None:
                return stream
        return 0

    def _session(self, stream: Optional[int]) -> "_Session":
        """``with ctx._session(stream) as handle:`` holds the context for one call, on
        ``stream``, and gives the core context."""
        return _Session(self, stream)


class _Session:
    """A class, not @contextmanager: this is on every call's path, and generators cost more."""

    __slots__ = ("_context", "_stream")

    def __init__(self, context: Context, stream: Optional[int]) -> None:
        self._context = context
        self._stream = stream

    def __enter__(self) -> _core.Context:
        context, stream = self._context, self._stream
        context._lock.acquire()
        try:
            if stream is not None and stream != context._core_stream:
                context._handle.set_stream(stream)
                context._core_stream = stream
        except BaseException:
            context._lock.release()
            raise
        return context._handle

    def __exit__(self, *exc: object) -> None:
        self._context._lock.release()


_defaults: Dict[Device, Context] = {}
_defaults_lock = threading.Lock()


def default_context(device: DeviceLike = "cpu") -> Context:
    """The shared context of a device, created on first use with default settings."""
    key = parse_device(device)
    with _defaults_lock:
        context = _defaults.get(key)
        if context is None:
            context = _defaults[key] = Context(device_name(key))
        return context


def default_cpu_threads() -> int:
    """The worker threads of the default CPU context (the core's default unless limited)."""
    context = default_context("cpu")
    with context._lock:
        return int(context._handle.num_threads())


def limit_default_cpu_threads(threads: int) -> None:
    """Sets the default CPU context's worker threads (threadpoolctl's limits land here)."""
    context = default_context("cpu")
    with context._lock:
        context._handle.set_num_threads(threads)
        context._num_threads = threads
