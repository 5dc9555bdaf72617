"""A session of 100,000 updates: the transcript keeps its last entries (client/entries.py,
KEPT_ENTRIES), whole, keeps what may still change, and says how many it let go of."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from acp_notebook.client.entries import KEPT_ENTRIES
from acp_notebook.client.render import Renderer
from acp_notebook.client.transcript import MessageEntry, PlanView, ToolCallEntry, Transcript
from acp_notebook.protocol import models as m

UPDATES = 100_000


def update(raw: dict[str, Any]) -> Any:
    return m.parse(m.SessionUpdate, raw)


def steps(count: int, progress: int = 0) -> Iterator[Any]:
    """``count`` updates, ``4 + progress`` per step: a tool call, ``progress`` updates of it,
    its completion, and a message of two chunks."""
    for i in range(count // (4 + progress)):
        call = {"sessionUpdate": "tool_call_update", "toolCallId": f"t{i}"}
        yield update({**call, "sessionUpdate": "tool_call", "title": f"Step {i}"})
        for _ in range(progress):
            yield update({**call, "status": "in_progress"})
        yield update({**call, "status": "completed"})
        for part in ("Done ", f"step {i}."):
            yield update(
                {
                    "sessionUpdate": "agent_message_chunk",
                    "messageId": f"m{i}",
                    "content": {"type": "text", "text": part},
                }
            )


def long_session(count: int = UPDATES) -> tuple[Transcript, int]:
    transcript = Transcript()
    record = transcript.begin_turn([m.TextContentBlock(text="Do it all")])
    transcript.apply(
        update(
            {
                "sessionUpdate": "plan",
                "entries": [{"content": "All", "priority": "high", "status": "in_progress"}],
            }
        )
    )
    transcript.apply(update({"sessionUpdate": "tool_call", "toolCallId": "slow", "title": "Slow"}))
    for step in steps(count):
        transcript.apply(step)
    return transcript, record.index


def test_100000_updates_keep_the_last_entries_whole_and_count_the_rest() -> None:
    transcript, turn = long_session()
    assert len(transcript.entries) <= KEPT_ENTRIES * 5 // 4 + 1
    assert len(transcript.tool_calls) <= KEPT_ENTRIES * 5 // 4 + 1
    # Everything added is either kept or counted as let go of.
    added = 3 + UPDATES // 4 * 2  # prompt, plan, the slow call; a call and a message per step
    assert transcript.appended == added
    assert transcript.not_kept[turn] == added - len(transcript.entries)
    # The newest entries are the last ones, each whole: the last message has both its chunks.
    last = transcript.entries[-1]
    assert isinstance(last, MessageEntry) and last.text == f"Done step {UPDATES // 4 - 1}."
    kept_calls = [e.tool_call for e in transcript.entries if isinstance(e, ToolCallEntry)]
    assert all(c.status == "completed" for c in kept_calls if c.tool_call_id != "slow")


def test_what_may_still_change_is_kept_the_prompt_the_plan_and_a_running_call() -> None:
    transcript, _ = long_session(20_000)
    first = transcript.entries[0]
    assert isinstance(first, MessageEntry) and first.text == "Do it all"
    assert any(isinstance(e, PlanView) and e.entries is transcript.plan for e in transcript.entries)
    assert "slow" in transcript.tool_calls
    transcript.apply(
        update({"sessionUpdate": "tool_call_update", "toolCallId": "slow", "status": "completed"})
    )
    slow = [
        e
        for e in transcript.entries
        if isinstance(e, ToolCallEntry) and e.tool_call.tool_call_id == "slow"
    ]
    assert len(slow) == 1 and slow[0].tool_call.status == "completed"


def test_a_short_session_lets_nothing_go() -> None:
    transcript, turn = long_session(KEPT_ENTRIES)
    assert transcript.not_kept == {}
    assert transcript.not_kept_note(turn) == ""
    assert "not kept" not in Renderer(transcript).turn(transcript.turns[turn])


def test_the_saved_forms_of_the_turn_say_how_many_entries_were_not_kept() -> None:
    transcript, turn = long_session(20_000)
    count = transcript.not_kept[turn]
    assert count > 0
    record = transcript.turns[turn]
    markdown = Renderer(transcript).turn(record)
    plain = Renderer(transcript, markdown=False).turn(record)
    line = f"{count:,} earlier entries of this turn (messages, tool calls, notes) not kept"
    assert markdown.startswith(f"*{line}") and plain.startswith(line)
    assert line in Renderer(transcript).session()
