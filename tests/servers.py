"""How the tests start a server (JupyterLab, a Kernel Gateway, JupyterHub, ``./dev lab``'s
launcher): in a session of its own, so ``killpg`` ends it with whatever it started, and
bound to the test process that started it, so it ends with that process even when nothing
stops it — a pytest killed from outside (``timeout``, a CI runner's limit, a worker xdist
lost) left its JupyterLab servers and their kernels running for hours.

The binding is Linux's parent-death signal: when the test process exits, however it
exits, the kernel sends the server SIGTERM, which Jupyter's servers handle by shutting
down their kernels first.
"""

from __future__ import annotations

import ctypes
import os
import signal
from collections.abc import Callable
from typing import Any

from acp_notebook.protocol.supervisor import PR_SET_PDEATHSIG


def _ends_with(parent: int) -> Callable[[], None]:
    def preexec() -> None:  # in the child, between fork and exec
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # the test process died before the signal was armed
            os._exit(1)

    return preexec


def own_session() -> dict[str, Any]:
    """``subprocess.Popen`` options for a server: its own session, ended with this process."""
    return {"start_new_session": True, "preexec_fn": _ends_with(os.getpid())}
