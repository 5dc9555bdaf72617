"""What a transcript holds: the entries of the conversation, the turns and the usage.

The state types of :mod:`.transcript`, apart from the reducer that builds them, so a view
or a renderer reads what an entry is here without reading how updates change it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..protocol import models as m
from .formatting import first_line, human_bytes
from .sent import prompt_words
from .toolcall import ToolCallState

Role = Literal["user", "agent", "thought"]


#: Characters of one run of agent text kept from its beginning, and about how many from its
#: end, once it is longer than both (a run is one message's consecutive text chunks).
TEXT_RUN_HEAD = 2_000_000
TEXT_RUN_TAIL = 2_000_000


class TextRun:
    """Consecutive text chunks. Kept as parts and joined on demand: appending the
    thousands of chunks of a long reply stays linear.

    Bounded: past :data:`TEXT_RUN_HEAD` + 2 × :data:`TEXT_RUN_TAIL` characters, only the
    first :data:`TEXT_RUN_HEAD` and the last :data:`TEXT_RUN_TAIL` or so are kept, with a
    note in place of what was dropped (1 GB of agent text must not become gigabytes of
    client memory)."""

    __slots__ = ("_joined", "_size", "dropped", "head", "parts", "received")

    def __init__(self, text: str = "") -> None:
        self.parts = [text] if text else []
        self._joined: str | None = text
        self._size = len(text)
        #: Characters received in all (grows with every chunk, dropped ones included).
        self.received = len(text)
        #: Once something was dropped: the beginning kept; ``parts`` then hold the end.
        self.head: str | None = None
        #: Characters dropped between ``head`` and ``parts``.
        self.dropped = 0
        self._trim()

    def append(self, text: str) -> None:
        self.parts.append(text)
        self._joined = None
        size = len(text)
        self._size += size
        self.received += size
        if self._size > TEXT_RUN_TAIL * 2:  # the least _trim acts on (called per chunk)
            self._trim()

    def _trim(self) -> None:
        if self._size <= (
            TEXT_RUN_TAIL * 2 if self.head is not None else TEXT_RUN_HEAD + TEXT_RUN_TAIL * 2
        ):
            return
        rest = "".join(self.parts)
        if self.head is None:
            self.head, rest = rest[:TEXT_RUN_HEAD], rest[TEXT_RUN_HEAD:]
        self.dropped += len(rest) - TEXT_RUN_TAIL
        self.parts = [rest[-TEXT_RUN_TAIL:]]
        self._size = TEXT_RUN_TAIL
        self._joined = None

    def _note(self) -> str:
        return f"\n\n… {human_bytes(self.dropped)} of text dropped here, to bound memory …\n\n"

    @property
    def live_text(self) -> str:
        """What a live view shows: the text, or once some was dropped its beginning and the
        note (a prefix that only grows at its end, so the view never re-renders it all)."""
        if self.head is None:
            return self.text
        return self.head + self._note()

    @property
    def length(self) -> int:
        """``len(self.text)``, without joining it."""
        if self.head is None:
            return self._size
        return len(self.head) + len(self._note()) + self._size

    def text_from(self, start: int) -> str:
        """``self.text[start:]``, joining only the parts after ``start`` (a printer that
        follows a growing reply reads what arrived since it last wrote)."""
        before_parts = self.length - self._size  # the kept beginning and the note, if any
        if start < before_parts:
            return self.text[start:]
        need = self._size - (start - before_parts)
        if need <= 0:
            return ""
        taken: list[str] = []
        got = 0
        for part in reversed(self.parts):
            taken.append(part)
            got += len(part)
            if got >= need:
                break
        return "".join(reversed(taken))[got - need :]

    @property
    def text(self) -> str:
        if self._joined is None:
            tail = "".join(self.parts)
            self.parts = [tail]
            self._joined = tail if self.head is None else self.head + self._note() + tail
        return self._joined

    def __repr__(self) -> str:
        return f"TextRun({self.text!r})"


@dataclass
class MessageEntry:
    """A message: consecutive chunks of one role (and one ``messageId``)."""

    role: Role
    message_id: str | None
    turn: int | None
    #: Content in order; consecutive text chunks are merged into one :class:`TextRun`.
    items: list[TextRun | m.ContentBlock] = field(default_factory=list)

    def append(self, block: m.ContentBlock) -> None:
        if isinstance(block, m.TextContentBlock):
            self.append_text(block.text)
        else:
            self.items.append(block)

    def append_text(self, text: str) -> None:
        """Append a text block's text (consecutive text is one run)."""
        last = self.items[-1] if self.items else None
        if isinstance(last, TextRun):
            last.append(text)
        else:
            self.items.append(TextRun(text))

    @property
    def text(self) -> str:
        """All text joined (non-text blocks left out)."""
        return "".join(item.text for item in self.items if isinstance(item, TextRun))

    def text_from(self, start: int) -> str:
        """``self.text[start:]``, without joining the text before ``start``."""
        pieces: list[str] = []
        for item in self.items:
            if isinstance(item, TextRun):
                length = item.length
                if start >= length:
                    start -= length
                    continue
                pieces.append(item.text_from(start))
                start = 0
        return "".join(pieces)


