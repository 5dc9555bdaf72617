"""Messages and thoughts: a long streamed reply costs O(n) bytes on the wire; other
content blocks are shown inline; thoughts stay collapsed."""

from __future__ import annotations

import base64
import random

import ipywidgets as w

from acp_notebook.client.render import Renderer
from acp_notebook.client.transcript import Transcript
from acp_notebook.protocol import models as m
from acp_notebook.ui.markdown import cut_markdown, render_markdown, render_sheet_markdown
from acp_notebook.ui.message import THINKING, THOUGHT, MessageView, ThoughtView
from acp_notebook.ui.segments import GrowingText
from acp_notebook.ui.wire_budget import RATE, SHARE, SLACK, WireBudget

from .conftest import CWD, Wire, agent_chunk, all_html, message, text, thought_chunk, update

CHUNKS = 2000
#: Characters between two refreshes: an agent streaming ~3,300 characters a second under
#: 75 ms coalescing. A longer reply takes longer, so it gets more refreshes: that is
#: what makes one growing HTML widget quadratic.
CHARS_PER_REFRESH = 250


def reply_text(size: int, seed: int = 3) -> str:
    """A Markdown reply of ``size`` characters: paragraphs, lists, code fences."""
    rng = random.Random(seed)
    words = ["the", "agent", "edits", "notebook", "cells", "and", "runs", "tests", "quickly"]
    blocks: list[str] = []
    while sum(map(len, blocks)) < size:
        roll = rng.random()
        if roll < 0.15:
            blocks.append(
                "```python\n" + "\n".join(f"value_{i} = compute({i})" for i in range(8)) + "\n```"
            )
        elif roll < 0.3:
            blocks.append(
                "\n".join(f"- step {i}: " + " ".join(rng.choices(words, k=6)) for i in range(4))
            )
        else:
            blocks.append(" ".join(rng.choices(words, k=45)) + ".")
    return ("\n\n".join(blocks))[:size]


