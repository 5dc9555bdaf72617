"""Files, terminals and sessions at size (issue 15), each in a fresh child process so its
memory is its own; every figure against a baseline measured in the same run.

* ``fs/read_text_file`` with a ``line``/``limit`` window near the end of a big file
  (``FileSystem``, ``client/fs.py``): wall time against ``itertools.islice`` over the
  file's lines, and the read's tracemalloc peak against the window's own size plus the
  1 MiB read chunk.
* A terminal flood: ``cat`` of a big file through ``TerminalManager`` (the command runs
  under the lingering supervisor) with ``outputByteLimit`` 1 MiB: the client process's
  tracemalloc peak while it runs (above idle, a third run: the first two warm it up)
  against the limit; and its wall time until exit against ``cat FILE > /dev/null`` (the
  figure names what starting a terminal alone costs: the supervisor is a Python process).
* A long session: N ``session/update`` notifications (JSON lines parsed as the client does)
  through a ``Transcript`` and the inspector's ``MessageLog``: the heap they hold after
  100,000 updates against after 5,000 (when the transcript already holds about its
  ``KEPT_ENTRIES``), tracemalloc, same process.

Files live in a temporary directory that is removed afterwards.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from .child import last_line
from .table import Row

MIB = 1 << 20

CHILD = r"""
import anyio, itertools, json, os, statistics, subprocess, sys, time, tracemalloc
what, path, size = sys.argv[1], sys.argv[2], int(sys.argv[3])

def make_lines(path, size):
    line = b"%08d the quick brown fox jumps over the lazy dog, 1234567890 ...\n"
    count = size // len(line % 0)
    with open(path, "wb") as f:
        for start in range(0, count, 10000):
            f.write(b"".join(line % i for i in range(start, min(count, start + 10000))))
    return count

def window_read():
    count = make_lines(path, size)
    start, limit = count - 2000, 1000
    from acp_notebook.client.fs import FileSystem
    fs = FileSystem([os.path.dirname(path)])
    params = {"sessionId": "s", "path": path, "line": start, "limit": limit}
    def islice():
        with open(path, "rb") as f:
            return b"".join(itertools.islice(f, start - 1, start - 1 + limit))
    async def alternate():  # in one event loop, as the kernel's agent loop is
        assert (await fs.read_text_file(params)).content.encode() == islice()
        timed = {"ours": [], "islice": []}
        for _ in range(11):  # a quick read is ~20 ms: one scheduling delay can be half of it
            t = time.perf_counter(); await fs.read_text_file(params)
            timed["ours"].append(time.perf_counter() - t)
            t = time.perf_counter(); islice(); timed["islice"].append(time.perf_counter() - t)
        tracemalloc.start()
        window = len((await fs.read_text_file(params)).content.encode())
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        return timed, window, peak
    timed, window, peak = anyio.run(alternate)
    return {"ours": statistics.median(timed["ours"]), "islice": statistics.median(timed["islice"]),
            "peak": peak, "window": window}

def flood():
    with open(path, "wb") as f:
        block = (b"y" * 79 + b"\n") * (1 << 14)
        for _ in range(size // len(block)):
            f.write(block)
    t = time.perf_counter()
    subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)
    cat = time.perf_counter() - t
    from acp_notebook.client.terminals import TerminalManager
    async def run():
        async with TerminalManager([os.path.dirname(path)], os.path.dirname(path)) as terminals:
            async def cat(name, traced=False):
                if traced:
                    tracemalloc.start()
                idle = tracemalloc.get_traced_memory()[0]
                t = time.perf_counter()
                made = await terminals.create({"sessionId": "s", "command": "cat", "args": [name],
                                               "outputByteLimit": 1 << 20})
                ident = {"sessionId": "s", "terminalId": made.terminal_id}
                await terminals.wait_for_exit(ident)
                wall = time.perf_counter() - t
                peak = tracemalloc.get_traced_memory()[1] - idle
                tracemalloc.stop()
                out = await terminals.output(ident)
                await terminals.release(ident)
                return {"wall": wall, "peak": peak, "kept": len(out.output.encode()),
                        "truncated": out.truncated}
            empty = await cat("/dev/null")
            timed = await cat(path)
            return {**await cat(path, traced=True), "wall": timed["wall"],
                    "empty": empty["wall"]}
    return {"cat": cat, **anyio.run(run)}

