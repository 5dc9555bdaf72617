"""How a transcript reads as text: Markdown (saved notebooks, the CLI) and plain text.

Deterministic by design: no timestamps, no durations, no random ids; paths inside
the session's directory are shown relative to it, so the same turn renders the same
on every machine (nbval compares saved outputs with re-run ones).
"""

from __future__ import annotations

import html
import re
from dataclasses import KW_ONLY, dataclass
from typing import Any

from ..protocol import models as m
from .agent_markdown import KeepEnds, agent_markdown
from .display import (
    DiffShown,
    FileShown,
    LinkShown,
    MediaShown,
    RawShown,
    TerminalLookup,
    TerminalShown,
    TextShown,
    ToolContentShown,
    block_shown,
    diff_shown,
    kind_icon,
    location_label,
    raw_json,
    status_text,
    tool_content_shown,
)
from .elicitation import split_url
from .entry_forms import EntryForm, row
from .formatting import code_span, fence, fields_text, md_escape, md_url, one_line, portable
from .rawinput import DERIVED_NOTE
from .sent import SentItem, is_attachment, prompt_words, sent_items
from .transcript import (
    CompactionEntry,
    ElicitationEntry,
    MessageEntry,
    NoteEntry,
    NoticeEntry,
    PlanView,
    TextRun,
    ToolCallEntry,
    ToolCallState,
    Transcript,
    TurnRecord,
    UnknownEntry,
)

# ``portable`` lives in formatting.py; it is named here until notebook/inspector.py
# imports it from there.
__all__ = ["STOP_REASONS", "Renderer", "portable", "transcript_bundle", "usage_tokens_line"]

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


#: A Markdown code span: a run of backticks, the code, the same run (CommonMark 6.1).
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)


def summary_html(summary: str) -> str:
    """A ``<summary>``'s Markdown (code spans only) as HTML: Markdown is not read inside
    HTML blocks, so a code span would show its backticks. Everything else is escaped."""
    parts: list[str] = []
    end = 0
    for match in _CODE_SPAN.finditer(summary):
        code = match.group(2)
        if code.startswith(" ") and code.endswith(" ") and code.strip():
            code = code[1:-1]
        parts.append(html.escape(summary[end : match.start()], quote=False))
        parts.append(f"<code>{html.escape(code, quote=False)}</code>")
        end = match.end()
    parts.append(html.escape(summary[end:], quote=False))
    return "".join(parts)


