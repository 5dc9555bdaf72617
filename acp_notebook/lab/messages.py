"""The messages a lab sees, both ways, and how each reads in one line.

A :class:`LabMessage` is one row of the lab's timeline (:class:`~..client.timeline.Row`:
the recorded message, its number, the request a response answers), read as the learner
reads it: ``send`` by the client (the learner), ``recv`` from the agent; its ``kind``
(request, notification, response, error), method and ``sessionUpdate`` kind are the
record's own; what the schema check finds in the agent's messages is checked once, when
first asked. The text and notebook displays read them.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cached_property
from typing import Any

from ..client.timeline import Row, check
from ..protocol.trace_event import Category

__all__ = ["LabMessage", "MessageKind", "Show", "default_show", "describe"]

MessageKind = Category
_ARROWS = {"send": "→", "recv": "←"}
#: What a lab calls with each message as it is shown.
Show = Callable[["LabMessage"], None]
_CLIP = 160


class LabMessage(Row):
    """One message of a lab: its ``number`` (from 1), ``direction``, the decoded ``message``
    (None for a line that was not JSON, kept in ``invalid``), the ``method`` it is or
    answers, and what the schema check found (messages from the agent; the learner's are
    checked before sending)."""

    @property
    def kind(self) -> MessageKind:
        return self.category

    @property
    def id(self) -> Any:
        return self.event.id

    @property
    def payload(self) -> Any:
        """What the message carries: params, result or error."""
        return self.event.payload

    @property
    def invalid(self) -> str | None:
        return self.event.invalid

    @cached_property
    def schema_errors(self) -> tuple[str, ...]:
        """Why a message from the agent breaks the schema (empty: it conforms, or it could
        not be checked)."""
        if self.direction != "recv" or self.message is None:
            return ()
        return tuple(check(self))

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
