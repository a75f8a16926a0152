"""The public signatures carry real types (issue 26): every parameter and result of the API a
user calls is annotated, resolvable, and not ``Any``; arrays are typed by the protocols bsrmm
reads, so numpy, torch and cupy arrays all satisfy them. (A type checker run is not part of the
suite: the toolchain has none. `mypy --strict src/bsrmm` passes.)"""

from __future__ import annotations

import inspect
import sys
import typing

import pytest

import bsrmm

# typing.get_overloads is Python >= 3.11; on 3.10 the overloads go unchecked here.
overloads = getattr(typing, "get_overloads", lambda function: [])

PUBLIC = [
    bsrmm.BsrMatrix.from_arrays,
    bsrmm.BsrMatrix.from_dense,
    bsrmm.BsrMatrix.from_scipy,
    bsrmm.BsrMatrix.from_torch,
    bsrmm.BsrMatrix.to,
    bsrmm.BsrMatrix.with_values,
    bsrmm.BsrMatrix.astype,
    bsrmm.BsrMatrix.transpose,
    bsrmm.BsrMatrix.matvec,
    bsrmm.TransposedBsrMatrix.astype,
    bsrmm.Context.__init__,
    bsrmm.default_context,
    bsrmm.variants,
    *overloads(bsrmm.matmul),
    *overloads(bsrmm.tune),
    *overloads(bsrmm.BsrMatrix.__matmul__),
    *overloads(bsrmm.BsrMatrix.__rmatmul__),
]


@pytest.mark.parametrize("function", PUBLIC, ids=lambda f: f.__qualname__)
def test_public_signatures_are_annotated_without_any(function):
    hints = typing.get_type_hints(function)
    parameters = [p for p in inspect.signature(function).parameters if p not in ("self", "cls")]
    for name in [*parameters, "return"]:
        assert name in hints, f"{function.__qualname__}: {name} is not annotated"
        assert hints[name] is not typing.Any, f"{function.__qualname__}: {name} is Any"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="typing.get_overloads is Python >= 3.11")
def test_overloads_give_the_result_type():
    for function in (bsrmm.matmul, bsrmm.tune):
        results = [typing.get_type_hints(f)["return"] for f in overloads(function)]
        assert len(results) == 3 and all(r is not typing.Any for r in results)
