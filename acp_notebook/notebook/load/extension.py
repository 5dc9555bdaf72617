"""``%load_ext acp_notebook`` / ``%unload_ext acp_notebook``. Nothing starts until the
first prompt."""

from __future__ import annotations

from IPython.core.interactiveshell import InteractiveShell

from .. import frontend
from ..turn import comm_status
from .magics import AcpMagics, register, unregister

_magics: AcpMagics | None = None


def load(shell: InteractiveShell) -> None:
    global _magics
    if _magics is not None:
        return
    _magics = register(shell)
    frontend.install(shell)
    comm_status.install(shell)


def unload(shell: InteractiveShell) -> None:
    """Stop every agent and terminal, and remove the magics."""
    global _magics
    comm_status.uninstall()
    frontend.uninstall(shell)
    unregister(shell, _magics)
    _magics = None


def current() -> AcpMagics:
    """The loaded magics (the Python API works through them)."""
    if _magics is None:
        from IPython import get_ipython

        shell = get_ipython()
        if shell is None:
            raise RuntimeError(
                "acp_notebook's notebook API needs IPython; use acp_notebook.client directly."
            )
        load(shell)
    assert _magics is not None
    return _magics
