"""The process group a parallel layer talks over: a ``ProcessGroup``, a 1-D ``DeviceMesh`` (its
one dimension's group), or None (the default group)."""

from __future__ import annotations

from typing import Any, Optional

import torch.distributed as dist


def resolve_group(group: Any) -> Optional[dist.ProcessGroup]:
    if not dist.is_available() or not dist.is_initialized():
        raise RuntimeError("the parallel BsrLinear layers need torch.distributed initialised "
                           "(torch.distributed.init_process_group) before they are built")
    if group is None or isinstance(group, dist.ProcessGroup):
        return group
    from torch.distributed.device_mesh import DeviceMesh  # only where a mesh is passed

    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError(f"group must be a 1-D DeviceMesh (the tensor-parallel dimension, "
                             f"e.g. mesh['tp']); got one of {group.ndim} dimensions")
        return group.get_group()
    raise TypeError(f"group must be a torch.distributed ProcessGroup, a 1-D DeviceMesh or None; "
                    f"got {type(group).__name__}")
