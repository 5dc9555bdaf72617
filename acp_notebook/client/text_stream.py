"""A turn as plain text, written as it happens: the reply's text chunk by chunk as it
arrives; a tool call one line when it starts and its outcome (with its diffs and terminal
output) when it finishes; the plan when it changes. It is the plain
:class:`~.render.Renderer`'s text, never HTML nor ``<details>``; ANSI styles (Pygments'
console codes, and its terminal formatter for diffs and terminal output) only when asked.

Written on a terminal by ``acp-notebook run`` (``cli/``) and into a cell's stdout by a
frontend without widgets (``notebook/view/plain.py``: ``jupyter console``, qtconsole).

The plan: on a terminal (``live_plan``) it is one block kept at the bottom of the screen
and redrawn in place as it changes (:mod:`.bottom_block`), left where it is when the turn
ends or a question is asked; anywhere else (a pipe, a log, a cell) output cannot be
rewritten, so a plan is printed whole each time it changed, never again unchanged.
A tool call's raw input is its fields, one ``key: value`` line each (long values cut),
not JSON.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from pygments import highlight
from pygments.console import colorize
from pygments.formatters import TerminalFormatter
from pygments.lexers import BashSessionLexer, DiffLexer, get_lexer_by_name
from pygments.util import ClassNotFound

from .bottom_block import BottomBlock, terminal_size
from .display import rejected_by, status_text
from .entry_forms import EntryForm, row
from .render import Renderer
from .session import Session
from .toolcall import CANCELLED
from .transcript import (
    CompactionEntry,
    ElicitationEntry,
    Entry,
    MessageEntry,
    NoteEntry,
    NoticeEntry,
    PlanView,
    ToolCallEntry,
    Transcript,
    TurnRecord,
    UnknownEntry,
)

__all__ = ["TextPrinter", "Writer"]


class Writer(Protocol):
    """Where the text goes: a terminal's stdout, or a cell's (``notebook/view/plain.py``)."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


#: Tool call statuses after which it does not change any more.
_FINAL = frozenset({"completed", "failed", CANCELLED})

#: A fenced block, maybe indented (inside a collapsed section): indent, language, body.
_FENCE = re.compile(r"^([ \t]*)```([\w+-]*)\n(.*?)^\1```$", re.MULTILINE | re.DOTALL)


@dataclass
class _Seen:
    """What has been printed of one entry."""

    text: int = 0
    status: str | None = None
    plan: list[tuple[str, str]] = field(default_factory=list)


