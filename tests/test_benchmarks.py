"""The benchmark command, run with small sizes (see benchmarks/README.md). Budgets are ratios
to baselines measured in the same run, so a slow or busy CI machine slows both sides alike."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow

#: Figures (by the start of their name) whose budget is not met yet (issue 15 stays open
#: for them; benchmarks/README.md says why): `acp-notebook run "/help"`, whose CPU is about
#: 1.7-1.8x, while a minimal client on anyio and pydantic (the "stack's floor" row) is 1.5x.
NOT_MET_YET = ('`acp-notebook run "/help"`',)
#: Figures whose quick run is too short to be more than noise (two turns of a fraction of
#: a second each; benchmarks/README.md): shown in the table, not asserted here.
NOISY_WHEN_QUICK = ("inspector overhead",)


@pytest.fixture(scope="module")
def quick_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    out = tmp_path_factory.mktemp("bench") / "bench.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--json-out", str(out)],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    return proc, json.loads(out.read_text().splitlines()[-1])["rows"]


def _rows(rows: list[dict[str, Any]], *, met: bool) -> list[dict[str, Any]]:
    rows = [r for r in rows if not r["figure"].startswith(NOISY_WHEN_QUICK)]
    return [r for r in rows if r["figure"].startswith(NOT_MET_YET) != met]


def test_one_command_prints_one_table_with_every_figure(quick_run) -> None:
    proc, rows = quick_run
    assert "| figure | value | baseline (same run) | ratio | budget | |" in proc.stdout
    figures = " ".join(r["figure"] for r in rows)
    for figure in (
        "load_ext",
        '`acp-notebook run "/help"` wall',
        '`acp-notebook run "/help"` CPU',
        "the stack's floor: a minimal anyio + pydantic client",
        "`acp-notebook run` CPU against that floor",
        "first `%acp /help`",
        "ingest CPU per chunk, peer",
        "ingest CPU per chunk, `acp-notebook run`",
        "live view bytes",
        "live view + saved transcript",
        "`1+1`",
        "Cancel clicked",
        "inspector overhead",
        "window read",
        "terminal flood",
        "session memory",
    ):
        assert figure in figures
    assert all(r["baseline"] > 0 for r in rows)
    # A figure of zero measured nothing (e.g. a kernel serving a frontend without widgets).
    assert all(r["value"] > 0 for r in rows), [r["figure"] for r in rows if r["value"] <= 0]


def test_the_budgets_hold(quick_run) -> None:
    # The wire cost of a streamed reply (the live view, and the live view with the saved
    # transcript of a 240 KB reply, at most 3× the reply), `1+1` and a click on Cancel during
    # a full-speed stream, and the ingest CPU per chunk of the peer and of the whole client.
    _, rows = quick_run
    over = [(r["figure"], r["ratio"], r["limit"]) for r in _rows(rows, met=True) if not r["ok"]]
    assert not over, over


@pytest.mark.xfail(
    strict=True,
    reason='issue 15: `acp-notebook run "/help"` CPU (a minimal anyio + pydantic client is'
    " at the budget already, 1.45-1.57x; the wall is within it on a quiet machine only)",
)
def test_the_budgets_not_met_yet_hold(quick_run) -> None:
    _, rows = quick_run
    assert all(r["ok"] for r in _rows(rows, met=False))
