"""How a transcript reads as text: Markdown (saved notebooks, the CLI) and plain text.

Deterministic by design: no timestamps, no durations, no random ids; paths inside
the session's directory are shown relative to it, so the same turn renders the same
on every machine (nbval compares saved outputs with re-run ones).
"""

from __future__ import annotations

import base64
import difflib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..protocol import models as m
from .elicitation import split_url
from .rawinput import DERIVED_NOTE, edits_from_raw_input
from .transcript import (
    CANCELLED,
    ElicitationEntry,
    MessageEntry,
    NoteEntry,
    PlanView,
    TextRun,
    ToolCallEntry,
    ToolCallState,
    Transcript,
    TurnRecord,
    UnknownEntry,
)

KIND_ICONS = {
    "read": "📖",
    "edit": "✏️",
    "delete": "🗑️",
    "move": "📦",
    "search": "🔎",
    "execute": "▶️",
    "think": "💭",
    "fetch": "🌐",
    "switch_mode": "🔀",
    "other": "🔧",
}
STATUS_ICONS = {
    "pending": "⏳",
    "in_progress": "⏳",
    "completed": "✅",
    "failed": "❌",
    CANCELLED: "⏹️",
}
PLAN_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}

STOP_REASONS = {
    "end_turn": "the agent finished its turn.",
    "max_tokens": "the agent reached its token limit.",
    "max_turn_requests": "the agent reached its limit of requests in one turn.",
    "refusal": (
        "the agent refused to continue. This prompt and anything after it in this turn "
        "will not be part of the next turn's context."
    ),
    "cancelled": "the turn was cancelled.",
}

MAX_DIFF_LINES = 400
MAX_TERMINAL_CHARS = 20_000
MAX_EMBEDDED_IMAGE_BYTES = 1 << 20
MAX_RESOURCE_LINES = 60


@dataclass
class TerminalView:
    """What a transcript shows of a client terminal (kept after `terminal/release`)."""

    command: str
    output: str
    truncated: bool
    exit_code: int | None
    signal: str | None
    finished: bool


TerminalLookup = Callable[[str], "TerminalView | None"]