@dataclass
class Renderer:
    """Renders a transcript (or one of its turns) as Markdown or plain text."""

    transcript: Transcript
    _: KW_ONLY
    #: ``Session.terminal_view``: what an embedded terminal shows (None: only its id).
    terminals: TerminalLookup | None = None
    markdown: bool = True
    #: Plain text only: a tool call's raw input as ``key: value`` lines, not JSON (for a
    #: person at a terminal; a saved transcript keeps the exact JSON).
    raw_fields: bool = False
    #: How much of a long text (a message's run of text) is kept, when not all of it.
    keep_ends: KeepEnds | None = None

    @property
    def cwd(self) -> str | None:
        """Paths inside the session's directory are shown relative to it."""
        return self.transcript.cwd

    # ------------------------------------------------------------------ public

    def turn(self, record: TurnRecord, *, footer: bool = True) -> str:
        entries = self.transcript.entries_of(record.index)
        parts = [self.entry(entry) for entry in entries]
        attached = sent_items(record.prompt)
        if attached:  # the prompt's words, then what was attached, listed (sent.py)
            prompt = next(
                (
                    i
                    for i, e in enumerate(entries)
                    if isinstance(e, MessageEntry) and e.role == "user"
                ),
                None,
            )
            if prompt is not None:
                parts[prompt] = self.prompt_with_attachments(record.prompt, attached)
        if footer:
            parts.append(self.turn_footer(record))
        parts.insert(0, self.not_kept(record.index))
        return "\n\n".join(p for p in parts if p).strip() + "\n"

    def not_kept(self, turn: int | None) -> str:
        """The line that says how many of the turn's entries the transcript let go of."""
        note = self.transcript.not_kept_note(turn)
        return f"*{note}*" if note and self.markdown else note

    def session(self) -> str:
        """The whole conversation: entries before the first turn, then every turn."""
        parts = [self.not_kept(None), *(self.entry(e) for e in self.transcript.entries_of(None))]
        for record in self.transcript.turns:
            parts.append(self.turn(record))
        return "\n\n".join(p for p in parts if p).strip() + "\n"

    def stop_line(self, record: TurnRecord) -> str:
        """How the turn ended, in one sentence (plain text)."""
        if record.error is not None:
            return f"Error: {record.error}"
        if record.stop_reason is None:
            return "Running…"
        limit = record.timed_out_after
        if limit is not None:
            # Whatever the agent answered to the cancel (opencode: end_turn), the limit ended it.
            ended = f"the turn ended after the {limit:g} s timeout (-t {limit:g})."
            return f"Stop reason: {record.stop_reason} — {ended}"
        why = STOP_REASONS.get(record.stop_reason, "")
        text = f"Stop reason: {record.stop_reason}" + (f" — {why}" if why else "")
        if record.cancel_requested and record.stop_reason != "cancelled":
            text += " (a cancel was requested)"
        return text

    def turn_footer(self, record: TurnRecord) -> str:
        stop = self.stop_line(record)
        lines = [
            self._bold("Error:") + self._prose(stop[len("Error:") :])
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
        """``entry`` as Markdown (or plain text): its row of :data:`MARKDOWN`."""
        return MARKDOWN(self, entry, None)

    def message(self, entry: MessageEntry) -> str:
        body = "\n\n".join(self.item(item) for item in entry.items).strip()
        if entry.role == "user":
            return f"{self._bold('You:')} {body}" if self.markdown else f"You: {body}"
        if entry.role == "thought":
            return self.collapsed("Thought", body)
        return body

    def notice(self, entry: NoticeEntry) -> str:
        """ "⚠️ Warning: title — description" (plain text from the agent, escaped)."""
        words = entry.title + (f" — {entry.description}" if entry.description else "")
        return f"{self._bold(entry.label + ':')} {self._text(words)}"

    def compaction(self, entry: CompactionEntry) -> str:
        """The compaction's status, its summary collapsed under it."""
        body = self.message(entry.summary)
        return self.collapsed(entry.heading, body) if body else self._italic(entry.heading)

    def prompt_with_attachments(self, blocks: list[m.ContentBlock], items: list[SentItem]) -> str:
        """ "You: words", the "Sent: …" line, and the attachments' text collapsed under it."""
        words = prompt_words(blocks).strip()
        you = f"{self._bold('You:')} {words}" if self.markdown else f"You: {words}"
        listed = [
            (f"{self._code(item.name)} " if item.name else "")
            + self._text(item.label)
            + (f" ({self._text('cut: ' + '; '.join(item.notes))})" if item.notes else "")
            for item in items
        ]
        sent = f"{self._italic('Sent:')} " + " · ".join(listed)
        shown = [
            self.item(block)
            for block in blocks
            if is_attachment(block)
            and not isinstance(block, (m.ImageContentBlock, m.ResourceLinkContentBlock))
        ]
        details = self.collapsed("What was sent", "\n\n".join(shown)) if shown else ""
        return "\n\n".join(p for p in (you, sent, details) if p)

    def item(self, item: TextRun | m.ContentBlock) -> str:
        if isinstance(item, TextRun):
            text = self.kept(item.text)
            return agent_markdown(text) if self.markdown else text
        return self.shown(block_shown(item, self.cwd))

    def kept(self, text: str) -> str:
        """A message's text as :attr:`keep_ends` keeps it (whole without a limit)."""
        return self.keep_ends.apply(text) if self.keep_ends is not None else text

    # ------------------------------------------------------------------ content

    def shown(self, shown: ToolContentShown) -> str:
        """One piece of content, from its display facts (``display.py``)."""
        if isinstance(shown, TextShown):
            return agent_markdown(shown.text) if self.markdown else shown.text
        if isinstance(shown, MediaShown):
            if self.markdown and shown.kind == "image" and shown.data_uri is not None:
                # The MIME type was checked: it cannot end the alt text or the target.
                alt = f"image ({shown.type_and_size})"
                return f"![{alt}]({shown.data_uri})"
            return f"[{self._text(shown.label)}]"
        if isinstance(shown, LinkShown):
            if self.markdown and shown.href is not None:
                link = f"[{md_escape(shown.label)}]({md_url(shown.href)})"
            else:
                link = self._text(f"{shown.label} <{shown.uri}>")
            return f"🔗 {link}" + (f" ({self._text(shown.details)})" if shown.details else "")
        if isinstance(shown, FileShown):
            head = f"📎 {self._code(shown.name)} ({shown.type_and_size})"
            if shown.text is None:
                return head
            more = f"… {shown.more_lines} more lines\n" if shown.more_lines else ""
            return self.collapsed(head, fence(shown.text + more, shown.language))
        if isinstance(shown, DiffShown):
            return fence(shown.text, "diff")
        if isinstance(shown, TerminalShown):
            return self.terminal(shown)
        return self.collapsed(shown.summary(), self._raw_json(shown.raw))

    # ------------------------------------------------------------------ tool calls

    def tool_call_heading(self, call: ToolCallState) -> str:
        title = call.shown_title or call.tool_call_id
        return f"{kind_icon(call.kind)} {self._bold(title)} · {self._prose(call.kind)} · {status_text(call)}"

    def tool_call(self, call: ToolCallState) -> str:
        parts = [self.tool_call_heading(call)]
        if call.locations:
            locations = ", ".join(
                self._code(location_label(loc, self.cwd)) for loc in call.locations
            )
            parts.append(f"Locations: {locations}")
        for request in call.permissions:
            parts.append(self.permission_line(request))
        for item in call.content:
            parts.append(self.shown(tool_content_shown(item, self.cwd, self.terminals)))
        for diff in call.diffs:
            if diff.derived:
                # Agents that put an edit only in rawInput: show it, labelled (agent-shell#123).
                body = self.shown(diff_shown(diff, self.cwd))
                parts.append(self._italic(f"Diff {DERIVED_NOTE}:") + "\n\n" + body)
        if call.raw_input is not None:
            if self.raw_fields and not self.markdown:
                shown = fields_text(portable(call.raw_input, self.cwd))
                parts.append(self.collapsed("Raw input", shown))
            else:
                parts.append(self.collapsed("Raw input", self._raw_json(call.raw_input)))
        return "\n\n".join(p for p in parts if p)

    def permission_line(self, request: Any) -> str:
        """ "Permission: Allow once (chosen by rule `allow read`)", then the risk rating in
        the same words as the prompt ("⚠️ Risky: deletes files recursively"); under it,
        for a command or a write, whether it runs confined, in the turn header's words
        ("🔒 confined to `project/` · network on")."""
        line = f"Permission: {request.describe()}"
        danger = getattr(request, "danger", None)
        if danger is not None:
            line += f" · {danger.label}"
        sandbox = getattr(request, "sandbox", "")
        if not sandbox:
            return self._prose(line)
        return self._prose(line) + ("\n\n" if self.markdown else "\n") + self._prose(sandbox)

    def terminal(self, shown: TerminalShown) -> str:
        if not shown.known:
            return f"[terminal {shown.terminal_id}]"
        output = shown.output
        lines = [f"$ {shown.command}\n"]
        if shown.dropped:
            lines.append("… (earlier output dropped)\n")
        lines.append(output if output.endswith("\n") or not output else output + "\n")
        if shown.status is not None:
            lines.append(f"[{shown.status}]\n")
        return fence("".join(lines), "console")

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
            parts = [f"🔗 {self._bold('Asked to open a URL')}{who}: {self._prose(request.message)}"]
            host = split_url(request.url or "")[1]
            parts.append(
                f"URL: {self._code(request.url or '')}"
                + (f" (host {self._bold(host)})" if host else "")
            )
        else:
            parts = [f"❓ {self._bold('Asked for input')}{who}: {self._prose(request.message)}"]
            if request.mode == "form":
                parts.append(
                    "\n".join(
                        f"- {self._prose(spec.title)} ({self._code(spec.name)}"
                        + (", required" if spec.required else "")
                        + f"): {self._prose(spec.describe())}"
                        for spec in request.fields
                    )
                )
            else:
                parts.append(
                    self.collapsed(
                        f"Unknown elicitation mode `{request.raw_mode}` (shown raw)",
                        self._raw_json(request.raw),
                    )
                )
        parts.append(f"→ {self._prose(request.outcome())}")
        return "\n\n".join(p for p in parts if p)

    # ------------------------------------------------------------------ plan

    def plan(self, entries: list[m.PlanEntry]) -> str:
        lines = [self._bold("Plan")]
        for entry in entries:
            mark = PLAN_MARKS.get(str(entry.status), "[ ]")
            text = agent_markdown(one_line(entry.content)) if self.markdown else entry.content
            if entry.status == "in_progress":
                text = self._bold(text) if self.markdown else f"{text} (in progress)"
            lines.append(f"- {mark} {text} ({entry.priority})")
        return "\n".join(lines)

    # ------------------------------------------------------------------ helpers

    def collapsed(self, summary: str, body: str) -> str:
        if self.markdown:
            # The margin keeps the next paragraph off a closed section (no margin by default).
            # The summary is HTML there: an agent's file name or kind cannot add markup.
            summary = summary_html(summary)
            return f'<details style="margin-bottom: 0.6em"><summary>{summary}</summary>\n\n{body}\n\n</details>'
        indented = "\n".join("  " + line for line in body.splitlines())
        return f"{summary}:\n{indented}"

    def _bold(self, text: str) -> str:
        return f"**{agent_markdown(one_line(text))}**" if self.markdown else text

    def _italic(self, text: str) -> str:
        return f"*{agent_markdown(one_line(text))}*" if self.markdown else text

    def _prose(self, text: str) -> str:
        """Agent text set as Markdown prose: no raw HTML, no unsafe link."""
        return agent_markdown(text) if self.markdown else text

    def _raw_json(self, value: Any) -> str:
        return fence(raw_json(value, self.cwd), "json")

    def _code(self, text: str) -> str:
        return code_span(text) if self.markdown else text

    def _text(self, text: str) -> str:
        """Agent text inside Markdown syntax, escaped (plain text stays as it is)."""
        return md_escape(text) if self.markdown else text


#: The Markdown (and plain-text) form of each entry kind (``entry_forms.py``).
MARKDOWN: EntryForm[Renderer, None, str] = EntryForm(
    "markdown",
    [
        row(MessageEntry, lambda r, e, _: r.message(e)),
        row(ToolCallEntry, lambda r, e, _: r.tool_call(e.tool_call)),
        row(PlanView, lambda r, e, _: r.plan(e.entries)),
        row(NoteEntry, lambda r, e, _: r._italic(e.text)),
        row(NoticeEntry, lambda r, e, _: r.notice(e)),
        row(CompactionEntry, lambda r, e, _: r.compaction(e)),
        row(UnknownEntry, lambda r, e, _: r.shown(RawShown("update", e.kind, e.raw))),
        row(ElicitationEntry, lambda r, e, _: r.elicitation(e)),
    ],
    fallback=lambda r, e, _: "",
)


def transcript_bundle(
    transcript: Transcript,
    record: TurnRecord,
    terminals: TerminalLookup | None = None,
    *,
    keep_ends: KeepEnds | None = None,
) -> dict[str, str]:
    """The display bundle of one turn: the same in a live cell's final state, a headless
    run and the CLI's output; ``keep_ends``: how much of a long text the Markdown keeps
    (all of it when None; the plain text keeps every text whole)."""
    markdown = Renderer(transcript, terminals=terminals, keep_ends=keep_ends)
    return {
        "text/markdown": markdown.turn(record),
        "text/plain": Renderer(transcript, terminals=terminals, markdown=False).turn(record),
    }
