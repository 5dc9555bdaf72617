"""The benchmark command runs and prints its table (smallest sizes, one benchmark), and the
instruction counts that ``python -m benchmarks --gate`` gates are attributed per process.
No figure here is compared with a budget: budgets are the benchmark command's, and only
counts (instructions, bytes) gate CI, through ``--gate`` (benchmarks/README.md)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import instructions

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


def test_the_benchmark_command_prints_its_table_and_a_json_record(tmp_path: Path) -> None:
    out = tmp_path / "bench.jsonl"
    proc = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--only", "startup", "--json-out", out],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "| figure | value | baseline (same run) | ratio | budget | |" in proc.stdout
    assert "`%load_ext acp_notebook` in a fresh shell" in proc.stdout
    record = json.loads(out.read_text().splitlines()[-1])
    assert [row["figure"].split(" (")[0] for row in record["rows"]] == [
        "`%load_ext acp_notebook` in a fresh shell"
    ]
    row = record["rows"][0]
    assert row["value"] > 0 and row["baseline"] > 0
    assert row["gated"] is False  # a wall-clock row is reported, never gated


@pytest.mark.skipif(not instructions.available(), reason="valgrind is not installed")
def test_callgrind_counts_every_process_of_a_run_but_the_skipped_agent(tmp_path: Path) -> None:
    # A client that starts a traced helper process and the agent, which valgrind skips.
    agent = instructions.agent_script(tmp_path)
    client = (
        "import subprocess, sys;"
        "subprocess.run([sys.executable, '-c', 'pass'], check=True);"
        f"subprocess.run({agent!r}, input=b'', stdout=subprocess.DEVNULL, check=True);"
        "print('end_turn')"
    )
    turn = instructions.count([sys.executable, "-S", "-c", client], timeout=300)
    commands = [process.command for process in turn.processes]
    assert len(commands) == 2, commands
    assert commands[0].startswith(f"{sys.executable} -S -c ")
    assert commands[1] == f"{sys.executable} -c pass"
    assert not any(instructions.AGENT_SCRIPT in shlex.split(c)[0] for c in commands)
    # Each process is a whole interpreter's start: millions of instructions.
    assert all(process.instructions > 1_000_000 for process in turn.processes)
    assert turn.client == sum(process.instructions for process in turn.processes)


def _turn(*commands: str) -> instructions.Turn:
    return instructions.Turn(tuple(instructions.Process(c, 10_000_000) for c in commands))


def test_the_sandbox_row_names_what_confined_the_counted_turn() -> None:
    client = f"{sys.executable} -m acp_notebook.cli run --agent demo /help"
    supervisor = f"{sys.executable} -S -I /x/acp_notebook/protocol/supervisor.py"
    confined = _turn(client, f"{supervisor} --bwrap --write /work 42 demo", "/usr/bin/bwrap")
    unconfined = _turn(client, f"{supervisor} 42 demo")
    row = instructions.sandbox_row(confined, unconfined)
    assert confined.confined_by == "bwrap" and unconfined.confined_by is None
    assert "bubblewrap" in row.figure and row.gated and row.limit == 1.05
    assert row.value == 30 and row.baseline == 20  # every process but the agent, in M
    landlock = _turn(client, f"{supervisor} --landlock --write /work 42 demo")
    assert "(Landlock)" in instructions.sandbox_row(landlock, unconfined).figure


def test_the_sandbox_row_is_not_counted_when_nothing_confined_the_default_turn() -> None:
    # Under valgrind without bubblewrap the "confined" turn ran unconfined: a ratio of two
    # unconfined turns would pass whatever the sandbox costs.
    supervisor = f"{sys.executable} -S -I /x/acp_notebook/protocol/supervisor.py 42 demo"
    with pytest.raises(instructions.Unconfined, match="install bubblewrap"):
        instructions.sandbox_row(_turn(supervisor), _turn(supervisor))