def stream_into_view(wire: Wire, size: int) -> tuple[int, int, MessageView]:
    """Stream a ``size``-character reply in 2,000 chunks; return (bytes, updates, view)."""
    transcript = Transcript(CWD)
    transcript.begin_turn([text("go")])
    reply = reply_text(size)
    step = -(-len(reply) // CHUNKS)
    transcript.apply(agent_chunk(reply[:step]))
    mark = wire.mark()
    view = MessageView(message(transcript), CWD)
    since_refresh = 0
    for index in range(1, CHUNKS):
        piece = reply[index * step : (index + 1) * step]
        if piece:
            transcript.apply(agent_chunk(piece))
        since_refresh += len(piece)
        if since_refresh >= CHARS_PER_REFRESH:
            since_refresh = 0
            view.refresh()
    view.refresh()
    assert view.entry.text == reply
    return wire.bytes_since(mark), len(wire.updates_since(mark)), view


def test_a_long_reply_costs_linear_bytes_on_the_wire(wire: Wire):
    small_bytes, small_updates, small = stream_into_view(wire, 20_000)
    large_bytes, large_updates, large = stream_into_view(wire, 40_000)
    ratio = large_bytes / small_bytes
    print(
        f"\n20 KB reply: {small_bytes:,} B in {small_updates} updates, {len(small.body.text_views[0].segments)} segments"
    )
    print(
        f"40 KB reply: {large_bytes:,} B in {large_updates} updates, {len(large.body.text_views[0].segments)} segments"
    )
    print(f"ratio: {ratio:.2f}")
    # Twice the text, twice the bytes (quadratic would be 4x).
    assert ratio < 2.6
    # And a small constant per character of Markdown source (HTML styling included; the
    # text is styled by the turn's stylesheet, not inline: measured 5.4, 12 with inline
    # styles; at this stream speed a frozen segment's own widget and the re-sent tail
    # cost about as much as the text).
    assert large_bytes < 7 * 40_000


def test_one_growing_html_widget_would_be_quadratic(wire: Wire):
    """The control: the naive view (one HTML re-sent whole) is what the segments avoid."""

    def naive(size: int) -> int:
        reply = reply_text(size)
        widget = w.HTML()
        mark = wire.mark()
        for end in range(CHARS_PER_REFRESH, len(reply) + CHARS_PER_REFRESH, CHARS_PER_REFRESH):
            widget.value = render_markdown(reply[:end])
        return wire.bytes_since(mark)

    assert naive(40_000) / naive(20_000) > 3.3


def test_frozen_segments_are_sent_once_and_only_the_tail_is_updated(wire: Wire):
    _bytes, _updates, view = stream_into_view(wire, 20_000)
    growing = view.body.text_views[0]
    frozen_ids = {segment.comm.comm_id for segment in growing.segments}
    assert len(frozen_ids) >= 5
    mark = wire.mark()
    view.entry.items[-1].append("\n\nOne more paragraph.")  # type: ignore[union-attr]
    view.refresh()
    updated = {msg.comm_id for msg in wire.updates_since(mark)}
    assert updated == {growing.live.comm.comm_id}


def test_frozen_segments_share_one_layout_and_one_style(wire: Wire):
    _bytes, _updates, view = stream_into_view(wire, 20_000)
    growing = view.body.text_views[0]
    layouts = {s.layout.model_id for s in [*growing.segments, growing.live]}
    assert len(growing.segments) >= 5 and len(layouts) == 1
    # Frozen Markdown segments (Output widgets) have no style; HTML ones share the tail's.
    styles = {s.style.model_id for s in [*growing.segments, growing.live] if hasattr(s, "style")}
    assert len(styles) == 1


def test_refresh_with_nothing_new_sends_nothing(wire: Wire):
    transcript = Transcript(CWD)
    transcript.begin_turn([text("go")])
    transcript.apply(agent_chunk("Hello **world**"))
    view = MessageView(message(transcript), CWD)
    mark = wire.mark()
    assert view.refresh() is False
    assert wire.since(mark) == []


def test_user_messages_are_labelled_as_the_users():
    transcript = Transcript(CWD)
    transcript.begin_turn([text("Please *fix* the tests")])
    view = MessageView(message(transcript, 0), CWD)
    html = all_html(view.widget)
    assert ">You<" in html and "<em>fix</em>" in html
    assert "3px solid" in view.widget.layout.border_left


def test_non_text_blocks_are_shown_inline():
    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"0" * 64).decode()
    huge = base64.b64encode(b"0" * (2 << 20)).decode()
    transcript = Transcript(CWD)
    transcript.begin_turn([text("go")])
    for raw in (
        {"type": "text", "text": "Here is the plot:"},
        {"type": "image", "mimeType": "image/png", "data": png},
        {"type": "image", "mimeType": "image/png", "data": huge},
        {
            "type": "resource_link",
            "uri": "https://example.org/r.csv",
            "name": "r.csv",
            "mimeType": "text/csv",
            "size": 2048,
        },
        {
            "type": "resource",
            "resource": {
                "uri": f"file://{CWD}/src/app.py",
                "mimeType": "text/x-python",
                "text": "print('hi')\n",
            },
        },
        {"type": "hologram", "depth": 3},
    ):
        transcript.apply(update({"sessionUpdate": "agent_message_chunk", "content": raw}))
    view = MessageView(message(transcript), CWD)
    html = all_html(view.widget)
    assert f'<img src="data:image/png;base64,{png}"' in html and "max-height" in html
    assert "too large" in html and huge not in html
    assert 'href="https://example.org/r.csv" target="_blank"' in html and "text/csv, 2.0 KB" in html
    assert "<details" in html and "src/app.py" in html  # embedded resource, collapsed, relative
    assert "Unknown content" in html and "hologram" in html and "&quot;depth&quot;: 3" in html


