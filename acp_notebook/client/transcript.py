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

import json
import logging
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..protocol import models as m
from ..protocol.text_chunk import TextChunk
from .entries import (  # noqa: F401  (re-exported: the transcript's state types)
    COMPACTION_HEADINGS,
    KEPT_ENTRIES,
    NOTICE_SEVERITIES,
    TEXT_RUN_HEAD,
    TEXT_RUN_TAIL,
    CompactionEntry,
    ElicitationEntry,
    Entry,
    MessageEntry,
    NoteEntry,
    NoticeEntry,
    PlanView,
    Role,
    TextRun,
    ToolCallEntry,
    TurnRecord,
    UnknownEntry,
    Usage,
    not_kept_note,
    settled,
)
from .toolcall import CANCELLED, ToolCallState

#: Whose message a chunk extends, by its `sessionUpdate`.
_ROLES: dict[str, Role] = {
    "agent_message_chunk": "agent",
    "agent_thought_chunk": "thought",
    "user_message_chunk": "user",
}

if TYPE_CHECKING:
    from .permission_request import PermissionRequest

log = logging.getLogger(__name__)


class Transcript:
    """State of one session, built by applying its updates in arrival order."""

    def __init__(self, cwd: str | None = None) -> None:
        #: Paths under ``cwd`` are shown relative to it (saved notebooks stay portable).
        self.cwd = cwd
        #: Whether the operating system confines the agent (set by its session): its tool
        #: calls are made knowing it (``ToolCallState.sandbox_refused``).
        self.confined = False
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
        #: Entries let go of (see :data:`KEPT_ENTRIES`), by turn.
        self.not_kept: dict[int | None, int] = {}
        self._not_kept_total = 0
        self.keep = KEPT_ENTRIES
        #: The entries holding each turn's prompt (kept: the user's own words head the turn).
        self._prompt_entries: set[int] = set()
        self._active_turn: int | None = None
        self._listeners: list[Callable[[Transcript], None]] = []

    # ------------------------------------------------------------------ listening

    def subscribe(self, listener: Callable[[Transcript], None]) -> Callable[[], None]:
        """Call ``listener(self)`` after every change; returns an unsubscribe function."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def changed(self) -> None:
        if len(self.entries) > self.keep + self.keep // 4:  # in batches: amortised O(1)
            self._let_go()
        self.version += 1
        if not self._listeners:  # the CLI's Markdown run: no copy per streamed chunk
            return
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
        self._prompt_entries.add(id(user))
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

    def reject_running_call(self, by: str, mentions: str | None = None) -> ToolCallState | None:
        """The client rejected what a running tool call of this turn asked (a cell edit
        the user rejected where it was shown): that call reads "rejected by ``by``" once it
        ends, failed or not. The call is the running one whose raw input names
        ``mentions`` (a cell id) if any does, else the latest running one."""
        turn = self.current_turn
        running = [
            c
            for c in self.tool_calls.values()
            if c.turn == turn and c.status in ("pending", "in_progress")
        ]
        if mentions:
            named = [c for c in running if mentions in json.dumps(c.raw_input, default=str)]
            running = named or running
        if not running:
            return None
        call = running[-1]
        call.client_rejection = by
        self.changed()
        return call

    def entries_of(self, turn: int | None) -> list[Entry]:
        return [e for e in self.entries if e.turn == turn]

    # ------------------------------------------------------------------ bounds

    @property
    def appended(self) -> int:
        """Entries added so far, the ones let go of included (a mark for :meth:`entries_since`)."""
        return len(self.entries) + self._not_kept_total

    def entries_since(self, mark: int) -> list[Entry]:
        """The kept entries added after :attr:`appended` was ``mark``; when more were added
        than are kept, older kept ones come first too (a caller skips those it has)."""
        count = self.appended - mark
        if count <= 0:
            return []
        return self.entries[-count:] if count < len(self.entries) else list(self.entries)

    def not_kept_note(self, turn: int | None) -> str:
        """The line a view of ``turn`` shows when some of its entries were let go ("" if none)."""
        count = self.not_kept.get(turn, 0)
        return not_kept_note(count) if count else ""

    def _let_go(self) -> None:
        """Keep the last :attr:`keep` entries, letting the oldest settled ones go whole (never
        the last one nor the message chunks may still extend; never a turn's prompt or the
        plan)."""
        excess = len(self.entries) - self.keep
        kept: list[Entry] = []
        open_entry = self.entries[self._open_tail()]
        for entry in self.entries[:-1]:
            if (
                excess > 0
                and settled(entry)
                and entry is not open_entry
                and id(entry) not in self._prompt_entries
                and not (isinstance(entry, PlanView) and entry.entries is self.plan)
            ):
                excess -= 1
                self.not_kept[entry.turn] = self.not_kept.get(entry.turn, 0) + 1
                self._not_kept_total += 1
                if isinstance(entry, ToolCallEntry):
                    self.tool_calls.pop(entry.tool_call.tool_call_id, None)
                elif isinstance(entry, CompactionEntry):
                    self.compactions.pop(entry.compaction_id, None)
            else:
                kept.append(entry)
        self.entries[:-1] = kept

    # ------------------------------------------------------------------ updates

    def apply(self, update: m.SessionUpdate) -> None:
        """Apply one `session/update` (already parsed leniently)."""
        # By the variant's tag, not by isinstance: testing against each variant class would
        # make every one of them (the models are made on first use), most never seen.
        apply = _APPLY.get(getattr(type(update), "__acp_tag__", None) or "")
        if apply is None:
            self._apply_unknown(update, self.current_turn)
        else:
            apply(self, update, self.current_turn)
        self.changed()

    def _apply_tool_call(
        self, update: m.ToolCallStart | m.ToolCallProgress, turn: int | None
    ) -> None:
        # Tolerated: an update for an unknown id creates the call.
        self._tool_call(update.tool_call_id, turn).merge(update)

    def _apply_plan(self, update: m.AgentPlanUpdate, turn: int | None) -> None:
        self.plan = list(update.entries)
        view = next((e for e in self.entries if isinstance(e, PlanView) and e.turn == turn), None)
        if view is None:
            self.entries.append(PlanView(turn, self.plan))
        else:
            view.entries = self.plan

    def _apply_commands(self, update: m.AvailableCommandsUpdate, turn: int | None) -> None:
        self.commands = list(update.available_commands)

    def _apply_mode(self, update: m.CurrentModeUpdate, turn: int | None) -> None:
        if update.current_mode_id != self.current_mode_id:
            self.current_mode_id = update.current_mode_id
            self._announce(turn, f"Mode changed to {self.mode_name(update.current_mode_id)}.")

    def _announce(self, turn: int | None, text: str) -> None:
        """A note of a change the agent announced, unless it repeats the note just before:
        an agent whose modes are also a config option (spec: the `mode` category) sends
        `current_mode_update` and `config_option_update` for one change, which read the same
        ("Mode changed to Code.")."""
        note = NoteEntry(turn, text)
        if not (self.entries and self.entries[-1] == note):
            self.entries.append(note)

    def _apply_config_options(self, update: m.ConfigOptionUpdate, turn: int | None) -> None:
        self._set_config_options(update.config_options, turn, announce=True)

    def _apply_session_info(self, update: m.SessionInfoUpdate, turn: int | None) -> None:
        present = update.model_fields_set
        if "title" in present and turn is not None and turn < len(self.turns):
            self.turns[turn].title = update.title
        if "title" in present and update.title != self.title:
            self.title = update.title  # null clears
            self.entries.append(
                NoteEntry(
                    turn,
                    f"Session title: {update.title}." if update.title else "Session title cleared.",
                )
            )
        if "updated_at" in present:
            self.updated_at = update.updated_at

    def _apply_notice(self, update: m.Notice, turn: int | None) -> None:
        self.entries.append(
            NoticeEntry(turn, str(update.severity), update.title, update.description)
        )

    def _apply_compaction(self, update: m.CompactionUpdate, turn: int | None) -> None:
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

    def _apply_compaction_chunk(self, update: m.CompactionSummaryChunk, turn: int | None) -> None:
        # spec: a first-seen ID creates an in-progress compaction; chunks append.
        entry = self._compaction(update.compaction_id, turn)
        entry.summary.append(update.content)
        entry.version += 1

    def _apply_usage(self, update: m.UsageUpdate, turn: int | None) -> None:
        cost = update.cost
        self.usage = Usage(
            update.used,
            update.size,
            cost.amount if cost else None,
            cost.currency if cost else None,
        )

    def _apply_unknown(self, update: Any, turn: int | None) -> None:
        raw = update.to_wire() if hasattr(update, "to_wire") else {"value": repr(update)}
        kind = raw.get("sessionUpdate") if isinstance(raw, dict) else None
        self.entries.append(UnknownEntry(turn, kind if isinstance(kind, str) else "?", raw))

    def apply_text_chunk(self, chunk: TextChunk) -> None:
        """Apply a text chunk read without the models (:mod:`~acp_notebook.protocol.text_chunk`):
        the same change as :meth:`apply` of the chunk's model."""
        self._message(
            _ROLES[chunk.session_update], chunk.message_id, self.current_turn
        ).append_text(chunk.text)
        self.changed()

    def _apply_chunk(
        self,
        update: m.AgentMessageChunk | m.AgentThoughtChunk | m.UserMessageChunk,
        turn: int | None,
    ) -> None:
        self._message(_ROLES[update.session_update], update.message_id, turn).append(
            update.content
        )

    def _open_tail(self) -> int:
        """The index of the entry chunks may still extend: the last one, or the message
        the notes after it followed (-1 for none). A note (a title, a mode) arriving
        between two chunks of a message goes after that message, never into it."""
        index = len(self.entries) - 1
        while index > 0 and isinstance(self.entries[index], NoteEntry):
            index -= 1
        return index

    @property
    def open_message(self) -> MessageEntry | None:
        """The message of the running turn its next chunk would extend, notes after it
        or not (None between turns or after anything else)."""
        if self._active_turn is None or not self.entries:
            return None
        entry = self.entries[self._open_tail()]
        if isinstance(entry, MessageEntry) and entry.turn == self._active_turn:
            return entry
        return None

    def _message(self, role: Role, message_id: str | None, turn: int | None) -> MessageEntry:
        """The message a chunk of ``role`` extends (the last entry, or the one the notes
        after it followed), or a new one."""
        last = self.entries[self._open_tail()] if self.entries else None
        # spec: the same messageId is the same message; a changed id starts a new one.
        if not (
            isinstance(last, MessageEntry)
            and last.role == role
            and last.turn == turn
            and (message_id is None or last.message_id in (None, message_id))
        ):
            last = MessageEntry(role, message_id, turn)
            self.entries.append(last)
        elif message_id is not None:
            last.message_id = message_id
        return last

    def _tool_call(self, tool_call_id: str, turn: int | None) -> ToolCallState:
        call = self.tool_calls.get(tool_call_id)
        if call is None:
            call = ToolCallState(tool_call_id, turn, confined=self.confined)
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
                self._announce(turn, f"{option.name} changed to {self.config_value_name(option)}.")

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


