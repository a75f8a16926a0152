"""Device names: ``"cpu"``, ``"cuda"`` (device 0) and ``"cuda:N"``; ``torch.device`` objects are
accepted wherever a name is. Internally a device is the core's ``(device_type, ordinal)`` pair."""

from __future__ import annotations

from typing import Optional, Tuple

from . import _core
from ._errors import InvalidArgumentError, NoDeviceError
from ._typing import DeviceLike

Device = Tuple[int, int]

CPU: Device = (_core.DEVICE_CPU, 0)

# A CUDA array whose producer does not say which device holds it (a bare
# __cuda_array_interface__): it matches any CUDA device and the core checks the pointer.
ANY_CUDA_ORDINAL = -1

_INT32_MAX = 2**31 - 1  # the ABI's device ordinal is an int32


def cuda(ordinal: int) -> Device:
    return (_core.DEVICE_CUDA, ordinal)


def is_cuda(device: Device) -> bool:
    return device[0] == _core.DEVICE_CUDA


def parse_device(device: "DeviceLike", name: str = "device") -> Device:
    """``"cpu"`` / ``"cuda"`` / ``"cuda:N"`` (or a ``torch.device``) -> the core's pair."""
    text = device if isinstance(device, str) else None
    if text is None and hasattr(device, "type") and hasattr(device, "index"):
        text = str(device)  # torch.device("cuda", 1) -> "cuda:1"
    if text is not None:
        text = text.strip().lower()
        if text == "cpu":
            return CPU
        if text == "cuda":
            return cuda(0)
        if text.startswith("cuda:") and text[5:].isdigit() and int(text[5:]) <= _INT32_MAX:
            return cuda(int(text[5:]))
    raise InvalidArgumentError(f"{name} must be 'cpu', 'cuda' or 'cuda:N'; got {device!r}")


def device_name(device: Device) -> str:
    if not is_cuda(device):
        return "cpu"
    return "cuda" if device[1] == ANY_CUDA_ORDINAL else f"cuda:{device[1]}"


def same_device(a: Device, b: Device) -> bool:
    if a[0] != b[0]:
        return False
    return not is_cuda(a) or ANY_CUDA_ORDINAL in (a[1], b[1]) or a[1] == b[1]


def cuda_unavailable_reason() -> Optional[str]:
    """Why no CUDA device can be used (the core's own explanation), or None when one can."""
    if not _core.cuda_compiled():
        return "this bsrmm build has no CUDA kernels (it was compiled without a CUDA compiler)"
    try:
        count = _core.cuda_device_count()
    except NoDeviceError as error:
        return str(error)
    return None if count > 0 else "no CUDA device is visible"


def cuda_device_count() -> int:
    """Number of usable CUDA devices; 0 when CUDA is not compiled in or no device is usable."""
    if not _core.cuda_compiled():
        return 0
    try:
        return _core.cuda_device_count()
    except NoDeviceError:
        return 0


def cuda_available() -> bool:
    return cuda_device_count() > 0
