"""What the loopback model answers, whatever the wire format.

The model is stateless: each request is answered from what it carries. Since the last
prompt the person typed (not a tool result), the script's calls are made in order, each
once, by the name the request's tool list gives it (agents name the notebook's
``run_code`` ``mcp__notebook__run_code``, ``mcp_notebook_run_code``, ``notebook_run_code``
or ``notebook__run_code``); when a wanted tool is not in the list but a ``tool_search``
tool is, the model searches for it first. Then it replies with the script's text. A
request that offers no tools (titles, topic checks, routing) gets the reply text alone, or
for a JSON schema a JSON object of its shape, so side requests never take a step of the
script.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Call:
    """A tool the model asks for: ``tool`` is an exact name or, for the notebook tools,
    the tool's own name (``run_code``), matched against each agent's spelling."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Script:
    reply: str = "Hello from the loopback model."
    calls: tuple[Call, ...] = ()
    #: Hold every answer that offers tools until :meth:`LoopbackModel.release` (a turn
    #: that is still waiting on its model when a test interrupts it).
    hold: bool = False


@dataclass
class Conversation:
    """What the model reads in a request, whatever its format."""

    tools: list[str]
    #: Names of the tools the model called since the last prompt the person typed.
    called: list[str]
    #: A JSON reply was asked for: the schema's properties.
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Answer:
    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None


def tool_name(wanted: str, offered: list[str]) -> str | None:
    """The offered name of ``wanted``: itself, or a notebook tool in any agent's spelling."""
    if wanted in offered:
        return wanted
    spelled = re.compile(rf"^(mcp)?_*notebook_+{re.escape(wanted)}$")
    return next((name for name in offered if spelled.match(name)), None)


def decide(script: Script, conv: Conversation) -> Answer:
    if conv.schema is not None:
        return Answer(text=json.dumps(_fill(conv.schema)))
    if conv.tools:
        for step in script.calls:
            name = tool_name(step.tool, conv.tools)
            if name is None:
                if "tool_search" in conv.tools and "tool_search" not in conv.called:
                    return Answer(call=("tool_search", {"query": step.tool}))
                continue
            if name not in conv.called:
                return Answer(call=(name, step.arguments))
    return Answer(text=script.reply)


def _fill(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON object of ``schema``'s shape: the answer of a side request (gemini's model
    router and its next-speaker check) that ends the turn where it can."""
    out: dict[str, Any] = {}
    for key, spec in (schema.get("properties") or {}).items():
        kind = str(spec.get("type", "string")).lower()
        if "enum" in spec:
            choices = spec["enum"]
            out[key] = "user" if "user" in choices else choices[0]
        elif kind == "boolean":
            out[key] = False
        elif kind in ("number", "integer"):
            out[key] = 0
        elif kind == "array":
            out[key] = []
        elif kind == "object":
            out[key] = _fill(spec)
        else:
            out[key] = "flash" if "model" in key else "done"
    return out
