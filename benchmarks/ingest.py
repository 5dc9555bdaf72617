"""Ingest CPU per streamed chunk: benchmarks/throughput.py (the peer and the models against a
bare ``readline`` + ``json.loads`` reader on the same producer), as one row."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .table import Row

HERE = Path(__file__).resolve().parent


def measure(quick: bool) -> list[Row]:
    n, reps = (5000, 3) if quick else (100_000, 3)
    proc = subprocess.run(
        [sys.executable, str(HERE / "throughput.py"), "-n", str(n), "--reps", str(reps)],
        capture_output=True,
        text=True,
        timeout=1200,
    )
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    if not record["complete"]:
        raise RuntimeError(f"throughput.py: a run did not see all {n} chunks")
    return [
        Row(
            f"ingest CPU per chunk, peer + models ({n:,} chunks, median of {reps})",
            record["ours"]["cpu_us_per_msg_median"],
            record["bare"]["cpu_us_per_msg_median"],
            "bare readline + json.loads",
            "µs",
            limit=record["budget"],
        )
    ]
