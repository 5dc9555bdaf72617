"""acp_notebook: an Agent Client Protocol client inside Jupyter.

    %load_ext acp_notebook
    %acp refactor utils.py

The notebook API (``acp_notebook.ask``, ``status``, ``cancel``, … one function per
``%acp`` control) and the client library (``acp_notebook.client``, whose ``connect`` is
also here) are documented in docs/usage.md and docs/python-client.md.
"""

from __future__ import annotations

import logging as _logging
from importlib.util import find_spec as _find_spec
from typing import Any

# A library must not print through logging's last-resort handler: in a kernel that
# lands in the notebook as red stderr. Users opt in by configuring the logger.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())


def load_ipython_extension(shell: Any) -> None:
    from .notebook.load.extension import load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    from .notebook.load.extension import unload

    unload(shell)


def __getattr__(name: str) -> Any:
    # Even the version is read when asked: `import acp_notebook` imports nothing of its
    # own, so the MCP relay (`python -m acp_notebook.mcp_relay`) starts on the standard
    # library alone.
    if name == "__version__":
        from ._version import __version__

        return __version__
    # The notebook API (every %acp control, ask, messages, session), imported only when
    # used: importing acp_notebook stays cheap. A submodule is not an API name, so
    # `from acp_notebook import cli` imports the submodule without loading Jupyter.
    if name.startswith("_") or _find_spec(f"{__name__}.{name}") is not None:
        raise AttributeError(name)
    if name == "connect":  # the client's, without Jupyter
        from .client import connect

        return connect
    from .notebook import api

    return getattr(api, name)
