"""Records ``tests/data/inspector/demo_session.jsonl``: one demo-agent session whose turns
show every kind of message the inspector tests look at (notices, a compaction, a named tool
call, a read, a command in a terminal, an error answer).

    .venv/bin/python -m tests.lab.record_traces

The session's directory is written as ``/project`` and times are made relative to the first
message, so the file holds no machine path. ``planted_violations.jsonl`` is this file with
planted schema violations: see ``tests/lab/test_inspector_timeline.py`` for what each is.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from acp_notebook.client import connect
from acp_notebook.protocol.jsonrpc import TraceEvent

DATA = Path(__file__).resolve().parent.parent / "data" / "inspector"
OUT = DATA / "demo_session.jsonl"
PLANTED = DATA / "planted_violations.jsonl"
PROMPTS = ["/notice", "/compact", "/named trace", "/read notes.txt", "/run echo hi", "/error"]


async def record() -> list[TraceEvent]:
    events: list[TraceEvent] = []
    with tempfile.TemporaryDirectory() as cwd:
        Path(cwd, "notes.txt").write_text("one\ntwo\n")
        async with connect(
            [sys.executable, "-m", "acp_notebook.agents.demo"], cwd=cwd, observers=[events.append]
        ) as conn:
            session = await conn.new_session(cwd, policy="allow")
            for prompt in PROMPTS:
                await session.prompt(prompt)
        real = str(Path(cwd).resolve())
    lines = []
    start = events[0].time
    for event in events:
        text = json.dumps(event.to_json(), ensure_ascii=False).replace(real, "/project")
        record = json.loads(text.replace(cwd, "/project"))
        record["time"] = round(event.time - start, 4)
        lines.append(json.dumps(record, ensure_ascii=False))
    OUT.write_text("\n".join(lines) + "\n")
    return events


def _update(record: dict[str, Any]) -> dict[str, Any]:
    update: dict[str, Any] = record["message"]["params"]["update"]
    return update


#: Line number (1-based, as the inspector numbers rows) -> how the agent's message is broken.
PLANTS: dict[int, Callable[[dict[str, Any]], None]] = {
    4: lambda r: r["message"]["result"].pop("sessionId"),
    8: lambda r: _update(r).pop("severity"),
    11: lambda r: r["message"].update(jsonrpc="1.0"),
    13: lambda r: r["message"]["result"].update(stopReason="done"),
    16: lambda r: _update(r).pop("compactionId"),
    25: lambda r: _update(r).update(status="exploded"),
    34: lambda r: r["message"]["params"].update(path=42),
}


def plant() -> None:
    """``planted_violations.jsonl``: the demo session with :data:`PLANTS` applied, and a
    line that is not JSON-RPC at the end."""
    records = [json.loads(line) for line in OUT.read_text().splitlines()]
    for number, breaks in PLANTS.items():
        breaks(records[number - 1])
    records.append({"direction": "recv", "time": records[-1]["time"], "invalid": "not json {"})
    PLANTED.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


if __name__ == "__main__":
    anyio.run(record)
    plant()
