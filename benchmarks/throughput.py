"""Throughput of one prompt turn streaming N ``agent_message_chunk`` notifications.

Two clients read the same stdlib producer (``benchmarks/producer.py``, a separate process,
so its CPU is not counted), alternating, in this one process run:

(a) ``bare``: a blocking ``subprocess.Popen`` pipe, ``readline()`` + ``json.loads``, no
    asyncio, no models: about the least a Python client can do per message.
(b) ``ours``: the project's stack, ``open_agent_process`` + ``Peer``, with a
    ``session/update`` handler that validates each notification into the models
    (``SessionNotification.parse``) and counts the ``AgentMessageChunk`` updates.

For each run: messages per second (wall clock) and client CPU µs per message
(``getrusage`` of this process), both counting only the prompt turn, from sending
``session/prompt`` to receiving its response. Medians over the repetitions are reported.

The budget: (b)'s median CPU per message may be at most 3× (a)'s, both measured in the
same run on the same machine, so the check does not depend on the machine's speed.
Exit status: 0 within budget, 1 over budget, 2 a run did not see all N chunks.

usage: python benchmarks/throughput.py [-n 20000] [--reps 5] [--budget 3] [--json-out FILE] [--profile]
"""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
PRODUCER = [sys.executable, str(HERE / "producer.py")]
INITIALIZE = {
    "protocolVersion": 1,
    "clientCapabilities": {
        "fs": {"readTextFile": False, "writeTextFile": False},
        "terminal": False,
    },
}
PROMPT_ID = 2


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Run:
    mode: str
    msgs: int
    wall_s: float
    cpu_s: float

    @property
    def msgs_per_s(self) -> float:
        return self.msgs / self.wall_s if self.wall_s > 0 else float("inf")

    @property
    def cpu_us_per_msg(self) -> float:
        return self.cpu_s / max(self.msgs, 1) * 1e6


# ---------------------------------------------------------------- (a) bare blocking reader


def run_bare(n: int) -> Run:
    proc = subprocess.Popen(
        [*PRODUCER, str(n)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        bufsize=0,
    )
    assert proc.stdin is not None and proc.stdout is not None
    # bufsize=0: stdout is a raw FileIO, which BufferedReader takes.
    reader = io.BufferedReader(proc.stdout, buffer_size=1 << 16)  # type: ignore[type-var]
    count = 0

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()

    def wait_for(request_id: int, count_chunks: bool = False) -> dict[str, Any]:
        nonlocal count
        while True:
            line = reader.readline()
            if not line:
                raise EOFError("the producer closed its stdout")
            message = json.loads(line)
            if "method" not in message and message.get("id") == request_id:
                return message
            if (
                count_chunks
                and message.get("method") == "session/update"
                and message["params"]["update"].get("sessionUpdate") == "agent_message_chunk"
            ):
                count += 1

    try:
        send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": INITIALIZE})
        wait_for(0)
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "session/new",
                "params": {"cwd": os.getcwd(), "mcpServers": []},
            }
        )
        session_id = wait_for(1)["result"]["sessionId"]
        prompt = {"sessionId": session_id, "prompt": [{"type": "text", "text": "go"}]}
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        send({"jsonrpc": "2.0", "id": PROMPT_ID, "method": "session/prompt", "params": prompt})
        response = wait_for(PROMPT_ID, count_chunks=True)
        t1, cpu1 = time.perf_counter(), cpu_seconds()
        assert response["result"]["stopReason"] == "end_turn", response
    finally:
        proc.stdin.close()
        proc.wait(timeout=30)
    return Run("bare", count, t1 - t0, cpu1 - cpu0)


# ---------------------------------------------------------------- (b) our stack


def run_ours(n: int) -> Run:
    import anyio

    return anyio.run(_ours, n, backend="asyncio")


async def _ours(n: int) -> Run:
    import anyio

    from acp_notebook.protocol.jsonrpc import Peer
    from acp_notebook.protocol.models import AgentMessageChunk, SessionNotification
    from acp_notebook.protocol.process import open_agent_process

    count = 0

    def on_update(params: Any) -> None:
        nonlocal count
        notification = SessionNotification.parse(params)
        if isinstance(notification.update, AgentMessageChunk):
            count += 1

    async with open_agent_process([*PRODUCER, str(n)]) as agent:
        peer = Peer(agent.stdout, agent.stdin, name="bench", close_reason=agent.describe_exit)
        peer.handle_notification("session/update", on_update)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            with anyio.fail_after(600):
                await peer.request("initialize", INITIALIZE)
                session = await peer.request("session/new", {"cwd": os.getcwd(), "mcpServers": []})
                prompt = {
                    "sessionId": session["sessionId"],
                    "prompt": [{"type": "text", "text": "go"}],
                }
                cpu0, t0 = cpu_seconds(), time.perf_counter()
                response = await peer.request("session/prompt", prompt)
                t1, cpu1 = time.perf_counter(), cpu_seconds()
            assert response["stopReason"] == "end_turn", response
            await peer.aclose()  # the producer sees EOF and exits; peer.run returns
    return Run("ours", count, t1 - t0, cpu1 - cpu0)


