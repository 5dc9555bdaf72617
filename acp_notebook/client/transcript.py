"""The transcript of a session: a reducer from `session/update` to state.

Everything the notebook shows and saves, and everything the CLI prints, is read from
here; views never look at protocol messages themselves. ``apply`` is pure state
change (no I/O, no clock): the same updates always give the same transcript.

What the state holds:

* ``entries`` — the conversation in order: messages (user, agent, thought; chunks
  grouped by ``messageId`` when the agent sends one), tool calls (by reference, so a
  later ``tool_call_update`` changes the entry in place), plans, notes about mode or
  title changes, notices, compactions (by id, so later updates patch the entry in
  place), and updates this client does not know (kept raw, never dropped);
* session state that updates replace: available commands, current mode, config
  options, title, usage;
* ``turns`` — the prompt turns, each with its stop reason, so one turn can be
  rendered on its own (a notebook cell shows one turn).

Lists held by state objects (a tool call's ``content`` and ``locations``, a plan's
entries) are replaced, never mutated in place, so views can tell what changed by
identity; text grows only by appending to a :class:`TextRun`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..protocol import models as m
from .formatting import human_bytes
from .toolcall import CANCELLED, ToolCallState

if TYPE_CHECKING:
    from .permissions import PermissionRequest

log = logging.getLogger(__name__)

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
        self._size += len(text)
        self.received += len(text)
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
            last = self.items[-1] if self.items else None
            if isinstance(last, TextRun):
                last.append(block.text)
            else:
                self.items.append(TextRun(block.text))
        else:
            self.items.append(block)

    @property
    def text(self) -> str:
        """All text joined (non-text blocks left out)."""
        return "".join(item.text for item in self.items if isinstance(item, TextRun))


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
    #: `PromptResponse.usage` (unstable) when the agent sent it, raw.
    usage: dict[str, Any] | None = None

    @property
    def finished(self) -> bool:
        return self.stop_reason is not None or self.error is not None


@dataclass
class Usage:
    used: int | None
    size: int | None
    cost_amount: float | None = None
    cost_currency: str | None = None


class Transcript:
    """State of one session, built by applying its updates in arrival order."""

    def __init__(self, cwd: str | None = None) -> None:
        #: Paths under ``cwd`` are shown relative to it (saved notebooks stay portable).
        self.cwd = cwd
        self.entries: list[Entry] = []
        self.tool_calls: dict[str, ToolCallState] = {}
        self.compactions: dict[str, CompactionEntry] = {}
        self.turns: list[TurnRecord] = []
        self.plan: list[m.PlanEntry] = []
        self.commands: list[m.AvailableCommand] = []
        self.current_mode_id: str | None = None
        self.modes: list[m.SessionMode] = []
        self.config_options: list[m.SessionConfigOption] = []
        self.title: str | None = None
        self.updated_at: str | None = None
        self.usage: Usage | None = None
        #: Incremented on every change; views compare it to know whether to redraw.
        self.version = 0
        self._active_turn: int | None = None
        self._listeners: list[Callable[[Transcript], None]] = []

    # ------------------------------------------------------------------ listening

    def subscribe(self, listener: Callable[[Transcript], None]) -> Callable[[], None]:
        """Call ``listener(self)`` after every change; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def changed(self) -> None:
        self.version += 1
        for listener in list(self._listeners):
            try:
                listener(self)
            except Exception:
                log.exception("transcript listener failed")

    # ------------------------------------------------------------------ turns

    @property
    def current_turn(self) -> int | None:
        """The turn updates belong to: the running one, else the last one (late updates)."""
        if self._active_turn is not None:
            return self._active_turn
        return self.turns[-1].index if self.turns else None

    def begin_turn(self, prompt: list[m.ContentBlock]) -> TurnRecord:
        record = TurnRecord(len(self.turns), list(prompt))
        self.turns.append(record)
        self._active_turn = record.index
        user = MessageEntry("user", None, record.index)
        for block in prompt:
            user.append(block)
        self.entries.append(user)
        self.changed()
        return record

    def end_turn(
        self, record: TurnRecord, *, stop_reason: str | None = None, error: str | None = None
    ) -> None:
        record.stop_reason = stop_reason
        record.error = error
        if self._active_turn == record.index:
            self._active_turn = None
        if stop_reason != "end_turn" or record.cancel_requested:
            # Cancelled, refused, failed, out of tokens: whatever was still running is not
            # going to finish (v1 has no such tool call status; this one is client-local).
            self.mark_unfinished_cancelled(record.index)
        self.changed()

    def mark_unfinished_cancelled(self, turn: int | None) -> None:
        """spec: on cancel, the client marks the turn's unfinished tool calls cancelled."""
        for call in self.tool_calls.values():
            if call.turn == turn and not call.finished:
                call.status = CANCELLED

    def add_note(self, text: str) -> NoteEntry:
        """A line from the client itself in the current turn (what a turn changed)."""
        note = NoteEntry(self.current_turn, text)
        self.entries.append(note)
        self.changed()
        return note

    def entries_of(self, turn: int | None) -> list[Entry]:
        return [e for e in self.entries if e.turn == turn]

    # ------------------------------------------------------------------ updates

    def apply(self, update: m.SessionUpdate) -> None:
        """Apply one `session/update` (already parsed leniently)."""
        turn = self.current_turn
        if isinstance(update, (m.AgentMessageChunk, m.AgentThoughtChunk, m.UserMessageChunk)):
            self._apply_chunk(update, turn)
        elif isinstance(update, m.ToolCallStart):
            self._tool_call(update.tool_call_id, turn).merge(update)
        elif isinstance(update, m.ToolCallProgress):
            # Tolerated: an update for an unknown id creates the call.
            self._tool_call(update.tool_call_id, turn).merge(update)
        elif isinstance(update, m.AgentPlanUpdate):
            self.plan = list(update.entries)
            view = next(
                (e for e in self.entries if isinstance(e, PlanView) and e.turn == turn), None
            )
            if view is None:
                self.entries.append(PlanView(turn, self.plan))
            else:
                view.entries = self.plan
        elif isinstance(update, m.AvailableCommandsUpdate):
            self.commands = list(update.available_commands)
        elif isinstance(update, m.CurrentModeUpdate):
            if update.current_mode_id != self.current_mode_id:
                self.current_mode_id = update.current_mode_id
                self.entries.append(
                    NoteEntry(turn, f"Mode changed to {self.mode_name(update.current_mode_id)}.")
                )
        elif isinstance(update, m.ConfigOptionUpdate):
            self._set_config_options(update.config_options, turn, announce=True)
        elif isinstance(update, m.SessionInfoUpdate):
            present = update.model_fields_set
            if "title" in present and update.title != self.title:
                self.title = update.title  # null clears
                self.entries.append(
                    NoteEntry(
                        turn,
                        f"Session title: {update.title}."
                        if update.title
                        else "Session title cleared.",
                    )
                )
            if "updated_at" in present:
                self.updated_at = update.updated_at
        elif isinstance(update, m.Notice):
            self.entries.append(
                NoticeEntry(turn, str(update.severity), update.title, update.description)
            )
        elif isinstance(update, m.CompactionUpdate):
            entry = self._compaction(update.compaction_id, turn)
            present = update.model_fields_set
            entry.status = str(update.status)
            if "summary" in present and update.summary is not None:
                entry.summary = MessageEntry("agent", None, entry.turn)  # spec: replaces it
                for block in update.summary:
                    entry.summary.append(block)
            if "error" in present:
                entry.error = update.error
            entry.version += 1
        elif isinstance(update, m.CompactionSummaryChunk):
            # spec: a first-seen ID creates an in-progress compaction; chunks append.
            entry = self._compaction(update.compaction_id, turn)
            entry.summary.append(update.content)
            entry.version += 1
        elif isinstance(update, m.UsageUpdate):
            cost = update.cost
            self.usage = Usage(
                update.used,
                update.size,
                cost.amount if cost else None,
                cost.currency if cost else None,
            )
        else:
            raw = update.to_wire() if hasattr(update, "to_wire") else {"value": repr(update)}
            kind = raw.get("sessionUpdate") if isinstance(raw, dict) else None
            self.entries.append(UnknownEntry(turn, kind if isinstance(kind, str) else "?", raw))
        self.changed()

    def _apply_chunk(
        self,
        update: m.AgentMessageChunk | m.AgentThoughtChunk | m.UserMessageChunk,
        turn: int | None,
    ) -> None:
        role: Role = (
            "agent"
            if isinstance(update, m.AgentMessageChunk)
            else "thought"
            if isinstance(update, m.AgentThoughtChunk)
            else "user"
        )
        last = self.entries[-1] if self.entries else None
        # spec: the same messageId is the same message; a changed id starts a new one.
        if not (
            isinstance(last, MessageEntry)
            and last.role == role
            and last.turn == turn
            and (update.message_id is None or last.message_id in (None, update.message_id))
        ):
            last = MessageEntry(role, update.message_id, turn)
            self.entries.append(last)
        elif update.message_id is not None:
            last.message_id = update.message_id
        last.append(update.content)

    def _tool_call(self, tool_call_id: str, turn: int | None) -> ToolCallState:
        call = self.tool_calls.get(tool_call_id)
        if call is None:
            call = ToolCallState(tool_call_id, turn)
            self.tool_calls[tool_call_id] = call
            self.entries.append(ToolCallEntry(call))
        return call

    def _compaction(self, compaction_id: str, turn: int | None) -> CompactionEntry:
        entry = self.compactions.get(compaction_id)
        if entry is None:
            entry = CompactionEntry(turn, compaction_id)
            entry.summary.turn = turn
            self.compactions[compaction_id] = entry
            self.entries.append(entry)
        return entry

    def merge_permission_tool_call(
        self, tool_call: m.ToolCallUpdate, request: PermissionRequest
    ) -> ToolCallState:
        """spec: a permission request's `toolCall` merges into the call with that id
        (created if unseen); the request is kept on the call. Views are not told yet:
        :meth:`PermissionBroker.receive` does, once the request has its risk rating."""
        call = self._tool_call(tool_call.tool_call_id, self.current_turn)
        call.merge(tool_call)
        if request not in call.permissions:
            call.permissions.append(request)
        return call

    def add_elicitation(self, request: Any) -> ElicitationEntry:
        """An elicitation of the agent, shown in the turn where it arrived."""
        entry = ElicitationEntry(self.current_turn, request)
        self.entries.append(entry)
        self.changed()
        return entry

    # ------------------------------------------------------------------ session state

    def set_modes(self, modes: m.SessionModeState | None) -> None:
        if modes is not None:
            self.modes = list(modes.available_modes)
            self.current_mode_id = modes.current_mode_id
            self.changed()

    def set_config_options(self, options: Iterable[m.SessionConfigOption] | None) -> None:
        if options is not None:
            self._set_config_options(list(options), self.current_turn, announce=False)
            self.changed()

    def _set_config_options(
        self, options: list[m.SessionConfigOption], turn: int | None, *, announce: bool
    ) -> None:
        before = {
            getattr(o, "id", None): getattr(o, "current_value", None) for o in self.config_options
        }
        self.config_options = options
        if not announce:
            return
        for option in self.known_config_options:
            if option.id in before and before[option.id] != option.current_value:
                self.entries.append(
                    NoteEntry(turn, f"{option.name} changed to {self.config_value_name(option)}.")
                )

    @property
    def known_config_options(
        self,
    ) -> list[m.SessionConfigOptionSelect | m.SessionConfigOptionBoolean]:
        """Config options of a known type (spec: ignore those with an unrecognised type)."""
        return [
            o
            for o in self.config_options
            if isinstance(o, (m.SessionConfigOptionSelect, m.SessionConfigOptionBoolean))
        ]

    def mode_name(self, mode_id: str | None) -> str:
        for mode in self.modes:
            if mode.id == mode_id:
                return mode.name
        return str(mode_id)

    @staticmethod
    def config_value_name(option: m.SessionConfigOption) -> str:
        value = getattr(option, "current_value", None)
        if isinstance(option, m.SessionConfigOptionSelect):
            for choice in select_choices(option):
                if choice.value == value:
                    return choice.name
        if isinstance(value, bool):
            return "on" if value else "off"
        return str(value)


def select_choices(option: m.SessionConfigOptionSelect) -> list[m.SessionConfigSelectOption]:
    """The values of a select option, flattened out of groups."""
    choices: list[m.SessionConfigSelectOption] = []
    for item in option.options:
        if isinstance(item, m.SessionConfigSelectGroup):
            choices.extend(item.options)
        elif isinstance(item, m.SessionConfigSelectOption):
            choices.append(item)
    return choices
