"""What a finished turn leaves in its cell: the turn as Markdown (a huge text kept by its
ends), plain text that nbval compares, and the live view's looks as HTML unless the turn
is long (issue 15: the saved form travels once more after the live view)."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from acp_notebook.agents.demo.content import long_markdown_pieces
from acp_notebook.client.agent_markdown import KeepEnds
from acp_notebook.client.render import transcript_bundle
from acp_notebook.ui.saved_transcript import HTML_LIMIT, KEPT_TEXT, PLAIN_LIMIT, saved_bundle
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
    reply = long_reply(1500)
    assert HTML_LIMIT < len(reply) <= KEPT_TEXT.limit
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


def test_a_huge_reply_is_saved_by_its_start_and_end_with_a_note_between(
    session: FakeSession,
) -> None:
    # One `/long 20000` turn made a notebook of 1.4 MB once saved: the Markdown held the
    # whole 800 KB reply.
    reply = long_reply(20000)
    bundle = finished(session, reply)
    markdown = bundle["text/markdown"]
    head, tail = reply[: KEPT_TEXT.head // 2], reply[-KEPT_TEXT.tail // 2 :]
    assert head in markdown and tail in markdown and "Edit `utils.py`" in markdown
    assert "\n## Section 800\n" in reply and "\n## Section 800\n" not in markdown
    note = re.search(
        r"\*\[… ([\d,]+) characters \(([\d,]+) lines\) of this text are left out", markdown
    )
    assert note is not None, markdown[KEPT_TEXT.head - 200 : KEPT_TEXT.head + 400]
    left_out = int(note.group(1).replace(",", ""))
    assert len(reply) - KEPT_TEXT.head - KEPT_TEXT.tail <= left_out < len(reply) - 70_000
    assert markdown.rstrip().endswith("*Stop reason: end_turn — the agent finished its turn.*")
    assert len(markdown) <= KEPT_TEXT.head + KEPT_TEXT.tail + 2_000
    assert "text/html" not in bundle and len(bundle["text/plain"]) <= PLAIN_LIMIT
    assert "(text/markdown) holds more of the turn]" in bundle["text/plain"]
    # The note and the footer render as prose: no fence was left open across the cut.
    html = MarkdownIt("commonmark").render(markdown)
    assert "<em>[… " in html and "<em>Stop reason: end_turn" in html


def test_a_cut_inside_a_code_fence_closes_it_before_the_note_and_reopens_it_after() -> None:
    text = (
        "intro\n\n~~~~python\n" + "".join(f"line_{i} = {i}\n" for i in range(400)) + "~~~~\nafter\n"
    )
    kept = KeepEnds(limit=1_000, head=300, tail=300).apply(text)
    html = MarkdownIt("commonmark").render(kept)
    assert html.count("<pre>") == 2 and "<em>[… " in html and "<p>after</p>" in html
    assert "line_0 = 0" in html and "line_399 = 399" in html and "line_200 = 200" not in html
    # Short text, and a cut where no fence is open, add no fence.
    assert KeepEnds(limit=1_000, head=300, tail=300).apply("short\n") == "short\n"
    prose = "".join(f"Paragraph {i}.\n\n" for i in range(200))
    kept = KeepEnds(1_000, 300, 300).apply(prose)
    assert "~~~" not in kept and "```" not in kept and "<em>[… " in MarkdownIt().render(kept)