class TextPrinter:
    """Prints the entries of one turn of ``session`` to ``out`` as they change.

    Call :meth:`follow` before the prompt is sent; it subscribes to the transcript and
    prints from the loop thread, in the order things happen.
    """

    def __init__(
        self, session: Session, out: Writer, *, color: bool, live_plan: bool = False
    ) -> None:
        self.session = session
        self.out = out
        self.color = color
        self.renderer = Renderer(
            session.transcript, terminals=session.terminal_view, markdown=False, raw_fields=True
        )
        #: The plan at the bottom of a terminal (``live_plan``); None: printed as it changes.
        self._bottom: BottomBlock | None = None
        if live_plan:
            # The printer's own cursor movements, past the terminal-safe stream's escaping
            # (cli/output.py), which agent text never takes.
            control = getattr(out, "write_control", None) or self._emit
            self._bottom = BottomBlock(self._emit, control, terminal_size(_fileno(out)))
        #: By id(entry), the entry held so its id stays its own (the transcript lets entries
        #: go, so a position would not name the same entry twice).
        self._seen: dict[int, tuple[Entry, _Seen]] = {}
        self._turn: int | None = None
        #: Whether the last thing written ended its line.
        self._at_line_start = True
        self._unsubscribe = session.transcript.subscribe(self._changed)

    def close(self) -> None:
        self.settle()
        self._unsubscribe()

    def settle(self) -> None:
        """Leave the plan drawn at the bottom where it is (before a question is asked on
        the terminal, and when the turn ends)."""
        if self._bottom is not None:
            self._bottom.settle(self._at_line_start)

    # ------------------------------------------------------------------ styles

    def _style(self, style: str, text: str) -> str:
        return colorize(style, text) if self.color and text else text

    def _code(self, text: str, lexer_name: str) -> str:
        """A fenced block's body, highlighted for a terminal."""
        if not self.color:
            return text
        try:
            lexer = (
                DiffLexer()
                if lexer_name == "diff"
                else BashSessionLexer()
                if lexer_name == "console"
                else get_lexer_by_name(lexer_name)
            )
        except ClassNotFound:
            return text
        return highlight(text, lexer, TerminalFormatter()).rstrip("\n") + "\n"

    def _blocks(self, text: str) -> str:
        """Plain text whose ``` fences are shown as highlighted, indented blocks."""

        def block(match: re.Match[str]) -> str:
            indent = match.group(1)
            lines = match.group(3).splitlines(keepends=True)
            body = self._code("".join(line.removeprefix(indent) for line in lines), match.group(2))
            return "".join(indent + "  " + line for line in body.splitlines(keepends=True)).rstrip(
                "\n"
            )

        return _FENCE.sub(block, text)

    # ------------------------------------------------------------------ writing

    def _write(self, text: str) -> None:
        if not text:
            return
        if self._bottom is None:
            self._emit(text)
            return
        self._bottom.erase()
        self._emit(text)
        self._bottom.written(self._at_line_start)

    def _emit(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
        self._at_line_start = text.endswith("\n")

    def _line(self, text: str) -> None:
        """``text`` on lines of its own."""
        self._write(("" if self._at_line_start else "\n") + text.rstrip("\n") + "\n")

    # ------------------------------------------------------------------ following

    def _changed(self, transcript: Transcript) -> None:
        turn = transcript.current_turn
        if turn is None:
            return
        if turn != self._turn:
            self._turn, self._seen = turn, {}
        entries = transcript.entries_of(turn)
        if len(self._seen) > len(entries):  # some were let go of
            kept = {id(e) for e in entries}
            self._seen = {key: pair for key, pair in self._seen.items() if key in kept}
        # Notes after the message still being written wait for its end, as the
        # transcript keeps them after it: printed now, they would split its text.
        open_message = transcript.open_message
        for entry in entries:
            if entry is open_message:
                self._message(entry, self._seen.setdefault(id(entry), (entry, _Seen()))[1])
                break
            TEXT(self, entry, self._seen.setdefault(id(entry), (entry, _Seen()))[1])

    def _once(self, entry: object, seen: _Seen) -> None:
        """An entry that does not grow: its Markdown, printed once."""
        if seen.status is None:
            seen.status = "shown"
            self._line(self._blocks(self.renderer.entry(entry)))

    def _compaction(self, entry: CompactionEntry, seen: _Seen) -> None:
        if entry.status != "in_progress":  # printed once settled, with its whole summary
            self._once(entry, seen)

    def _message(self, entry: MessageEntry, seen: _Seen) -> None:
        if entry.role == "user":
            return
        new = entry.text_from(seen.text)
        if not new:
            return
        if seen.text == 0:
            if not self._at_line_start:
                self._write("\n")
            if entry.role == "thought":
                self._write(self._style("faint", "💭 "))
        seen.text += len(new)
        self._write(self._style("faint", new) if entry.role == "thought" else new)

    def _tool_call(self, entry: ToolCallEntry, seen: _Seen) -> None:
        call = entry.tool_call
        title = call.shown_title or call.tool_call_id
        if seen.status is None:
            self._line(
                f"{self._style('bold', '▶ ' + title)} {self._style('faint', f'· {call.kind}')}"
            )
        if call.status in _FINAL and seen.status not in _FINAL:
            failed = call.status == "failed" and rejected_by(call) is None
            outcome = self._style("red" if failed else "green", f"{status_text(call)} · {title}")

            body = self.renderer.tool_call(call).split("\n\n", 1)
            details = self._blocks(body[1]) if len(body) > 1 else ""
            self._line(outcome + ("\n" + _indent(details) if details else ""))
        seen.status = call.status

    def _plan(self, entry: PlanView, seen: _Seen) -> None:
        now = [(e.content, str(e.status)) for e in entry.entries]
        if now == seen.plan:
            return
        seen.plan = now
        text = self._style("bold", "Plan") + self.renderer.plan(entry.entries)[len("Plan") :]
        if self._bottom is not None:
            self._bottom.show(text, self._at_line_start)
        else:
            self._line(text)

    def footer(self, record: TurnRecord) -> None:
        """How the turn ended, and what it used."""
        self.settle()
        stop = self.renderer.turn_footer(record)
        self._line("")
        self._line(self._style("red" if record.error is not None else "faint", stop))


#: The streamed text form of each entry kind (``entry_forms.py``): a message, a tool call
#: and the plan as they grow; the others once, as Markdown.
TEXT: EntryForm[TextPrinter, _Seen, None] = EntryForm(
    "text",
    [
        row(MessageEntry, TextPrinter._message),
        row(ToolCallEntry, TextPrinter._tool_call),
        row(PlanView, TextPrinter._plan),
        row(NoteEntry, TextPrinter._once),
        row(NoticeEntry, TextPrinter._once),
        row(CompactionEntry, TextPrinter._compaction),
        row(UnknownEntry, TextPrinter._once),
        row(ElicitationEntry, TextPrinter._once),
    ],
    fallback=TextPrinter._once,
)


def _fileno(out: Writer) -> Callable[[], int] | None:
    fileno = getattr(out, "fileno", None)
    return fileno if callable(fileno) else None


def _indent(text: str) -> str:
    return "\n".join("  " + line if line else line for line in text.splitlines())
