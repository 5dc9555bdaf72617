"""What a finished turn leaves in its cell: the whole turn as Markdown, plain text that
nbval compares, and the live view's looks as HTML unless the turn is long (issue 15: the
saved form travels once more after the live view)."""

from __future__ import annotations

from acp_notebook.agents.demo.content import long_markdown_pieces
from acp_notebook.client.render import transcript_bundle
from acp_notebook.ui.saved_transcript import HTML_LIMIT, PLAIN_LIMIT, saved_bundle
from acp_notebook.ui.transcript_html import turn_html

from .conftest import CWD, FakeSession, agent_chunk, diff_item, tool_call


def finished(session: FakeSession, *replies: str) -> dict[str, str]:
    turn = session.submit("Fix `add` in utils.py")
    record = session.start(turn)
    session.transcript.apply(
        tool_call(
            "edit-1",
            "Edit `utils.py`",
            kind="edit",
            status="completed",
            content=[diff_item(f"{CWD}/utils.py", "y = 2\n", "y = 3\n")],
        )
    )
    for reply in replies:
        session.transcript.apply(agent_chunk(reply))
    session.end(turn)
    return saved_bundle(session.transcript, record, session.terminal_view)


def long_reply(chunks: int) -> str:
    return "".join(long_markdown_pieces(chunks))


def test_a_short_turn_is_saved_as_the_live_views_html_its_markdown_and_plain_text(
    session: FakeSession,
) -> None:
    bundle = finished(session, "Fixed: `y` is **3** now.")
    record = session.transcript.turns[-1]
    whole = transcript_bundle(session.transcript, record, session.terminal_view)
    assert bundle == {
        "text/html": turn_html(session.transcript, record, session.terminal_view),
        **whole,
    }


def test_a_long_reply_is_saved_whole_as_markdown_without_an_html_copy(
    session: FakeSession,
) -> None:
    reply = long_reply(3000)
    bundle = finished(session, reply)
    assert "text/html" not in bundle
    assert reply in bundle["text/markdown"]
    assert "Edit `utils.py`" in bundle["text/markdown"]  # the cards are still there
    # One copy of the reply, not the three (HTML five times its size) it used to be.
    assert sum(len(value) for value in bundle.values()) < 1.2 * len(reply)


def test_a_long_turns_plain_text_keeps_its_start_and_how_it_ended(
    session: FakeSession,
) -> None:
    reply = long_reply(3000)
    plain = finished(session, reply)["text/plain"]
    assert len(plain) <= PLAIN_LIMIT
    assert plain.startswith("You: Fix `add` in utils.py")
    assert "Section 1\n" in plain and "Stop reason: end_turn" in plain
    assert "characters left out here; the cell's Markdown output (text/markdown)" in plain
    assert f"Section {3000 // 13}" in plain  # the reply's last section, before the footer


def test_the_html_copy_is_dropped_exactly_when_it_would_pass_the_limit() -> None:
    # A reply whose HTML just fits keeps it; a little more text, and it goes.
    sizes = []
    for chunks in range(20, 400, 20):
        bundle = finished(FakeSession(), long_reply(chunks))
        sizes.append((chunks, "text/html" in bundle, len(bundle.get("text/html", ""))))
    kept = [size for _, has_html, size in sizes if has_html]
    assert kept and all(size <= HTML_LIMIT for size in kept)
    assert [has for _, has, _ in sizes] == sorted((has for _, has, _ in sizes), reverse=True)
    assert not sizes[-1][1]
