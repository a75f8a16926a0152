"""sparsify_: swaps chosen nn.Linear modules of a model for BsrLinear ones, in place."""

from __future__ import annotations

from typing import Callable, Optional

from torch import nn

from ._linear import BlockSize, BsrLinear


def sparsify_(
    model: nn.Module, blocksize: BlockSize, *, density: float,
    filter: Optional[Callable[[str, nn.Linear], bool]] = None,
) -> nn.Module:
    """Replaces every ``nn.Linear`` of ``model`` (its qualified name and the module passed to
    ``filter``, when given, must answer True) by ``BsrLinear.from_linear(linear, blocksize,
    density=density)``, keeping the ``density`` fraction of its blocks with the largest norms.
    Layers whose shape is not a whole number of blocks are refused, naming the layer: leave
    them out with ``filter``. Returns ``model``."""
    chosen = [
        (name, module) for name, module in model.named_modules()
        if type(module) is nn.Linear and (filter is None or filter(name, module))
    ]
    for name, linear in chosen:
        try:
            sparse = BsrLinear.from_linear(linear, blocksize, density=density)
        except ValueError as error:
            raise ValueError(f"{name}: {error} (leave it out with filter=)") from None
        parent_name, _, child = name.rpartition(".")
        setattr(model.get_submodule(parent_name), child, sparse)
    return model