def session():
    from acp_notebook.client.transcript import Transcript
    from acp_notebook.notebook.inspector import MessageLog
    from acp_notebook.protocol import models as m
    from acp_notebook.protocol.trace_event import TraceEvent
    transcript, log = Transcript(), MessageLog()
    transcript.begin_turn([m.TextContentBlock(text="go")])
    def lines(i):
        call = {"sessionUpdate": "tool_call_update", "toolCallId": f"t{i}"}
        for update in ({**call, "sessionUpdate": "tool_call", "title": f"Step {i}"},
                       {**call, "status": "completed"},
                       {"sessionUpdate": "agent_message_chunk", "messageId": f"m{i}",
                        "content": {"type": "text", "text": f"Done step {i}. " * 4}}):
            yield json.dumps({"jsonrpc": "2.0", "method": "session/update",
                              "params": {"sessionId": "s", "update": update}})
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = {}
    for step in range(size // 3):
        for line in lines(step):
            message = json.loads(line)
            log.record("agent", TraceEvent("recv", 0.0, message, None, len(line), None))
            transcript.apply(m.parse(m.SessionUpdate, message["params"]["update"]))
        if step + 1 in (5000 // 3, size // 3):
            held[(step + 1) * 3] = tracemalloc.get_traced_memory()[0] - before
    return {"held": held, "entries": len(transcript.entries), "log": len(log.events())}

print(json.dumps({"window": window_read, "flood": flood, "session": session}[what]()))
"""


def _child(what: str, path: str, size: int) -> dict[str, Any]:
    return dict(json.loads(last_line(CHILD, what, path, str(size))))


def measure(quick: bool) -> list[Row]:
    file_size = (20 if quick else 200) * MIB
    flood_size = (10 if quick else 100) * MIB
    updates = 20_000 if quick else 100_000
    with tempfile.TemporaryDirectory(prefix="acp-bench-") as tmp:
        window = _child("window", os.path.join(tmp, "big.txt"), file_size)
        os.unlink(os.path.join(tmp, "big.txt"))
        flood = _child("flood", os.path.join(tmp, "flood.txt"), flood_size)
    session = _child("session", "-", updates)
    held = {int(k): float(v) for k, v in dict(session["held"]).items()}
    first, last = min(held), max(held)
    mb = file_size // MIB
    return [
        Row(
            f"window read near the end of {mb} MB (1,000 lines, median of 11)",
            float(window["ours"]) * 1000,
            float(window["islice"]) * 1000,
            "`itertools.islice` over the lines",
            "ms",
            limit=1.5,
        ),
        Row(
            f"… its memory peak (tracemalloc), {mb} MB file",
            float(window["peak"]) / 1024,
            (float(window["window"]) + MIB) / 1024,
            "the window + the 1 MiB read chunk",
            "KB",
            limit=2.0,
        ),
        Row(
            f"terminal flood of {flood_size // MIB} MB, 1 MB limit: client memory over idle (tracemalloc peak)",
            float(flood["peak"]) / 1024,
            MIB / 1024,
            "the 1 MB output limit",
            "KB",
            limit=4.0,
        ),
        Row(
            f"… its wall time until exit ({flood_size // MIB} MB; of which about "
            f"{float(flood['empty']) * 1000:,.0f} ms start an empty `cat`)",
            float(flood["wall"]) * 1000,
            float(flood["cat"]) * 1000,
            "`cat FILE > /dev/null`",
            "ms",
            limit=float("inf"),  # reported: the budget is the memory one
        ),
        Row(
            f"session memory after {last:,} updates (transcript + message log, tracemalloc)",
            held[last] / 1024,
            held[first] / 1024,
            f"after {first:,} updates",
            "KB",
            limit=1.5,
        ),
    ]