#: What :meth:`Transcript.apply` does with each `sessionUpdate` (the variant's tag);
#: any other (``UnknownSessionUpdate``) is kept raw.
_APPLY: dict[str, Callable[[Transcript, Any, int | None], None]] = {
    "user_message_chunk": Transcript._apply_chunk,
    "agent_message_chunk": Transcript._apply_chunk,
    "agent_thought_chunk": Transcript._apply_chunk,
    "tool_call": Transcript._apply_tool_call,
    "tool_call_update": Transcript._apply_tool_call,
    "plan": Transcript._apply_plan,
    "available_commands_update": Transcript._apply_commands,
    "current_mode_update": Transcript._apply_mode,
    "config_option_update": Transcript._apply_config_options,
    "session_info_update": Transcript._apply_session_info,
    "notice": Transcript._apply_notice,
    "compaction_update": Transcript._apply_compaction,
    "compaction_summary_chunk": Transcript._apply_compaction_chunk,
    "usage_update": Transcript._apply_usage,
}


def select_choices(option: m.SessionConfigOptionSelect) -> list[m.SessionConfigSelectOption]:
    """The values of a select option, flattened out of groups."""
    choices: list[m.SessionConfigSelectOption] = []
    for item in option.options:
        if isinstance(item, m.SessionConfigSelectGroup):
            choices.extend(item.options)
        elif isinstance(item, m.SessionConfigSelectOption):
            choices.append(item)
    return choices
