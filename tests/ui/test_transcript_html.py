"""The saved transcript's HTML: the live view's pieces, in the transcript's order, as one
deterministic document."""

from __future__ import annotations

import re

from acp_notebook.client.terminals import TerminalSnapshot
from acp_notebook.client.transcript import PlanView
from acp_notebook.protocol import models as m
from acp_notebook.ui.plan import plan_html
from acp_notebook.ui.style import ADDED_BG, REMOVED_BG
from acp_notebook.ui.transcript_html import literal_fallbacks, turn_html
from acp_notebook.ui.turn import TurnView

from .conftest import (
    CWD,
    FakeSession,
    Poster,
    agent_chunk,
    all_html,
    diff_item,
    thought_chunk,
    tool_call,
    update,
)

PLAN = {
    "sessionUpdate": "plan",
    "entries": [
        {"content": "Read the code", "priority": "high", "status": "completed"},
        {"content": "Fix the bug", "priority": "medium", "status": "in_progress"},
    ],
}


def finished_turn(session: FakeSession) -> str:
    """A turn with a reply, a thought, a plan, an edit (diff, permission) and a command."""
    turn = session.submit("Fix `add` in utils.py")
    record = session.start(turn)
    transcript = session.transcript
    transcript.apply(thought_chunk("Where is the bug?"))
    transcript.apply(update(PLAN))
    transcript.apply(
        tool_call(
            "edit-1",
            "Edit `utils.py`",
            kind="edit",
            status="completed",
            content=[diff_item(f"{CWD}/utils.py", "x = 1\ny = 2\n", "x = 1\ny = 3\n")],
            locations=[{"path": f"{CWD}/utils.py", "line": 2}],
        )
    )
    request = session.request_permission({"toolCallId": "edit-1"})
    session.permissions.choose(request.key, "yes")
    session.terminals["term-1"] = TerminalSnapshot(
        command="pytest -q",
        cwd=CWD,
        output="1 passed\n",
        truncated=False,
        exit_code=0,
        signal=None,
        released=True,
        exited=True,
    )
    transcript.apply(
        tool_call(
            "run-1",
            "Run the tests",
            kind="execute",
            status="completed",
            content=[{"type": "terminal", "terminalId": "term-1"}],
        )
    )
    transcript.apply(agent_chunk("Fixed: `y` is **3** now."))
    session.end(turn)
    assert record.finished
    return turn_html(transcript, record, session.terminal_view)


def test_the_saved_html_shows_the_live_views_pieces_in_order(session: FakeSession) -> None:
    html = finished_turn(session)
    order = [
        "Fix <code",  # the prompt, its code span rendered
        "Where is the bug?",  # the thought, collapsed
        "Read the code",  # the plan
        "Edit <code",  # the edit's card
        "Permission: Yes, run it",
        "pytest -q",  # the command's terminal
        "<strong>3</strong>",  # the reply, Markdown rendered
        "Stop reason: end_turn",
    ]
    positions = [html.find(text) for text in order]
    assert -1 not in positions, list(zip(order, positions, strict=True))
    assert positions == sorted(positions), list(zip(order, positions, strict=True))
    assert "<details" in html and ">Thought<" in html


def test_diff_lines_are_tinted_like_the_live_view(session: FakeSession) -> None:
    html = finished_turn(session)
    added = re.search(r'<span style="[^"]*">\+y = 3</span>', html)
    removed = re.search(r'<span style="[^"]*">-y = 2</span>', html)
    assert added is not None and ADDED_BG in added.group(0)
    assert removed is not None and REMOVED_BG in removed.group(0)


def test_the_plan_is_the_live_checklist_one_marker_per_step(session: FakeSession) -> None:
    html = finished_turn(session)
    plan = next(e for e in session.transcript.entries if isinstance(e, PlanView))
    assert literal_fallbacks(plan_html(plan.entries)) in html
    assert "[x]" not in html and "[~]" not in html


def test_cards_and_the_terminal_are_sections_with_their_status(session: FakeSession) -> None:
    html = finished_turn(session)
    assert html.count("border-left: 3px solid") >= 3  # the prompt and two cards
    assert "[exit code 0]" in html and "1 passed" in html
    assert "· edit" in html and "· execute" in html


def test_the_same_turn_renders_the_same_html_with_nothing_of_the_moment() -> None:
    first = finished_turn(FakeSession())
    second = finished_turn(FakeSession())
    assert first == second
    assert "Took" not in first  # the live footer's duration is left out
    assert CWD not in first  # paths relative to the session's directory


def test_the_saved_html_matches_what_the_live_view_showed(session: FakeSession) -> None:
    html = finished_turn(session)
    view = TurnView("demo", "default", post=Poster(immediate=True))
    view.bind(session, session.turns[-1])
    view.finish()
    live = all_html(view.widget)
    pieces = re.findall(r"<pre style=\"[^\"]*\">.*?</pre>", live, re.DOTALL)
    assert len(pieces) >= 2  # the diff and the terminal
    for piece in pieces:
        assert literal_fallbacks(piece) in html, piece


def test_theme_colours_have_a_literal_that_an_untrusted_notebook_keeps(
    session: FakeSession,
) -> None:
    # JupyterLab's sanitiser drops a declaration that reads var(); the literal before it stays.
    html = finished_turn(session)
    assert "border-left: 3px solid #388e3c; border-left: 3px solid var(--jp-success-color1" in html
    for style in re.findall(r'style="([^"]*)"', html):
        for declaration in style.split(";"):
            if "var(" in declaration and "," in declaration:
                literal = declaration.split(":")[0].strip() + ":"
                assert literal in style.split(declaration)[0], (declaration, style)


def test_the_saved_html_lists_what_was_sent_like_the_live_view(session: FakeSession) -> None:
    words = m.TextContentBlock(type="text", text="refactor this function")
    cell = m.TextContentBlock.model_validate(
        {
            "type": "text",
            "text": "def add(a, b):\n    return a + b\n",
            "_meta": {"acpNotebook": {"label": "cell [4] (2 lines)", "notes": []}},
        }
    )
    turn = session.submit("unused")
    turn.blocks = [words, cell]
    record = session.start(turn)
    session.transcript.apply(agent_chunk("Done."))
    session.end(turn)
    html = turn_html(session.transcript, record, session.terminal_view)
    assert "Sent: " in html and "cell [4] (2 lines)" in html
    # the attachment's text is there, collapsed under "What was sent"
    assert html.index("What was sent") < html.index("return a + b")


def test_the_saved_html_holds_no_machine_path_in_raw_json(session: FakeSession) -> None:
    turn = session.submit("read it")
    record = session.start(turn)
    session.transcript.apply(
        tool_call(
            "read-1",
            "Read notes",
            kind="read",
            status="completed",
            rawInput={"path": f"{CWD}/notes.txt", "cwd": CWD},
        )
    )
    session.end(turn)
    html = turn_html(session.transcript, record, session.terminal_view)
    assert "Raw input" in html and "notes.txt" in html
    assert CWD not in html
