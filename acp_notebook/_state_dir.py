"""The per-user state directory of acp_notebook (a leaf: the notebook's state file and
the demo agent's sessions both live under it)."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$XDG_STATE_HOME/acp-notebook`` (``~/.local/state/acp-notebook`` when the variable
    is unset), by the XDG base directory rules."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "acp-notebook"
