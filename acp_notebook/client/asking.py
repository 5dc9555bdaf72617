"""A permission request asked in words, for the frontends that ask by reading a line: the
CLI's terminal (``cli/prompts.py``) and a notebook frontend without widgets
(``notebook/view/plain.py``, through ``input()``). The card's buttons are ``ui/permission.py``.

Both show the same question (:func:`permission_question`), read an answer the same way
(:func:`read_choice`), and ask the same second question before an "always" option binds
on a risky call (:func:`always_question`).
"""

from __future__ import annotations

import json
from typing import Literal

from .permission_request import PermissionOption, PermissionRequest
from .render import Renderer
from .session import Session

__all__ = [
    "CANCEL",
    "always_question",
    "permission_question",
    "read_choice",
    "read_yes",
    "retry",
]

#: The answer that cancels the request (an empty line too).
CANCEL: Literal["cancel"] = "cancel"


def permission_question(session: Session, request: PermissionRequest) -> str:
    """What is being approved (the tool call as text, its raw input, its risk), then the
    numbered options and ``[c] cancel``."""
    call = session.transcript.tool_calls.get(request.tool_call_id)
    renderer = Renderer(session.transcript, terminals=session.terminal_view, markdown=False)
    lines = ["", "The agent asks for permission:"]
    if call is not None:
        lines.append(renderer.tool_call(call))
        if call.raw_input is not None and call.content:
            lines.append("Raw input: " + json.dumps(call.raw_input, ensure_ascii=False))
    if request.danger is not None:
        lines.append(request.danger.label)
    for number, option in enumerate(request.options, 1):
        lines.append(f"  [{number}] {option.name} ({option.kind})")
    lines.append("  [c] cancel")
    return "\n".join(lines)


def read_choice(request: PermissionRequest, answer: str) -> PermissionOption | str | None:
    """The option a typed answer names (its number), :data:`CANCEL` for ``c`` or an
    empty line, or None when the answer names nothing (ask again, with :func:`retry`)."""
    answer = answer.strip().lower()
    if answer in ("c", "cancel", ""):
        return CANCEL
    if answer.isdigit() and 1 <= int(answer) <= len(request.options):
        return request.options[int(answer) - 1]
    return None


def retry(request: PermissionRequest) -> str:
    """What to say after an answer that names no option."""
    return f"Type a number from 1 to {len(request.options)}, or c."


def always_question(request: PermissionRequest, option: PermissionOption) -> str | None:
    """The second question before an "always" option binds on a call rated risky
    (``danger.py``): allowing it always lets the agent do every later call of its kind
    without asking. None when no second question is needed."""
    if option.kind != "allow_always" or request.danger is None:
        return None
    kind = request.call.kind if request.call is not None and request.call.kind else "tool"
    return (
        f"Allow every future {kind} call like this one without asking? "
        f"This one is rated {request.danger.label}."
    )


def read_yes(answer: str) -> bool:
    """A yes to :func:`always_question` (anything else is no)."""
    return answer.strip().lower() in ("y", "yes")
