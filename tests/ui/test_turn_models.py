"""What a turn's view costs in widget models (issue 15, "Wire cost"): every model is a
``comm_open`` of its own, so layouts and styles are shared by every view of the kernel
(``ui/layouts.py``), and a turn opens its entries' widgets plus the groups that keep an
append cheap (``segments.AppendOnlyBox``), nothing more per entry."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from acp_notebook.ui import layouts
from acp_notebook.ui.turn import TurnView

from .conftest import FakeSession, Poster, Wire, agent_chunk, tool_call

GROUP = 8  # AppendOnlyBox.GROUP


def run_turn(session: FakeSession, post: Poster, replies: int) -> TurnView:
    """A finished turn of ``replies`` short agent messages (and its prompt)."""
    turn = session.submit("Do it")
    session.start(turn)
    view = TurnView(agent_label="demo", session_label="default", post=post)
    view.bind(session, turn)
    for number in range(replies):
        session.transcript.apply(agent_chunk(f"Reply {number}", message_id=f"m{number}"))
    view.refresh()
    session.end(turn)
    view.finish()
    return view


def opened(wire: Wire, mark: int) -> Counter[str]:
    """Model names of the widget models opened since ``mark``."""
    return Counter(m.data["state"]["_model_name"] for m in wire.since(mark) if m.kind == "open")


def groups(children: int) -> int:
    """The group boxes an AppendOnlyBox of ``children`` makes: none up to one group, then
    groups of GROUP and the groups of those."""
    if children <= GROUP:
        return 0
    inner = math.ceil(children / GROUP)
    return inner + math.ceil(inner / GROUP)


def test_a_later_turn_opens_no_layout_style_or_stylesheet_of_its_own(
    session: FakeSession, post: Poster, wire: Wire
) -> None:
    first = run_turn(session, post, 3)
    assert opened(wire, 0)["LayoutModel"] >= 1  # the first view of the kernel makes them
    mark = wire.mark()
    second = run_turn(session, post, 3)
    kinds = opened(wire, mark)
    assert not [kind for kind in kinds if kind.endswith(("LayoutModel", "StyleModel"))], kinds
    sheets = [m for m in wire.since(mark) if m.kind == "open" and "<style>" in str(m.data["state"])]
    assert not sheets, "the Markdown stylesheet was sent again"
    # Closing a view leaves what the other views share open.
    first.close()
    second.close()
    mark = wire.mark()
    run_turn(session, post, 3)
    assert not [kind for kind in opened(wire, mark) if kind.endswith("LayoutModel")]


def test_the_models_a_turn_opens_grow_with_its_entries_only_by_their_widgets_and_groups(
    session: FakeSession, post: Poster, wire: Wire
) -> None:
    run_turn(session, post, 1)  # the shared models are open
    counts = {}
    for replies in (1, 2, 100):
        mark = wire.mark()
        run_turn(session, post, replies)
        counts[replies] = sum(opened(wire, mark).values())
    # A short reply: its box, its text's box and the text (its layouts and style shared).
    per_reply = counts[2] - counts[1]
    assert per_reply == 3
    entries = 100 + 1  # and the prompt
    assert counts[100] == counts[1] + 99 * per_reply + groups(entries)


def test_a_tool_call_card_opens_its_raw_sections_only_when_the_call_has_them(
    session: FakeSession, post: Poster, wire: Wire
) -> None:
    turn = session.submit("Do it")
    session.start(turn)
    view = TurnView(agent_label="demo", session_label="default", post=post)
    view.bind(session, turn)
    mark = wire.mark()
    session.transcript.apply(tool_call("t1", "Read", "read"))
    view.refresh()
    assert opened(wire, mark)["AccordionModel"] == 0
    session.transcript.apply(tool_call("t2", "Run", "execute", rawInput={"command": "ls"}))
    view.refresh()
    assert opened(wire, mark)["AccordionModel"] == 1
    assert "ls" in view.cards["t2"].raw_sections["Raw input"]


@pytest.mark.parametrize("trait", ["display", "width"])
def test_a_shared_layout_cannot_be_changed(trait: str, wire: Wire) -> None:
    shared = layouts.layout(width="100%")
    with pytest.raises(AttributeError, match="Layout of its own"):
        setattr(shared, trait, "none")
    assert shared.width == "100%" and shared.display is None
