"""A bsrmm matrix as a ``scipy.sparse.linalg.LinearOperator``, for scipy's iterative solvers and
eigensolvers (cg, gmres, eigsh, svds, ...). Imported only by ``A.aslinearoperator()``: scipy is
optional."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.sparse.linalg import LinearOperator  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from ._matrix import AnyBsr


class BsrLinearOperator(LinearOperator):  # type: ignore[misc]  # scipy is untyped
    """``op @ x`` is ``A @ x``; a block of vectors goes to the multiply as one dense operand
    (scipy's generic adapter calls ``matvec`` once a column). The adjoint is ``A.T``: the
    values are real."""

    def __init__(self, matrix: AnyBsr) -> None:
        super().__init__(dtype=matrix.dtype, shape=matrix.shape)
        self.matrix = matrix

    def _matvec(self, x: np.ndarray) -> Any:
        return self.matrix @ x

    def _matmat(self, x: np.ndarray) -> Any:
        return self.matrix @ x

    def _rmatvec(self, x: np.ndarray) -> Any:
        return self.matrix.T @ x

    def _rmatmat(self, x: np.ndarray) -> Any:
        return self.matrix.T @ x

    def _adjoint(self) -> BsrLinearOperator:
        return BsrLinearOperator(self.matrix.T)

    _transpose = _adjoint