def short_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it."""
    if cwd and os.path.isabs(path):
        try:
            if os.path.commonpath([os.path.abspath(path), os.path.abspath(cwd)]) == os.path.abspath(
                cwd
            ):
                return os.path.relpath(path, cwd)
        except ValueError:
            pass
    return path


def base64_size(data: str) -> int:
    """Bytes encoded by a base64 string (padding taken into account)."""
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def human_bytes(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1 << 20:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1 << 20):.1f} MB"


def unified_diff(diff: m.Diff, cwd: str | None) -> str:
    """A readable unified diff of one `diff` tool-call content item."""
    name = short_path(diff.path, cwd)
    old = diff.old_text or ""
    lines = list(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            diff.new_text.splitlines(keepends=True),
            fromfile="/dev/null"
            if diff.old_text is None
            else f"a{name}"
            if name.startswith("/")
            else f"a/{name}",
            tofile=f"b{name}" if name.startswith("/") else f"b/{name}",
            n=3,
        )
    )
    out = [
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    ]
    if len(out) > MAX_DIFF_LINES:
        out = [*out[:MAX_DIFF_LINES], f"… {len(out) - MAX_DIFF_LINES} more diff lines\n"]
    return "".join(out) or f"(no changes to {name})\n"


def usage_tokens_line(usage: dict[str, Any] | None) -> str:
    """`PromptResponse.usage` (unstable) as one line: "Tokens: 1,200 in · 340 out"."""
    if not usage:
        return ""
    names = {
        "inputTokens": "in",
        "outputTokens": "out",
        "thoughtTokens": "thinking",
        "cachedReadTokens": "cache read",
        "cachedWriteTokens": "cache write",
        "totalTokens": "total",
    }
    parts = [f"{usage[k]:,} {label}" for k, label in names.items() if isinstance(usage.get(k), int)]
    return "Tokens: " + " · ".join(parts) if parts else ""


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that survives backticks inside ``text``."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    body = text if text.endswith("\n") else text + "\n"
    return f"{ticks}{lang}\n{body}{ticks}"


def portable(value: Any, cwd: str | None, placeholder: str = ".") -> Any:
    """``value`` with the session's directory replaced by ``placeholder`` in every string,
    so raw JSON shown in a transcript is the same on every machine."""
    if not cwd:
        return value
    if isinstance(value, str):
        if value == cwd:
            return placeholder
        value = value.replace(cwd + os.sep, "" if placeholder == "." else placeholder + os.sep)
        return value.replace(cwd, placeholder)
    if isinstance(value, list):
        return [portable(v, cwd, placeholder) for v in value]
    if isinstance(value, dict):
        return {k: portable(v, cwd, placeholder) for k, v in value.items()}
    return value


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


class Renderer:
    """Renders a transcript (or one of its turns) as Markdown or plain text."""

    def __init__(
        self,
        transcript: Transcript,
        *,
        terminals: TerminalLookup | None = None,
        markdown: bool = True,
    ) -> None:
        self.transcript = transcript
        self.terminals = terminals
        self.markdown = markdown
        self.cwd = transcript.cwd

    # ------------------------------------------------------------------ public

    def turn(self, record: TurnRecord, *, footer: bool = True) -> str:
        parts = [self.entry(entry) for entry in self.transcript.entries_of(record.index)]
        if footer:
            parts.append(self.turn_footer(record))
        return "\n\n".join(p for p in parts if p).strip() + "\n"

    def session(self) -> str:
        """The whole conversation: entries before the first turn, then every turn."""
        parts = [self.entry(e) for e in self.transcript.entries_of(None)]
        for record in self.transcript.turns:
            parts.append(self.turn(record))
        return "\n\n".join(p for p in parts if p).strip() + "\n"

    def stop_line(self, record: TurnRecord) -> str:
        """How the turn ended, in one sentence (plain text)."""
        if record.error is not None:
            return f"Error: {record.error}"
        if record.stop_reason is None:
            return "Running…"
        why = STOP_REASONS.get(record.stop_reason, "")
        text = f"Stop reason: {record.stop_reason}" + (f" — {why}" if why else "")
        if record.cancel_requested and record.stop_reason != "cancelled":
            text += " (a cancel was requested)"
        return text

    def turn_footer(self, record: TurnRecord) -> str:
        stop = self.stop_line(record)
        lines = [
            self._bold("Error:") + stop[len("Error:") :]
            if record.error is not None
            else self._italic(stop)
        ]
        for extra in (usage_tokens_line(record.usage), self.usage_line()):
            if extra:
                lines.append(self._italic(extra))
        return "\n\n".join(lines)

    def usage_line(self) -> str:
        usage = self.transcript.usage
        if usage is None:
            return ""
        parts = []
        if usage.used is not None and usage.size:
            parts.append(
                f"Context: {usage.used:,} / {usage.size:,} tokens ({usage.used / usage.size:.0%})"
            )
        elif usage.used is not None:
            parts.append(f"Context: {usage.used:,} tokens")
        if usage.cost_amount is not None:
            amount = f"{usage.cost_amount:.6f}".rstrip("0").rstrip(".")
            parts.append(f"Cost: {amount} {usage.cost_currency or ''}".rstrip())
        return " · ".join(parts)

    # ------------------------------------------------------------------ entries

    def entry(self, entry: object) -> str:
        if isinstance(entry, MessageEntry):
            return self.message(entry)
        if isinstance(entry, ToolCallEntry):
            return self.tool_call(entry.tool_call)
        if isinstance(entry, PlanView):
            return self.plan(entry.entries)
        if isinstance(entry, NoteEntry):
            return self._italic(entry.text)
        if isinstance(entry, UnknownEntry):
            return self.collapsed(
                f"Unknown update `{entry.kind}` (shown raw)",
                fence(_json(portable(entry.raw, self.cwd)), "json"),
            )
        if isinstance(entry, ElicitationEntry):
            return self.elicitation(entry)
        return ""

    def message(self, entry: MessageEntry) -> str:
        body = "\n\n".join(self.item(item) for item in entry.items).strip()
        if entry.role == "user":
            return f"{self._bold('You:')} {body}" if self.markdown else f"You: {body}"
        if entry.role == "thought":
            return self.collapsed("Thought", body)
        return body

    def item(self, item: TextRun | m.ContentBlock) -> str:
        if isinstance(item, TextRun):
            return item.text
        return self.content_block(item)

    def content_block(self, block: m.ContentBlock) -> str:
        if isinstance(block, m.TextContentBlock):
            return block.text
        if isinstance(block, m.ImageContentBlock):
            size = base64_size(block.data)
            if self.markdown and size <= MAX_EMBEDDED_IMAGE_BYTES and _is_base64(block.data):
                return f"![image ({block.mime_type}, {human_bytes(size)})](data:{block.mime_type};base64,{block.data})"
            return f"[image {block.mime_type}, {human_bytes(size)}]"
        if isinstance(block, m.AudioContentBlock):
            return f"[audio {block.mime_type}, {human_bytes(base64_size(block.data))}]"
        if isinstance(block, m.ResourceLinkContentBlock):
            label = block.title or block.name
            extra = ", ".join(
                x
                for x in (
                    block.mime_type,
                    human_bytes(block.size) if block.size is not None else None,
                )
                if x
            )
            link = f"[{label}]({block.uri})" if self.markdown else f"{label} <{block.uri}>"
            return f"🔗 {link}" + (f" ({extra})" if extra else "")
        if isinstance(block, m.EmbeddedResourceContentBlock):
            return self.embedded_resource(block.resource)
        raw = block.to_wire() if hasattr(block, "to_wire") else {}
        kind = raw.get("type", "?") if isinstance(raw, dict) else "?"
        return self.collapsed(
            f"Unknown content `{kind}` (shown raw)", fence(_json(portable(raw, self.cwd)), "json")
        )

    def embedded_resource(self, resource: Any) -> str:
        if isinstance(resource, m.TextResourceContents):
            name = short_path(resource.uri.removeprefix("file://"), self.cwd)
            lines = resource.text.splitlines(keepends=True)
            size = len(resource.text.encode())
            head = f"📎 {self._code(name)} ({resource.mime_type or 'text'}, {human_bytes(size)})"
            shown = "".join(lines[:MAX_RESOURCE_LINES])
            if len(lines) > MAX_RESOURCE_LINES:
                shown += f"… {len(lines) - MAX_RESOURCE_LINES} more lines\n"
            return self.collapsed(head, fence(shown, lang_of(resource.uri)))
        if isinstance(resource, m.BlobResourceContents):
            name = short_path(resource.uri.removeprefix("file://"), self.cwd)
            return f"📎 {self._code(name)} ({resource.mime_type or 'binary'}, {human_bytes(base64_size(resource.blob))})"
        raw = resource.to_wire() if hasattr(resource, "to_wire") else {}
        return self.collapsed(
            "Embedded resource (shown raw)", fence(_json(portable(raw, self.cwd)), "json")
        )

    # ------------------------------------------------------------------ tool calls

    def tool_call_heading(self, call: ToolCallState) -> str:
        icon = KIND_ICONS.get(call.kind, KIND_ICONS["other"])
        status = f"{STATUS_ICONS.get(call.status, '')} {call.status}".strip()
        title = call.title or call.tool_call_id
        return f"{icon} {self._bold(title)} · {call.kind} · {status}"

    def tool_call(self, call: ToolCallState) -> str:
        parts = [self.tool_call_heading(call)]
        if call.locations:
            locations = ", ".join(
                self._code(short_path(loc.path, self.cwd) + (f":{loc.line}" if loc.line else ""))
                for loc in call.locations
            )
            parts.append(f"Locations: {locations}")
        for request in call.permissions:
            parts.append(self.permission_line(request))
        for item in call.content:
            parts.append(self.tool_content(item))
        if not call.diffs and call.raw_input is not None:
            # Agents that put an edit only in rawInput: show it, labelled (agent-shell#123).
            for edit in edits_from_raw_input(call.raw_input, call.kind):
                body = (
                    unified_diff(edit.diff, self.cwd)
                    if edit.diff is not None
                    else (edit.patch or "")
                )
                parts.append(self._italic(f"Diff {DERIVED_NOTE}:") + "\n\n" + fence(body, "diff"))
        if call.raw_input is not None:
            parts.append(
                self.collapsed(
                    "Raw input", fence(_json(portable(call.raw_input, self.cwd)), "json")
                )
            )
        return "\n\n".join(p for p in parts if p)

    def permission_line(self, request: Any) -> str:
        """ "Permission: Allow once (chosen by rule `allow read`)", then the risk rating in
        the same words as the prompt ("⚠️ Risky: deletes files recursively")."""
        line = f"Permission: {request.describe()}"
        danger = getattr(request, "danger", None)
        if danger is not None:
            line += f" · {danger.label}"
        return line

    def tool_content(self, item: m.ToolCallContent) -> str:
        if isinstance(item, m.DiffToolCallContent):
            return fence(unified_diff(item, self.cwd), "diff")
        if isinstance(item, m.TerminalToolCallContent):
            return self.terminal(item.terminal_id)
        if isinstance(item, m.ContentToolCallContent):
            return self.content_block(item.content)
        raw = item.to_wire() if hasattr(item, "to_wire") else {}
        kind = raw.get("type", "?") if isinstance(raw, dict) else "?"
        return self.collapsed(
            f"Unknown tool call content `{kind}` (shown raw)",
            fence(_json(portable(raw, self.cwd)), "json"),
        )

    def terminal(self, terminal_id: str) -> str:
        view = self.terminals(terminal_id) if self.terminals else None
        if view is None:
            return f"[terminal {terminal_id}]"
        output = view.output
        if len(output) > MAX_TERMINAL_CHARS:
            output = "…" + output[-MAX_TERMINAL_CHARS:]
        lines = [
            f"$ {view.command}\n",
            output if output.endswith("\n") or not output else output + "\n",
        ]
        if view.truncated:
            lines.insert(1, "… (earlier output dropped)\n")
        if view.finished:
            if view.signal:
                lines.append(f"[killed by {view.signal}]\n")
            else:
                lines.append(f"[exit code {view.exit_code}]\n")
        return fence("".join(lines), "console")

    # --- elicitation (elicitation/create) ----------------------------------------------

    def elicitation(self, entry: ElicitationEntry) -> str:
        """The question, its fields (or the URL and its host), and the outcome."""
        request = entry.request
        who = f" by {request.agent}" if request.agent else ""
        call = self.transcript.tool_calls.get(request.tool_call_id or "")
        if call is not None:
            who += f" (for tool call {self._bold(call.title or call.tool_call_id)})"
        elif request.tool_call_id:
            who += f" (for tool call {self._code(request.tool_call_id)})"
        if request.mode == "url":
            parts = [f"🔗 {self._bold('Asked to open a URL')}{who}: {request.message}"]
            host = split_url(request.url or "")[1]
            parts.append(
                f"URL: {self._code(request.url or '')}"
                + (f" (host {self._bold(host)})" if host else "")
            )
        else:
            parts = [f"❓ {self._bold('Asked for input')}{who}: {request.message}"]
            if request.mode == "form":
                parts.append(
                    "\n".join(
                        f"- {spec.title} ({self._code(spec.name)}"
                        + (", required" if spec.required else "")
                        + f"): {spec.describe()}"
                        for spec in request.fields
                    )
                )
            else:
                parts.append(
                    self.collapsed(
                        f"Unknown elicitation mode `{request.raw_mode}` (shown raw)",
                        fence(_json(portable(request.raw, self.cwd)), "json"),
                    )
                )
        parts.append(f"→ {request.outcome()}")
        return "\n\n".join(p for p in parts if p)

    # --- end elicitation -----------------------------------------------------------------

    # ------------------------------------------------------------------ plan

    def plan(self, entries: list[m.PlanEntry]) -> str:
        lines = [self._bold("Plan")]
        for entry in entries:
            mark = PLAN_MARKS.get(str(entry.status), "[ ]")
            text = entry.content
            if entry.status == "in_progress":
                text = self._bold(text) if self.markdown else f"{text} (in progress)"
            lines.append(f"- {mark} {text} ({entry.priority})")
        return "\n".join(lines)

    # ------------------------------------------------------------------ helpers

    def collapsed(self, summary: str, body: str) -> str:
        if self.markdown:
            # The margin keeps the next paragraph off a closed section (no margin by default).
            return f'<details style="margin-bottom: 0.6em"><summary>{summary}</summary>\n\n{body}\n\n</details>'
        indented = "\n".join("  " + line for line in body.splitlines())
        return f"{summary}:\n{indented}"

    def _bold(self, text: str) -> str:
        return f"**{text}**" if self.markdown else text

    def _italic(self, text: str) -> str:
        return f"*{text}*" if self.markdown else text

    def _code(self, text: str) -> str:
        return f"`{text}`" if self.markdown else text


def _is_base64(data: str) -> bool:
    """The whole string is base64 (it goes into a data: URI of the saved Markdown)."""
    try:
        base64.b64decode(data, validate=True)
    except ValueError:
        return False
    return True


_LANGS = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".json": "json",
    ".md": "markdown",
    ".csv": "csv",
    ".sh": "bash",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".rs": "rust",
}


def lang_of(uri: str) -> str:
    """The Pygments/Markdown language name for a file path or URI, or ""."""
    return _LANGS.get(os.path.splitext(uri)[1].lower(), "")


def transcript_bundle(
    transcript: Transcript, record: TurnRecord, terminals: TerminalLookup | None = None
) -> dict[str, str]:
    """The display bundle of one turn: the same in a live cell's final state, a headless
    run and the CLI's output."""
    return {
        "text/markdown": Renderer(transcript, terminals=terminals, markdown=True).turn(record),
        "text/plain": Renderer(transcript, terminals=terminals, markdown=False).turn(record),
    }
