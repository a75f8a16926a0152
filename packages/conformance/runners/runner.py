"""The Python binding's conformance runner: every case of a vectors folder through `import bsrmm`
(numpy operands on the CPU, torch tensors on a GPU), as a user would call it.

    python runner.py VECTORS OUT DEVICE        DEVICE: cpu | cuda:N

Writes OUT/results.txt (one line per case: "<id> ok", "<id> error <CODE> <message>" or
"<id> skip <reason>") and OUT/<id>.bin, the whole C buffer after each successful multiply."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import bsrmm
from bsrmm_conformance import manifest

ACTIVATION = {"none": None, "relu": "relu", "gelu": "gelu", "silu": "silu", "unknown": "unknown"}


def numpy_view(stored: np.ndarray, dtype: str):
    """Storage (bfloat16 as uint16 bits, fp8 as bytes) as the array a user holds: numpy
    (ml_dtypes' bfloat16 / float8 types), or a torch CPU tensor for bfloat16 where ml_dtypes is
    not installed."""
    if dtype in manifest.FP8:
        return stored.view(manifest.fp8_numpy(dtype))
    if dtype != "bfloat16":
        return stored
    try:
        import ml_dtypes
    except ImportError:
        import torch

        return torch.from_numpy(stored.view(np.int16)).view(torch.bfloat16)
    return stored.view(ml_dtypes.bfloat16)


def to_storage(array) -> np.ndarray:
    """The inverse of numpy_view / Cuda.array: the bytes as numpy (bfloat16 as uint16 bits)."""
    if isinstance(array, np.ndarray):
        return array.view(np.uint16) if array.dtype.name == "bfloat16" else array
    import torch

    if array.dtype == torch.bfloat16:
        return array.view(torch.int16).cpu().numpy().view(np.uint16)
    return array.cpu().numpy()


def strided(buffer, rows: int, cols: int, ld: int, layout: str):
    """The rows x cols matrix in `buffer` with leading dimension `ld` (numpy or torch)."""
    if not isinstance(buffer, np.ndarray):  # torch: strides in elements
        return buffer.as_strided((rows, cols), (ld, 1) if layout == "row" else (1, ld))
    item = buffer.itemsize
    strides = (ld * item, item) if layout == "row" else (item, ld * item)
    return np.lib.stride_tricks.as_strided(buffer, (rows, cols), strides)


class Host:
    name = "cpu"

    def array(self, stored: np.ndarray, dtype: str):
        return numpy_view(stored, dtype)

    def synchronize(self) -> None:
        pass


class Cuda:
    def __init__(self, device: str):
        try:
            import torch
        except ImportError as error:
            raise SystemExit(f"runner.py: device {device} needs torch (GPU operands are torch tensors): {error}")
        self.torch, self.name = torch, device

    def array(self, stored: np.ndarray, dtype: str):
        torch = self.torch
        if dtype == "bfloat16":
            return torch.from_numpy(stored.view(np.int16)).view(torch.bfloat16).to(self.name)
        return torch.from_numpy(stored).to(self.name)

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()


# The manifest's scale kinds in BsrMatrix.from_arrays' words.
SCALE_KIND = {"per-tensor": "tensor", "per-block": "block", "per-block-row": "block_row"}


def run_case(folder: Path, case: manifest.VectorCase, place, out: Path) -> str:
    load = lambda name: manifest.load_array(folder, case, name)  # noqa: E731
    stored, col_idx = load("values"), load("col_idx")
    # data is (nnzb, bh, bw) in the scipy convention; a values array of another length keeps
    # its own block count, so the binding sees the disagreement.
    block = case.bh * case.bw
    nnzb = stored.size // block if block > 0 and stored.size % block == 0 else col_idx.size
    if nnzb * block != stored.size:
        return f"skip {stored.size} values do not form whole {case.bh}x{case.bw} blocks: not expressible as (nnzb, bh, bw)"
    values = numpy_view(stored, case.dtype).reshape(nnzb, case.bh, case.bw)
    fp8 = {}
    if case.a_scales != "none":
        fp8 = {"scales": load("a_scales"), "scale": SCALE_KIND[case.a_scales]}
    a = bsrmm.BsrMatrix.from_arrays(load("row_ptr"), col_idx, values,
                                    (case.rows, case.cols), sort_indices=bool(case.sort), device=place.name, **fp8)
    if case.sddmm:
        return run_sddmm(folder, case, place, out, a)
    extent = case.b_cols if case.b_layout == "row" else case.b_rows
    if case.b_ld < extent:
        return ("skip a leading dimension below B's extent is, in numpy, a view with overlapping "
                "rows: a valid array, which bsrmm copies")
    b_buffer = place.array(load("b"), case.b_dtype)
    if case.b_dtype in manifest.FP8:  # numpy's as_strided cannot make some ml_dtypes fp8 views
        b = strided(load("b"), case.b_rows, case.b_cols, case.b_ld, case.b_layout).view(manifest.fp8_numpy(case.b_dtype))
    else:
        b = strided(b_buffer, case.b_rows, case.b_cols, case.b_ld, case.b_layout)
    if case.c_aliases_b:
        c_buffer, c = b_buffer, b
    else:
        c_buffer = place.array(load("c"), case.c_dtype)
        c = strided(c_buffer, case.c_rows, case.c_cols, case.c_ld, case.c_layout)
    bias = place.array(load("bias"), case.bias_dtype) if case.bias else None
    b_scales = {}
    if case.b_scales != "none":
        scales = load("b_scales")
        b_scales = {"b_scales": float(scales[0]) if case.b_scales == "per-tensor" and scales.size == 1 else scales}
    bsrmm.matmul(a, b, alpha=case.alpha, beta=case.beta, out=c, transpose_a=case.transpose, bias=bias,
                 activation=ACTIVATION[case.activation], **b_scales)
    place.synchronize()
    to_storage(c_buffer).tofile(out / f"{case.id}.bin")
    return "ok"


def run_sddmm(folder: Path, case: manifest.VectorCase, place, out: Path, a) -> str:
    """values = alpha * (X Y)[A's blocks] + beta * values, into the case's values as `out`
    (nnzb, bh, bw): X in the b fields, Y in the y fields (manifest.py)."""
    load = lambda name: manifest.load_array(folder, case, name)  # noqa: E731
    x = strided(place.array(load("b"), case.b_dtype), case.b_rows, case.b_cols, case.b_ld, case.b_layout)
    y = strided(place.array(load("y"), case.y_dtype), case.y_rows, case.y_cols, case.y_ld, case.y_layout)
    if case.bh == 0 or case.c_cols % case.bh != 0:
        return f"skip values of {case.c_cols} columns are not whole rows of {case.bh}-high blocks: not expressible as (nnzb, bh, bw)"
    values_buffer = place.array(load("c"), case.c_dtype)
    values = strided(values_buffer, case.c_rows, case.c_cols, case.c_ld, case.c_layout).reshape(case.c_rows, case.bh, case.c_cols // case.bh)
    result = bsrmm.sddmm(a, x, y, alpha=case.alpha, beta=case.beta, out=values)
    place.synchronize()
    if result is not values:
        return "error AssertionError bsrmm.sddmm(out=values) returned another array than out"
    to_storage(values_buffer).tofile(out / f"{case.id}.bin")
    return "ok"


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    folder, out, device = Path(argv[0]), Path(argv[1]), argv[2]
    out.mkdir(parents=True, exist_ok=True)
    place = Host() if device == "cpu" else Cuda(device)
    lines = []
    for case in manifest.read(folder):
        try:
            result = run_case(folder, case, place, out)
        except bsrmm.Error as error:
            result = f"error {error.code} {' '.join(str(error).split())}"
        except Exception as error:  # not a bsrmm.Error: a disagreement the checker reports
            result = f"error {type(error).__name__} {' '.join(str(error).split())}"
        lines.append(f"{case.id} {result}")
    (out / "results.txt").write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