@dataclass
class ToolCallEntry:
    tool_call: ToolCallState

    @property
    def turn(self) -> int | None:
        return self.tool_call.turn


@dataclass
class PlanView:
    """The plan as shown in one turn: spec: each `plan` update replaces it whole."""

    turn: int | None
    entries: list[m.PlanEntry]


@dataclass
class NoteEntry:
    """A line about a session change the agent announced (mode, title, config)."""

    turn: int | None
    text: str


@dataclass
class UnknownEntry:
    """An update this client does not know: kept raw, shown as collapsed JSON."""

    turn: int | None
    kind: str
    raw: dict[str, Any]


@dataclass
class ElicitationEntry:
    """The agent asked the user for input: the broker's
    :class:`~acp_notebook.client.elicitation.ElicitationRequest` (held by reference, so its
    outcome shows when it is decided). ``toolCallId`` scoped ones name their call."""

    turn: int | None
    request: Any


#: How a notice's severity reads (spec: a presentation hint; an unknown one is shown as sent).
NOTICE_SEVERITIES = {"info": "ℹ️ Notice", "warning": "⚠️ Warning", "error": "❌ Error"}


@dataclass
class NoticeEntry:
    """A `notice` update: fire-and-forget information for the user (plain text)."""

    turn: int | None
    severity: str
    title: str
    description: str | None = None

    @property
    def label(self) -> str:
        return NOTICE_SEVERITIES.get(self.severity, f"🔔 Notice ({self.severity})")


#: A compaction's heading per status (spec: `CompactionStatus`).
COMPACTION_HEADINGS = {
    "in_progress": "Compacting the context…",
    "completed": "Context compacted",
    "failed": "Context compaction failed",
    "cancelled": "Context compaction cancelled",
}


@dataclass
class CompactionEntry:
    """A context compaction, keyed by ``compactionId``: the first update places it, later
    ones patch it; its summary streams from `compaction_summary_chunk`."""

    turn: int | None
    compaction_id: str
    status: str = "in_progress"
    #: The summary's content (text chunks merged, as in a message).
    summary: MessageEntry = field(default_factory=lambda: MessageEntry("agent", None, None))
    error: str | None = None
    #: Incremented on every change (a live view redraws when it moves).
    version: int = 0

    @property
    def heading(self) -> str:
        words = COMPACTION_HEADINGS.get(self.status, f"Context compaction ({self.status})")
        return f"🗜️ {words}" + (f": {self.error}" if self.error else "")


Entry = (
    MessageEntry
    | ToolCallEntry
    | PlanView
    | NoteEntry
    | NoticeEntry
    | CompactionEntry
    | UnknownEntry
    | ElicitationEntry
)


@dataclass
class TurnRecord:
    """One prompt turn as the transcript knows it."""

    index: int
    prompt: list[m.ContentBlock]
    stop_reason: str | None = None
    error: str | None = None
    cancel_requested: bool = False
    #: The time limit (``-t``, seconds) that cancelled the turn, None when none did.
    timed_out_after: float | None = None
    #: `PromptResponse.usage` (unstable) when the agent sent it, raw.
    usage: dict[str, Any] | None = None
    #: The session title the agent announced during this turn (`session_info_update`).
    title: str | None = None

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None or self.error is not None

    @property
    def heading(self) -> str:
        """What this turn's header names it: the title the agent gave during it, else the
        first line of its prompt (each turn its own, never the first turn's again)."""
        return self.title or first_line(prompt_words(self.prompt))


@dataclass
class Usage:
    used: int | None
    size: int | None
    cost_amount: float | None = None
    cost_currency: str | None = None


#: Entries a transcript keeps (100,000 updates must not become 100,000 entries in the
#: kernel): past this, settled entries go, oldest first, each whole (a tool call goes with
#: everything its updates said). What may still change is always kept: unfinished tool
#: calls and those with a pending permission, running compactions, pending elicitations,
#: and the plan (``Transcript.plan``). The turns, the session state (mode, commands,
#: config, title, usage) and a text run's own bounds are not affected.
KEPT_ENTRIES = 1000


def settled(entry: Entry) -> bool:
    """Whether nothing the agent or the user does can change ``entry`` any more (so a
    bounded transcript may let it go)."""
    if isinstance(entry, ToolCallEntry):
        call = entry.tool_call
        return call.finished and not any(p.pending for p in call.permissions)
    if isinstance(entry, CompactionEntry):
        return entry.status != "in_progress"
    if isinstance(entry, ElicitationEntry):
        return not getattr(entry.request, "pending", False)
    return True


def not_kept_note(count: int) -> str:
    """The line every view of a turn shows where its first ``count`` entries were let go."""
    entries = "entry" if count == 1 else "entries"
    return (
        f"{count:,} earlier {entries} of this turn (messages, tool calls, notes) not kept: "
        f"a session keeps its last {KEPT_ENTRIES:,}."
    )
