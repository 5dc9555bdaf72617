"""Is a person watching, and does the frontend show widgets?

Headless runs (nbclient, nbconvert --execute, papermill, nbval) send ``allow_stdin:
false`` with every execute request; JupyterLab, VS Code, ``jupyter console`` and
qtconsole send true (measured, see docs/jupyter-notes.md). Of these, the consoles show no widgets: there a
turn is plain text and permissions are asked with ``input()`` (``view/plain.py``).
"""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable
from typing import Any, Literal

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


# Widgets or plain text. A frontend without a widget manager (``jupyter console``,
# qtconsole) allows stdin like JupyterLab does, so allow_stdin cannot tell them apart; what
# can: a widget manager talks to the kernel when it connects (JupyterLab's and Notebook 7's
# open a ``jupyter.widget.control`` comm or send a ``comm_info_request``), and a notebook
# served by Jupyter Server (``JPY_SESSION_NAME``) or VS Code (``__vsc_ipynb_file__``) has one.
# ``ACP_NOTEBOOK_WIDGETS`` overrides (1: widgets, 0: plain text).

WIDGETS_ENV = "ACP_NOTEBOOK_WIDGETS"
Frontend = Literal["widgets", "plain", "headless"]

#: Shell messages only a frontend with comms sends (a widget manager, our lab extension).
_COMM_MESSAGES = ("comm_info_request", "comm_open", "comm_msg")
_comms_seen = threading.Event()


def _watching(handler: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(handler)
    def seen(*args: Any, **kwargs: Any) -> Any:
        _comms_seen.set()
        return handler(*args, **kwargs)

    seen.__acp_watched__ = handler  # type: ignore[attr-defined]
    return seen


def install(shell: InteractiveShell) -> None:
    """Note when the kernel receives a comm message from a frontend (its handlers wrapped)."""
    handlers = getattr(getattr(shell, "kernel", None), "shell_handlers", None)
    if not isinstance(handlers, dict):
        return
    for name in _COMM_MESSAGES:
        handler = handlers.get(name)
        if handler is not None and not hasattr(handler, "__acp_watched__"):
            handlers[name] = _watching(handler)


def uninstall(shell: InteractiveShell) -> None:
    handlers = getattr(getattr(shell, "kernel", None), "shell_handlers", None)
    if not isinstance(handlers, dict):
        return
    for name in _COMM_MESSAGES:
        original = getattr(handlers.get(name), "__acp_watched__", None)
        if original is not None:
            handlers[name] = original


def has_widgets(shell: InteractiveShell | None) -> bool:
    """True when the frontend shows widgets (see above); ``ACP_NOTEBOOK_WIDGETS`` overrides."""
    forced = env_flag(WIDGETS_ENV)
    if forced is not None:
        return forced
    if _comms_seen.is_set() or os.environ.get("JPY_SESSION_NAME"):
        return True
    user_ns = getattr(shell, "user_ns", None)
    return isinstance(user_ns, dict) and bool(user_ns.get("__vsc_ipynb_file__"))


def detect_frontend(shell: InteractiveShell | None) -> Frontend:
    """``headless`` (no one answers), ``widgets`` (the live view), or ``plain`` (someone
    reads text and answers ``input()``, but sees no widgets)."""
    if detect_headless(shell):
        return "headless"
    return "widgets" if has_widgets(shell) else "plain"
