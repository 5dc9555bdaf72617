"""The throughput budget, run as a small benchmark (see benchmarks/README.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_our_stack_costs_at_most_three_times_a_bare_readers_cpu_per_message():
    # The budget is a ratio measured within this one benchmark run: our stack's median
    # client CPU per message against a bare blocking reader's, on the same machine and
    # the same producer, alternating. It is not an absolute time, so a slow or busy CI
    # machine slows both sides alike.
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "throughput.py"), "-n", "5000", "--reps", "3"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    record = json.loads(proc.stdout.strip().splitlines()[-1])
    assert record["complete"] and record["within_budget"]
    assert record["bare"]["msgs"] == record["ours"]["msgs"] == [5000]
