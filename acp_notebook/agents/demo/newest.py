"""The demo agent's scenes for the protocol's newest stable parts (schema 1.22–1.25): session
notices, context compaction, and the tool call's programmatic ``name``.

Notices and compactions are sent only to a client that advertised them (spec: agents MUST
only send them when the client advertised ``session.notices`` / ``session.compaction``);
otherwise the scene says so in its reply. Neither is history: ``session/load`` does not
replay them.
"""

from __future__ import annotations

import anyio

from ...protocol import models as m
from .content import text_content
from .replies import STEP_DELAY, StopReason
from .turn import Turn

NOTICES = [
    ("info", "Indexing finished", "The demo indexed 3 files; nothing was changed."),
    ("warning", "Context is filling up", "The next turns may be compacted to stay in the window."),
    ("error", "A background job failed", "This one is pretend: nothing failed for real."),
]

SUMMARY = [
    "**Summary of the conversation so far.** ",
    "You asked for demonstrations of the protocol; ",
    "I showed streaming, tool calls and permissions. ",
    "Older messages are replaced by this summary in my context.",
]


async def scene_notice(turn: Turn, arg: str) -> StopReason:
    if not turn.caps.notices:
        return await turn.reply(
            "Your client did not advertise `session.notices`, so I send no `notice` update "
            "(spec: agents MUST NOT). A client that supports them shows each as a line."
        )
    wanted = arg.strip().lower()
    for severity, title, description in NOTICES:
        if wanted in ("", severity):
            notice = m.Notice(severity=severity, title=title, description=description)
            await turn.send(notice, record=False)
    return await turn.reply(
        "I just sent `notice` updates (severity `info`, `warning`, `error`): fire-and-forget "
        "information for you, not part of the conversation (`session/load` does not replay them)."
    )


async def scene_compact(turn: Turn, arg: str) -> StopReason:
    if not turn.caps.compaction:
        return await turn.reply(
            "Your client did not advertise `session.compaction`, so I send no compaction "
            "updates (spec: agents MUST NOT)."
        )
    compaction_id = f"compaction-{turn.session.new_call_id()}"
    await turn.send(
        m.CompactionUpdate(compaction_id=compaction_id, status="in_progress"), record=False
    )
    for piece in SUMMARY:
        await anyio.sleep(STEP_DELAY / 4)
        chunk = m.CompactionSummaryChunk(
            compaction_id=compaction_id, content=m.TextContentBlock(text=piece)
        )
        await turn.send(chunk, record=False)
    await turn.send(
        m.CompactionUpdate(compaction_id=compaction_id, status="completed"), record=False
    )
    return await turn.reply(
        "I compacted my context: a `compaction_update` (`in_progress`) placed it, "
        "`compaction_summary_chunk`s streamed its summary, and a last `compaction_update` "
        "marked it `completed`."
    )


async def scene_named(turn: Turn, arg: str) -> StopReason:
    call = await turn.start_tool_call(
        "Tool call", "search", name="demo_lookup", raw_input={"query": arg or "notices"}
    )
    await call.update(status="in_progress")
    await anyio.sleep(STEP_DELAY)
    await call.update(
        status="completed",
        content=[text_content("3 results.")],
    )
    return await turn.reply(
        'That tool call\'s `title` was only "Tool call"; its `name` (`demo_lookup`) says which '
        "tool ran, so a client shows the name where the title is generic."
    )