def test_media_are_inlined_only_with_a_type_of_their_kind_and_sized_as_saved():
    transcript = Transcript(CWD)
    record = transcript.begin_turn([text("go")])
    for raw in (
        {"type": "audio", "mimeType": "audio/wav", "data": "UklGRg=="},
        {"type": "audio", "mimeType": "image/png", "data": "UklGRg=="},
        {"type": "image", "mimeType": "audio/wav", "data": "UklGRg=="},
        {"type": "image", "mimeType": 'image/png" onerror="alert(1)', "data": "UklGRg=="},
    ):
        transcript.apply(update({"sessionUpdate": "agent_message_chunk", "content": raw}))
    html = all_html(MessageView(message(transcript), CWD).widget)
    assert html.count("<audio") == 1 and "<img" not in html
    assert 'onerror="' not in html
    saved = Renderer(transcript).turn(record)
    # "UklGRg==" is the 4 bytes "RIFF": the live view and the saved transcript agree.
    assert "🔊 audio audio/wav, 4 B" in html and "[audio audio/wav, 4 B]" in saved


def test_thoughts_are_collapsed_and_titled_while_thinking_then_done(wire: Wire):
    transcript = Transcript(CWD)
    transcript.begin_turn([text("go")])
    transcript.apply(thought_chunk("Let me look at the **tests** first."))
    view = ThoughtView(message(transcript), CWD, active=True)
    assert isinstance(view.widget, w.Accordion)
    assert view.widget.selected_index is None
    assert view.widget.titles == (THINKING,)
    assert "<strong>tests</strong>" in all_html(view.widget)
    # The user opens it (the browser sets selected_index); refreshes keep it open.
    view.widget.selected_index = 0
    transcript.apply(thought_chunk(" Then the code."))
    view.refresh(active=False)
    assert view.widget.selected_index == 0
    assert view.widget.titles == (THOUGHT,)
    assert "Then the code." in all_html(view.widget)


def test_a_message_with_two_runs_around_a_block_updates_both(wire: Wire):
    transcript = Transcript(CWD)
    transcript.begin_turn([text("go")])
    transcript.apply(agent_chunk("before "))
    view = MessageView(message(transcript), CWD)
    transcript.apply(agent_chunk("more"))
    transcript.apply(
        update(
            {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "resource_link", "uri": "https://x.org", "name": "x"},
            }
        )
    )
    transcript.apply(agent_chunk("after"))
    view.refresh()
    html = all_html(view.widget)
    assert html.index("before more") < html.index("https://x.org") < html.index("after")
    assert isinstance(transcript.entries[-1].items[1], m.ResourceLinkContentBlock)  # type: ignore[union-attr]


def stream_growing_text(wire: Wire, reply: str, *, paced: bool) -> tuple[int, GrowingText]:
    """Stream ``reply`` 50 characters a refresh, 75 ms apart (a slow agent: about 670
    characters a second); return (bytes sent, the view)."""
    clock = [0.0]
    growing = GrowingText(
        render_sheet_markdown, cut_markdown, budget=WireBudget(clock=lambda: clock[0])
    )
    mark = wire.mark()
    for end in range(50, len(reply), 50):
        clock[0] += 0.075
        growing.update(reply[:end], paced=paced)
    assert growing.update(reply)  # the last refresh (the turn ended) is never put off
    return wire.bytes_since(mark), growing


def test_a_streaming_text_waits_for_its_wire_budget_and_the_last_refresh_shows_all(wire: Wire):
    reply = reply_text(20_000)
    paced, growing = stream_growing_text(wire, reply, paced=True)
    every_tick, _ = stream_growing_text(wire, reply, paced=False)
    assert growing.text == reply
    shown = "".join(str(s.value) for s in [*growing.segments, growing.live])
    assert shown.count("step 3:") == reply.count("step 3:") > 5
    # What it sent grows with the text, not with the number of refreshes (400 here).
    assert paced < SHARE * len(reply) + RATE * 400 * 0.075 + SLACK
    print(f"\n{len(reply):,} characters: paced {paced:,} B, every tick {every_tick:,} B")
    assert paced < every_tick / 2
