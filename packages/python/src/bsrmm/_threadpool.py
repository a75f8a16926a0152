"""threadpoolctl support: ``threadpoolctl.threadpool_limits(limits=N)`` and
``threadpool_info()`` reach bsrmm's CPU worker pool as they reach BLAS and OpenMP, so a program
that limits its threads (scikit-learn, a serving process beside numpy's BLAS) does not leave
bsrmm running one thread per CPU beside them. The limit applies to the default CPU context (the
one ``A @ x`` and calls without ``context=`` use); a :class:`bsrmm.Context` made with its own
``num_threads`` keeps it. Registered when bsrmm is imported, if threadpoolctl >= 3.5 is."""

from __future__ import annotations

from . import _core
from ._context import default_cpu_threads, limit_default_cpu_threads


def register() -> None:
    try:
        import threadpoolctl  # type: ignore[import-untyped,unused-ignore]  # ships no types
    except ImportError:
        return
    if not hasattr(threadpoolctl, "register"):  # before 3.5: no third-party controllers
        return

    class BsrmmController(threadpoolctl.LibController):  # type: ignore[misc]
        user_api = "bsrmm"
        internal_api = "bsrmm"
        # The extension module's file (_core.cpython-...so); other `_core` libraries lack the
        # symbol below, which threadpoolctl checks before keeping a controller.
        filename_prefixes = ("_core",)
        check_symbols = ("bsrmm_python_threadpool",)

        def get_num_threads(self) -> int:
            return default_cpu_threads()

        def set_num_threads(self, num_threads: int) -> None:
            limit_default_cpu_threads(int(num_threads))

        def get_version(self) -> str:
            return str(_core.core_version())

    threadpoolctl.register(BsrmmController)
