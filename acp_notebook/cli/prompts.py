"""The agent's questions on a terminal (``acp-notebook run --permissions ask`` on a TTY):
permission requests, and elicitations (a form's fields, or consent to open a URL).

Everything is shown and read on stderr/stdin, so stdout keeps only the transcript.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
import anyio.to_thread

from ..client import elicitation
from ..client import permissions as perms
from ..client.elicitation import ElicitationRequest, InvalidContent, split_url
from ..client.permissions import PermissionRequest
from ..client.render import Renderer
from ..client.session import Session

__all__ = ["elicitation_asker", "parse_field", "permission_asker"]


def _read_line(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline()


async def _ask(prompt: str) -> str:
    """One line typed on the terminal (without its newline); a cancelled turn stops
    waiting for it."""
    line = await anyio.to_thread.run_sync(_read_line, prompt, abandon_on_cancel=True)
    return line.rstrip("\n")


def _say(text: str) -> None:
    print(text, file=sys.stderr)


def permission_asker(session: Session) -> perms.Asker:
    """Show what is being approved (the tool call as text, its raw input), read a choice."""

    async def ask(request: PermissionRequest) -> None:
        call = session.transcript.tool_calls.get(request.tool_call_id)
        renderer = Renderer(session.transcript, terminals=session.terminal_view, markdown=False)
        lines = ["", "The agent asks for permission:"]
        if call is not None:
            lines.append(renderer.tool_call(call))
            if call.raw_input is not None and call.content:
                lines.append("Raw input: " + json.dumps(call.raw_input, ensure_ascii=False))
        for number, option in enumerate(request.options, 1):
            lines.append(f"  [{number}] {option.name} ({option.kind})")
        lines.append("  [c] cancel")
        _say("\n".join(lines))
        while request.pending:
            answer = (await _ask("Choice: ")).strip().lower()
            if not request.pending:
                break
            if answer in ("c", "cancel", ""):
                session.permissions.cancel(request.key, by="user")
            elif answer.isdigit() and 1 <= int(answer) <= len(request.options):
                session.permissions.choose(request.key, request.options[int(answer) - 1].option_id)
            else:
                _say(f"Type a number from 1 to {len(request.options)}, or c.")

    return ask


def elicitation_asker(session: Session) -> elicitation.Asker:
    """Fill in a form field by field (empty skips a field), or consent to open a URL."""

    async def ask(request: ElicitationRequest) -> None:
        broker = session.elicitations
        _say(f"\n{request.agent or 'The agent'} asks: {request.message}")
        if request.mode == "url" and request.url:
            scheme, host, rest = split_url(request.url)
            _say(f"  It wants you to open {scheme}[{host}]{rest}  (host: {host})")
            answer = await _ask("Open it yourself? [y = accept / n = decline / c = cancel] ")
            answer = answer.strip().lower()
            if answer == "y":
                broker.accept(request.key)
            elif answer == "n":
                broker.decline(request.key)
            else:
                broker.cancel(request.key)
            return
        while request.pending:
            values: dict[str, Any] = {}
            for spec in request.fields:
                star = "*" if spec.required else ""
                raw = (await _ask(f"  {spec.title}{star} ({spec.describe()}): ")).strip()
                if raw:
                    values[spec.name] = parse_field(spec.kind, raw)
            answer = (await _ask("Send it? [y = accept / n = decline / c = cancel] ")).strip()
            if answer.lower() == "n":
                broker.decline(request.key)
            elif answer.lower() != "y":
                broker.cancel(request.key)
            else:
                try:
                    broker.accept(request.key, values)
                except InvalidContent as exc:
                    for name, problem in exc.errors.items():
                        _say(f"  {name or 'form'}: {problem}")

    return ask


def parse_field(kind: str, raw: str) -> Any:
    """A typed value from what was typed (validation against the schema comes after)."""
    if kind == "boolean":
        return raw.lower() in ("y", "yes", "true", "1", "on")
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            return raw
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            return raw
    if kind == "multi":
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw
