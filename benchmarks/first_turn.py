"""The first turn, wall time: ``acp-notebook run "/help"`` and the first ``%acp /help`` after
``%load_ext``, each against the same turn by a minimal stdlib client (``stdlib_client.py``)
with the same agent (the demo agent, whose own start is in both figures). Reported with
their medians, never gated: wall time follows the machine's load. The CPU of the same turn
is counted in instructions (``instructions.py``).

- ``acp-notebook run "/help"``: wall time of a fresh process until it exits; the baseline
  is ``python stdlib_client.py`` the same way.
- the first ``%acp /help``: wall time of the magic in a fresh process with an IPython shell
  made and ``%load_ext acp_notebook`` done (what a fresh kernel has after its first cell);
  the baseline is ``stdlib_client.turn`` in the same kind of process.

Alternating runs, medians."""

from __future__ import annotations

import resource
import statistics
import subprocess
import sys
import time

from .child import ROOT, child_env, last_line
from .instructions import AGENT, PROMPT, clients
from .table import Row

SHELL_CHILD = """
import contextlib, io, sys, time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
if sys.argv[1] == "acp":
    shell.run_line_magic("load_ext", "acp_notebook")
    turn = lambda: shell.run_line_magic("acp", sys.argv[2])
else:
    sys.path.insert(0, "benchmarks")
    import stdlib_client
    turn = lambda: stdlib_client.turn(sys.argv[3:], sys.argv[2])
output = io.StringIO()
start = time.perf_counter()
with contextlib.redirect_stdout(output):
    turn()
seconds = time.perf_counter() - start
assert "/help" in output.getvalue() or sys.argv[1] != "acp", output.getvalue()[-2000:]
print(seconds)
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _process(client: str) -> float:
    """Wall seconds of one turn by a fresh client process."""
    return _process_command(clients(AGENT)[client])[0]


def _process_command(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (its children included) of one turn by ``command``."""
    cpu, start = _children_cpu(), time.perf_counter()
    out = subprocess.run(
        command,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=child_env(),
        timeout=120,
    )
    wall = time.perf_counter() - start
    if out.returncode != 0 or "end_turn" not in out.stdout:
        raise RuntimeError(f"{command}: {out.stdout[-500:]}{out.stderr[-1500:]}")
    return wall, _children_cpu() - cpu


def _in_shell(client: str) -> float:
    """Wall seconds of the first turn in a fresh process with an IPython shell."""
    return float(last_line(SHELL_CHILD, client, PROMPT, *AGENT, timeout=120))


def measure(quick: bool) -> list[Row]:
    # Quick: five, not three: three runs of the first `%acp` read 1.13-1.52x on one quiet
    # machine within a minute.
    reps = 5 if quick else 7
    # Warm-up, not counted: bytecode compiled, files in the page cache.
    _process("cli")
    _in_shell("acp")
    runs: dict[str, list[float]] = {"cli": [], "stdlib": [], "shell": [], "shell_stdlib": []}
    for _ in range(reps):
        runs["cli"].append(_process("cli"))
        runs["stdlib"].append(_process("stdlib"))
        runs["shell"].append(_in_shell("acp"))
        runs["shell_stdlib"].append(_in_shell("stdlib"))
    figures = [
        ('`acp-notebook run "/help"` wall', "cli", "stdlib"),
        ("first `%acp /help` after `%load_ext` in a fresh shell", "shell", "shell_stdlib"),
    ]
    return [
        Row(
            f"{figure} (median of {reps})",
            statistics.median(runs[ours]) * 1000,
            statistics.median(runs[theirs]) * 1000,
            "stdlib client, same agent",
            "ms",
            limit=1.5,
        )
        for figure, ours, theirs in figures
    ]


if __name__ == "__main__":
    from .table import format_table

    print(format_table(measure("--quick" in sys.argv)))
