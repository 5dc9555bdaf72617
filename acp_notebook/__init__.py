"""acp_notebook: an Agent Client Protocol client inside Jupyter.

    %load_ext acp_notebook
    %acp refactor utils.py

The notebook API (``ask``, ``status``, ``cancel``, ``restart``) and the client
library (``acp_notebook.client``) are documented in the README.
"""

from __future__ import annotations

import logging as _logging
from typing import Any

from ._version import __version__ as __version__

# A library must not print through logging's last-resort handler: in a kernel that
# lands in the notebook as red stderr. Users opt in by configuring the logger.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())


def load_ipython_extension(shell: Any) -> None:
    from .notebook.extension import load

    load(shell)


def unload_ipython_extension(shell: Any) -> None:
    from .notebook.extension import unload

    unload(shell)


def __getattr__(name: str) -> Any:
    # The notebook API, imported only when used (importing acp_notebook stays cheap).
    if name in (
        "ask",
        "status",
        "cancel",
        "restart",
        "stop",
        "sessions",
        "session",
        "messages",
        "pending",
        "answer",
    ):
        from .notebook import api

        return getattr(api, name)
    raise AttributeError(name)