MODES = {"bare": run_bare, "ours": run_ours}


# ---------------------------------------------------------------- report


def summarize(runs: list[Run]) -> dict[str, Any]:
    rates = [r.msgs_per_s for r in runs]
    cpu = [r.cpu_us_per_msg for r in runs]
    return {
        "runs": len(runs),
        "msgs": sorted({r.msgs for r in runs}),
        "msgs_per_s_median": round(statistics.median(rates)),
        "msgs_per_s_min": round(min(rates)),
        "msgs_per_s_max": round(max(rates)),
        "cpu_us_per_msg_median": round(statistics.median(cpu), 2),
        "cpu_us_per_msg_min": round(min(cpu), 2),
        "cpu_us_per_msg_max": round(max(cpu), 2),
        "each": [
            {
                **asdict(r),
                "msgs_per_s": round(r.msgs_per_s),
                "cpu_us_per_msg": round(r.cpu_us_per_msg, 2),
            }
            for r in runs
        ],
    }


def profile_ours(n: int) -> None:
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    run_ours(n)
    profiler.disable()
    print(f"\n--- cProfile of one `ours` run (N = {n}), top 25 by own time ---")
    pstats.Stats(profiler, stream=sys.stdout).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "-n", type=int, default=int(os.environ.get("BENCH_N", "20000")), help="chunks per turn"
    )
    parser.add_argument(
        "--reps", type=int, default=5, help="repetitions of each mode (alternating)"
    )
    parser.add_argument(
        "--budget", type=float, default=3.0, help="max ratio of ours/bare median CPU per message"
    )
    parser.add_argument(
        "--json-out", type=Path, help="also append the JSON result line to this file"
    )
    parser.add_argument(
        "--profile", action="store_true", help="then profile one `ours` run with cProfile"
    )
    args = parser.parse_args(argv)

    # Warm-up, not counted: imports, pydantic's lazy schema building, the page cache.
    warm = min(args.n, 2000)
    run_bare(warm)
    run_ours(warm)

    runs: dict[str, list[Run]] = {"bare": [], "ours": []}
    for _ in range(args.reps):
        for mode, func in MODES.items():
            runs[mode].append(func(args.n))

    results = {mode: summarize(mode_runs) for mode, mode_runs in runs.items()}
    ratio = results["ours"]["cpu_us_per_msg_median"] / results["bare"]["cpu_us_per_msg_median"]
    complete = all(r.msgs == args.n for mode_runs in runs.values() for r in mode_runs)
    within = ratio <= args.budget

    print(
        f"N = {args.n:,} chunks per turn, {args.reps} repetitions per mode (alternating), medians (min–max)"
    )
    print(
        f"{'mode':<6} {'msgs/s':>10} {'(min–max)':>20} {'client CPU µs/msg':>18} {'(min–max)':>16}"
    )
    for mode, result in results.items():
        rate_range = f"({result['msgs_per_s_min']:,}–{result['msgs_per_s_max']:,})"
        cpu_range = f"({result['cpu_us_per_msg_min']:.2f}–{result['cpu_us_per_msg_max']:.2f})"
        print(
            f"{mode:<6} {result['msgs_per_s_median']:>10,} {rate_range:>20} "
            f"{result['cpu_us_per_msg_median']:>18.2f} {cpu_range:>16}"
        )
    verdict = "within budget" if within else "OVER BUDGET"
    print(f"CPU ratio ours/bare: {ratio:.2f} (budget {args.budget:g}×): {verdict}")
    if not complete:
        print(
            f"ERROR: a run did not see all {args.n} chunks: {[(r.mode, r.msgs) for m in runs.values() for r in m]}"
        )

    record = {
        "benchmark": "throughput",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "n": args.n,
        "reps": args.reps,
        "budget": args.budget,
        "cpu_ratio": round(ratio, 3),
        "within_budget": within,
        "complete": complete,
        **results,
    }
    line = json.dumps(record)
    print(line)
    if args.json_out is not None:
        with args.json_out.open("a") as f:
            f.write(line + "\n")

    if args.profile:
        profile_ours(args.n)

    if not complete:
        return 2
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
