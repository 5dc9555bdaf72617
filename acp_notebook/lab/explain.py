"""One-sentence explanations of the mistakes a learner makes in a message they send.

:func:`explain` turns what :func:`~acp_notebook.protocol.conformance.schema_errors` reports
(``params.cwd: 3 is not of type 'string' [NewSessionRequest]``) into a sentence that says what
to change; :func:`rule_errors` adds the rules the schema states only in prose (an absolute
``cwd``). Order mistakes (a prompt before any session) are the stepper's: it knows the state.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["StepError", "explain", "rule_errors", "wire_name"]

_REQUIRED = re.compile(
    r"^(?P<where>[^:]+): '(?P<name>[^']+)' is a required property \[(?P<type>\w+)\]$"
)
_TYPE = re.compile(
    r"^(?P<where>[^:]+): (?P<value>.+) is not of type (?P<expected>.+) \[(?P<type>\w+)\]$"
)
_EXTRA = re.compile(
    r"^(?P<where>[^:]+): Additional properties are not allowed \((?P<names>.+) (?:was|were) unexpected\) \[(?P<type>\w+)\]$"
)
_ONE_OF = re.compile(
    r"^(?P<where>[^:]+): (?P<value>.+) is not one of (?P<allowed>\[.*\]) \[(?P<type>\w+)\]$"
)
_TAIL = re.compile(r" \[\w+\]$")

#: Methods whose ``cwd`` the spec wants absolute (the schema says so only in its description).
_CWD_METHODS = frozenset({"session/new", "session/load", "session/resume"})


def wire_name(name: str) -> str:
    """``session_id`` -> ``sessionId``: the wire's camelCase spelling of a snake_case name."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", lambda c: "_" + c.group(1).lower(), name)


def explain(method: str, error: str, params: Any = None) -> str:
    """One sentence for one schema error of a ``method`` message the learner wrote
    (``params``, when given, lets it spot a snake_case spelling of a wire name)."""
    if found := _REQUIRED.match(error):
        name = found["name"]
        misspelt = (
            isinstance(params, Mapping) and found["where"] == "params" and _snake(name) in params
        )
        return (
            f"{found['where']}.{name} is missing: {method} requires it "
            f"(schema type {found['type']})"
            + (f" — you sent {_snake(name)!r}; wire names are camelCase." if misspelt else ".")
        )
    if found := _EXTRA.match(error):
        names = [n.strip(" '") for n in found["names"].split(",")]
        hints = [f"{n!r} (did you mean {wire_name(n)!r}?)" for n in names if "_" in n]
        return (
            f"{found['where']} has a field {method} does not define: "
            + (", ".join(hints) if hints else ", ".join(repr(n) for n in names))
            + " — wire names are camelCase."
        )
    if found := _TYPE.match(error):
        return (
            f"{found['where']} must be of type {found['expected']}, not {found['value']} "
            f"(schema type {found['type']})."
        )
    if found := _ONE_OF.match(error):
        return f"{found['where']} must be one of {found['allowed']}, not {found['value']}."
    text = _TAIL.sub("", error)
    return text if text.endswith(".") else text + "."


def rule_errors(method: str, params: Any) -> list[str]:
    """Sentences for the spec's rules that the schema does not check, for ``params`` of
    ``method`` as the learner wrote them (empty when none is broken)."""
    if not isinstance(params, Mapping):
        return []
    found = []
    cwd = params.get("cwd")
    if method in _CWD_METHODS and isinstance(cwd, str) and not os.path.isabs(cwd):
        # spec: "cwd: the working directory for this session. Must be an absolute path."
        found.append(
            f"params.cwd must be an absolute path, not {cwd!r} — try os.path.abspath({cwd!r})."
        )
    prompt = params.get("prompt")
    if method == "session/prompt" and isinstance(prompt, list) and not prompt:
        found.append("params.prompt is empty: send at least one content block, e.g. a text block.")
    return found


class StepError(Exception):
    """A step the lab refused before sending anything: out of order, or a message that
    breaks the protocol. The message is one sentence saying what to do instead."""

    def _render_traceback_(self) -> list[str]:
        # IPython shows these lines instead of the traceback: a learner's refused step
        # reads as its sentence, not as forty lines of the lab's own frames.
        return [f"{type(self).__name__}: {self}"]
