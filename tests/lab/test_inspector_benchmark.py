"""The inspector overhead benchmark runs and reports one table row (its ratio is read in the
benchmark table; a unit test asserts no timing)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.slow
def test_the_overhead_benchmark_times_turns_with_and_without_the_inspector() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks.inspector_overhead", "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr  # 1: over budget, reported
    row = json.loads(proc.stdout.strip().splitlines()[-1])
    assert {"name", "figure", "baseline", "ratio", "budget", "passed"} <= set(row)
    assert len(row["runs"]["bare"]) == len(row["runs"]["inspected"]) == 2
    assert row["ratio"] == pytest.approx(row["figure"] / row["baseline"], rel=0.01)
