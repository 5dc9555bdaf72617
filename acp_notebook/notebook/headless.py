"""Is a person watching? Headless runs (nbclient, nbconvert --execute, papermill,
nbval) send ``allow_stdin: false`` with every execute request; JupyterLab and VS
Code send true (measured, see docs)."""

from __future__ import annotations

import os

from IPython.core.interactiveshell import InteractiveShell

HEADLESS_ENV = "ACP_NOTEBOOK_HEADLESS"
_FALSE = ("", "0", "false", "no", "off")


def env_flag(name: str) -> bool | None:
    value = os.environ.get(name)
    if value is None:
        return None
    return value.strip().lower() not in _FALSE


def detect_headless(shell: InteractiveShell | None) -> bool:
    """True when no human can click: the execute request forbids stdin, or there is no kernel."""
    forced = env_flag(HEADLESS_ENV)
    if forced is not None:
        return forced
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return True  # a plain IPython terminal: no widgets
    try:
        parent = kernel.get_parent()
    except Exception:
        return False
    content = parent.get("content", {}) if isinstance(parent, dict) else {}
    return content.get("allow_stdin", True) is False
