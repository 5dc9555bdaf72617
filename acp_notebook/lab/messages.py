"""The messages a lab sees, both ways, and how each reads in one line.

A :class:`LabMessage` is one JSON-RPC message as it went over the wire, from the learner's
point of view: ``sent`` by the client (the learner), or ``received`` from the agent. Its
``kind`` (request, notification, response, error) and, for ``session/update``, the update's
``sessionUpdate`` kind are derived here once; the text and notebook displays read them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..client.timeline import Category, message_category

__all__ = ["Direction", "LabMessage", "MessageKind", "Show", "default_show", "describe"]

Direction = Literal["sent", "received"]
MessageKind = Category
_ARROWS = {"sent": "→", "received": "←"}
#: What a lab calls with each message as it is shown.
Show = Callable[["LabMessage"], None]
_CLIP = 160


@dataclass(frozen=True)
class LabMessage:
    """One message of a lab: its number (from 1), direction, the decoded message (None for a
    line that was not JSON, kept in ``invalid``), the method it is or answers, and what the
    schema check found (messages from the agent; the learner's are checked before sending)."""

    number: int
    direction: Direction
    message: dict[str, Any] | None
    #: The request's method for a response (paired by id); the method itself otherwise.
    method: str | None
    invalid: str | None = None
    schema_errors: tuple[str, ...] = field(default=())

    @property
    def kind(self) -> MessageKind:
        return message_category(self.message)

    @property
    def update_kind(self) -> str | None:
        """The ``sessionUpdate`` of a ``session/update`` notification, else None."""
        if self.kind != "notification" or self.method != "session/update":
            return None
        params = (self.message or {}).get("params")
        update = params.get("update") if isinstance(params, dict) else None
        kind = update.get("sessionUpdate") if isinstance(update, dict) else None
        return str(kind) if kind is not None else None

    @property
    def id(self) -> Any:
        return (self.message or {}).get("id")

    @property
    def payload(self) -> Any:
        """What the message carries: params, result or error."""
        message = self.message or {}
        for key in ("params", "result", "error"):
            if key in message:
                return message[key]
        return None

    def summary(self, *, brief: bool = False) -> str:
        """One line: ``#3 → request 1 session/prompt {"sessionId": …}`` (``brief``: without
        the payload)."""
        return describe(self, brief=brief)

    def __repr__(self) -> str:
        return f"<LabMessage {describe(self, brief=True)}>"

    def json(self) -> str:
        """The whole message, pretty-printed."""
        return json.dumps(self.message, indent=2, ensure_ascii=False)


def _clip(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= _CLIP else text[: _CLIP - 1] + "…"


def describe(entry: LabMessage, *, brief: bool = False) -> str:
    """The one-line text form of ``entry`` (plain text: the terminal, logs, doctests);
    ``brief`` leaves the payload out (what it is, not what it carries)."""
    head = f"#{entry.number} {_ARROWS[entry.direction]}"
    kind = entry.kind
    if kind == "invalid":
        return f"{head} not JSON-RPC: {entry.invalid!r}"
    if kind == "request":
        what = f"request {entry.id} {entry.method}"
    elif kind == "notification":
        what = f"notification {entry.method}"
        if entry.update_kind is not None:
            what += f" · {entry.update_kind}"
    else:
        what = f"{kind} of {entry.method or '?'} ({entry.id})"
    line = f"{head} {what}" if brief else f"{head} {what} {_clip(entry.payload)}"
    if entry.schema_errors:
        line += f"\n    ⚠ breaks the schema: {entry.schema_errors[0]}"
        if len(entry.schema_errors) > 1:
            line += f" (and {len(entry.schema_errors) - 1} more)"
    return line


def default_show(brief: bool) -> Show:
    """A notebook shows rows of a table; anything else prints a line per message."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if getattr(shell, "kernel", None) is not None:  # a kernel runs this, not just imported
        from .display import show_in_notebook  # lazily: the lab never needs Jupyter

        return lambda entry: show_in_notebook(entry, brief=brief)
    return lambda entry: print(entry.summary(brief=brief))
