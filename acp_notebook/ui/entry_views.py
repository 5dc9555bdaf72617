"""The views of one turn's entries, in order, following a transcript that keeps only its
last entries (``client/entries.py``, ``KEPT_ENTRIES``): an entry gets its view when it
arrives and loses it (its widgets closed) when the transcript lets it go, and one line above
them says how many were not kept. So a turn of 100,000 updates holds about as many widgets
in the kernel as one of 1,000."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import ipywidgets as w

from ..client.display import RawShown
from ..client.entries import (
    CompactionEntry,
    ElicitationEntry,
    Entry,
    MessageEntry,
    NoteEntry,
    NoticeEntry,
    PlanView,
    ToolCallEntry,
    TurnRecord,
    UnknownEntry,
)
from ..client.entry_forms import EntryForm, row
from ..client.sent import sent_items
from ..client.transcript import Transcript
from ..protocol import models as m
from .content import raw_html
from .context import SessionLike, ViewContext
from .elicitation import ElicitationForm
from .message import CompactionView, MessageView, PromptView, ThoughtView
from .message_html import note_html
from .notices import notice_html
from .plan import plan_html
from .segments import AppendOnlyBox, close_tree, flat_html
from .toolcall import ToolCallCard


class ChildView(Protocol):
    """What the turn needs of each entry's view."""

    widget: w.Widget

    def refresh(self, active: bool = False) -> bool: ...


class PlanWidget:
    """One turn's plan; :meth:`refresh` redraws it when the agent sent a new one."""

    def __init__(self, plan: PlanView) -> None:
        self.plan = plan
        self.widget = flat_html()
        self._shown: list[m.PlanEntry] | None = None
        self.refresh()

    def refresh(self, active: bool = False) -> bool:
        if self.plan.entries is self._shown:
            return False
        self._shown = self.plan.entries
        self.widget.value = plan_html(self.plan.entries)
        return True


class StaticView:
    """An entry that never changes (a note, an unknown update): rendered once."""

    def __init__(self, html: str) -> None:
        self.widget = flat_html(html)

    def refresh(self, active: bool = False) -> bool:
        return False


@dataclass(frozen=True)
class Making:
    """What a turn's entry views are made with: its view context, its session, its record."""

    ctx: ViewContext
    session: SessionLike
    record: TurnRecord

    def message(self, entry: MessageEntry, running: bool) -> ChildView:
        """A prompt that carried context shows it; a thought folds once the turn ends."""
        cwd, prompt = self.ctx.cwd, self.record.prompt
        if entry.role == "user" and sent_items(prompt):
            return PromptView(prompt, sent_items(prompt), cwd)
        if entry.role == "thought":
            return ThoughtView(entry, cwd, active=running)
        return MessageView(entry, cwd)

    def elicitation(self, entry: ElicitationEntry) -> ElicitationForm:
        session = self.session
        return ElicitationForm(
            entry.request,
            broker=session.elicitations,
            post=self.ctx.post,
            transcript=session.transcript,
        )


#: The live widget form of each entry kind (``client/entry_forms.py``); ``running``: the
#: turn is running.
WIDGETS: EntryForm[Making, bool, ChildView] = EntryForm(
    "widget",
    [
        row(MessageEntry, Making.message),
        row(ToolCallEntry, lambda v, e, _: ToolCallCard(e.tool_call, v.ctx)),
        row(PlanView, lambda v, e, _: PlanWidget(e)),
        row(NoteEntry, lambda v, e, _: StaticView(note_html(e.text))),
        row(NoticeEntry, lambda v, e, _: StaticView(notice_html(e))),
        row(CompactionEntry, lambda v, e, _: CompactionView(e, v.ctx.cwd)),
        row(UnknownEntry, lambda v, e, _: StaticView(raw_html(RawShown("update", e.kind, e.raw)))),
        row(ElicitationEntry, lambda v, e, _: v.elicitation(e)),
    ],
    fallback=lambda v, e, _: StaticView(
        raw_html(RawShown("entry", type(e).__name__, {"repr": repr(e)}))
    ),
)


class EntryViews:
    """The entry views of one turn; ``views``, ``cards`` and ``forms`` are changed in place
    (the turn view hands them out)."""

    def __init__(self) -> None:
        self.body = AppendOnlyBox()
        self.views: list[ChildView] = []
        #: Tool call cards by tool call id, and the elicitation forms.
        self.cards: dict[str, ToolCallCard] = {}
        self.forms: list[ElicitationForm] = []
        #: "N earlier entries not kept", made when the transcript first lets one go.
        self.note: w.HTML | None = None
        # The entry of each view by id(entry), the entry held so its id stays unique.
        self._shown: dict[int, tuple[Entry, ChildView]] = {}
        self._mark = 0
        self._not_kept = 0

    def sync(self, transcript: Transcript, turn: int, make: Callable[[Entry], ChildView]) -> bool:
        """Views for the entries of ``turn`` added since the last call, and none for those
        let go of since; True if any view came or went."""
        new = [
            e
            for e in transcript.entries_since(self._mark)
            if e.turn == turn and id(e) not in self._shown
        ]
        self._mark = transcript.appended
        changed = self._let_go(transcript, turn)
        added = []
        for entry in new:
            view = make(entry)
            self._shown[id(entry)] = (entry, view)
            if isinstance(entry, ToolCallEntry) and isinstance(view, ToolCallCard):
                self.cards[entry.tool_call.tool_call_id] = view
            elif isinstance(view, ElicitationForm):
                self.forms.append(view)
            added.append(view)
        self.body.extend([v.widget for v in added])
        self.views.extend(added)
        return changed or bool(added)

    def _let_go(self, transcript: Transcript, turn: int) -> bool:
        count = transcript.not_kept.get(turn, 0)
        if count == self._not_kept:
            return False
        self._not_kept = count
        kept = {id(e) for e in transcript.entries}
        gone = [view for key, (_, view) in self._shown.items() if key not in kept]
        self._shown = {key: pair for key, pair in self._shown.items() if key in kept}
        if gone:
            ids = {id(view) for view in gone}
            self.views[:] = [v for v in self.views if id(v) not in ids]
            for call_id in [c for c, card in self.cards.items() if id(card) in ids]:
                del self.cards[call_id]
            self.forms[:] = [f for f in self.forms if id(f) not in ids]
            self.body.remove([v.widget for v in gone])
            for view in gone:
                if isinstance(view, ToolCallCard):
                    view.close_widgets()
                else:
                    close_tree(view.widget)
        html = note_html(transcript.not_kept_note(turn))
        if self.note is None:
            self.note = flat_html(html)
        else:
            self.note.value = html
        return True
