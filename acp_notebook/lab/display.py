"""A lab's messages in a notebook: one row per message, as it goes.

The only module of :mod:`acp_notebook.lab` that imports IPython; the stepper imports it
lazily, when it runs in a kernel. Everything the agent wrote is escaped.
"""

from __future__ import annotations

import html
import json

from IPython.display import display

from .messages import LabMessage

__all__ = ["show_in_notebook"]

_ARROW = {"send": "→ agent", "recv": "← agent"}
_COLOUR = {
    "request": "#1565c0",
    "notification": "#6a1b9a",
    "response": "#2e7d32",
    "error": "#c62828",
}
_CLIP = 400


def show_in_notebook(entry: LabMessage, *, brief: bool = False) -> None:
    """Display ``entry`` as one row: number, direction, kind, method (and update kind), and
    its payload as JSON (clipped; none when ``brief``); schema problems of the agent's
    messages in red. The plain-text form (``entry.summary()``) goes with it for non-HTML
    frontends."""
    kind = entry.kind
    what = entry.method or "?"
    if entry.update_kind is not None:
        what += f" · {entry.update_kind}"
    if kind in ("response", "error"):
        what = f"{kind} of {what}"
    payload = "" if brief else json.dumps(entry.payload, ensure_ascii=False)
    if len(payload) > _CLIP:
        payload = payload[: _CLIP - 1] + "…"
    flags = "".join(
        f'<div style="color:#c62828">⚠ breaks the schema: {html.escape(e)}</div>'
        for e in entry.schema_errors[:3]
    )
    row = (
        f'<div style="font-family:monospace;font-size:12px;margin:1px 0">'
        f"<b>#{entry.number}</b> {_ARROW[entry.direction]} "
        f'<span style="color:{_COLOUR.get(kind, "#555")}">{html.escape(kind)}</span> '
        f"<b>{html.escape(what)}</b> "
        f'<span style="color:#555">{html.escape(payload)}</span>{flags}</div>'
    )
    display({"text/html": row, "text/plain": entry.summary(brief=brief)}, raw=True)
