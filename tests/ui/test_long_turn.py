"""A turn of 100,000 updates: the live view holds the views of the entries the transcript
keeps (and closes the others' widgets), and says how many were not kept; so does the
saved transcript."""

from __future__ import annotations

from acp_notebook.ui.toolcall import ToolCallCard
from acp_notebook.ui.transcript_html import TurnHtml
from acp_notebook.ui.turn import TurnView
from tests.client.test_long_session import UPDATES, steps

from .conftest import FakeSession, Poster, Wire, all_html

#: Entries the transcript keeps here (fewer than KEPT_ENTRIES: each view is widgets to make).
KEEP = 100
BOUND = KEEP * 5 // 4 + 1


def test_a_turn_of_100000_updates_keeps_a_bounded_view_and_says_what_went(
    session: FakeSession, post: Poster, wire: Wire
) -> None:
    view = TurnView(agent_label="demo", session_label="default", post=post)
    turn = session.submit("Do it all")
    session.transcript.keep = KEEP
    record = session.start(turn)
    view.bind(session, turn)
    live_at_first = 0
    for number, step in enumerate(steps(UPDATES, progress=6), 1):
        session.transcript.apply(step)
        if (number % 500 == 0 and number <= 5 * KEEP) or number % 10_000 == 0:
            view.refresh()  # as its coalescer does, now and then
            assert len(view.views) <= BOUND
            if number == 5 * KEEP:  # KEEP entries, none let go of yet
                live_at_first = live_widgets(wire)
    view.refresh()
    cards = [v for v in view.views if isinstance(v, ToolCallCard)]
    assert len(view.cards) == len(cards) <= BOUND
    # The views are those of the entries kept, in order.
    kept = [e for e in session.transcript.entries if e.turn == record.index]
    assert len(view.views) == len(kept)
    # The widgets of the views that went were closed: about as many are open as when the
    # turn had KEEP entries.
    assert session.transcript.not_kept[record.index] > 0
    assert live_widgets(wire) <= 1.5 * live_at_first
    note = f"{session.transcript.not_kept[record.index]:,} earlier entries of this turn"
    shown = all_html(view.widget)
    assert shown.count(note) == 1 and "not kept" in shown
    session.end(turn)
    view.finish()
    assert note in TurnHtml(session.transcript).turn(record)


def live_widgets(wire: Wire) -> int:
    """Widget models opened and not closed yet."""
    kinds = [message.kind for message in wire.messages]
    return kinds.count("open") - kinds.count("close")
