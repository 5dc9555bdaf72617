"""Ingest CPU per streamed chunk, as rows:

- the peer and the models (benchmarks/throughput.py) against a bare ``readline`` +
  ``json.loads`` reader on the same producer;
- the whole client: ``acp-notebook run`` of an N-chunk reply with its transcript printed
  (Markdown, as when stdout is a file), in a fresh process (:func:`whole_client`), against the
  same bare reader in the same process, alternating. CPU of the client process only (the
  producer is a child), from ``main()`` to its return, after one small warm-up turn (the models
  it needs built): the CPU of an N-chunk turn less that of a one-chunk turn (starting the
  producer, the handshake and shutting it down), divided by N - 1."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
from pathlib import Path

from .child import last_line
from .table import Row

HERE = Path(__file__).resolve().parent
_WHOLE_CLIENT = """
import json, sys
from benchmarks.ingest import whole_client
print(json.dumps(whole_client(int(sys.argv[1]), int(sys.argv[2]))))
"""


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cli_turn(n: int) -> float:
    """Client CPU seconds of ``acp-notebook run`` of an ``n``-chunk reply."""
    from acp_notebook.cli import main

    agent = f"{sys.executable} {HERE / 'producer.py'} {n}"
    saved = sys.stdout
    with open(os.devnull, "w") as sys.stdout:
        before = _cpu()
        code = main(["run", "--format", "markdown", "--agent", agent, "go"])
        after = _cpu()
    sys.stdout = saved
    if code != 0:
        raise RuntimeError(f"acp-notebook run exited {code}")
    return after - before


def whole_client(n: int, reps: int) -> dict[str, list[float]]:
    """In this process: alternating runs of the bare reader and ``acp-notebook run``."""
    from .throughput import run_bare

    run_bare(min(n, 2000))
    _cli_turn(min(n, 2000))
    runs: dict[str, list[float]] = {"bare": [], "client": []}
    for _ in range(reps):
        bare = run_bare(n)
        if bare.msgs != n:
            raise RuntimeError(f"the bare reader saw {bare.msgs} of {n} chunks")
        runs["bare"].append(bare.cpu_us_per_msg)
        runs["client"].append((_cli_turn(n) - _cli_turn(1)) / (n - 1) * 1e6)
    return runs


def measure(quick: bool) -> list[Row]:
    n, reps = (20_000, 5) if quick else (100_000, 3)
    proc = subprocess.run(
        [sys.executable, str(HERE / "throughput.py"), "-n", str(n), "--reps", str(reps)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    if not record["complete"]:
        raise RuntimeError(f"throughput.py: a run did not see all {n} chunks")
    runs = json.loads(last_line(_WHOLE_CLIENT, str(n), str(reps)))
    return [
        Row(
            f"ingest CPU per chunk, peer + models ({n:,} chunks, median of {reps})",
            record["ours"]["cpu_us_per_msg_median"],
            record["bare"]["cpu_us_per_msg_median"],
            "bare readline + json.loads",
            "µs",
            limit=record["budget"],
        ),
        Row(
            f"ingest CPU per chunk, `acp-notebook run`, transcript printed ({n:,} chunks, "
            f"median of {reps})",
            statistics.median(runs["client"]),
            statistics.median(runs["bare"]),
            "bare readline + json.loads",
            "µs",
            limit=2.0,
        ),
    ]
