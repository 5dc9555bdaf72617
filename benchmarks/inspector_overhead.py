"""What the live inspector costs a streaming turn: ``/long N`` with and without it attached.

The notebook layer without a kernel (``NotebookAgents``: its agent loop thread and the real
demo agent): one session, turns of ``/long N`` alternating between

(a) ``bare``: the message log records every message (it always does), nobody watches;
(b) ``inspected``: ``%acp --inspect``'s view follows the log (poked per message, coalesced
    refreshes on the loop thread, the rows rebuilt incrementally).

For each turn: wall seconds from sending ``session/prompt`` to its answer, and this
process's CPU seconds over the same span (``getrusage``: the client's side; the demo agent
is another process). Medians over the repetitions; (b)/(a) is the overhead. The turn view
is not attached in either, so the ratio is against a turn with no widget work at all.

Budget: (b)'s median wall time at most 1.1× (a)'s (both in the same run). The wall time
of one turn is the demo agent's pace and is bimodal (twelve bare turns in a row on a quiet
machine: 0.47–1.31 s at 0.23–0.34 s of client CPU each), so nine repetitions per mode: with
five, the same code's ratio read 0.73, 1.16 and 0.93 in three runs.

usage: python -m benchmarks.inspector_overhead [--quick] [-n 3000] [--reps 9]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from typing import Any

BUDGET = 1.1


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def run(
    quick: bool = False, *, chunks: int | None = None, reps: int | None = None
) -> dict[str, Any]:
    """Measure; one row of the benchmark table (figure, baseline, ratio, budget, passed)."""
    from acp_notebook.notebook.controls import REGISTRY, ControlContext
    from acp_notebook.notebook.controls import run as run_control
    from acp_notebook.notebook.controls.timeline import InspectorDisplay
    from acp_notebook.notebook.runtime.agents import NotebookAgents

    chunks = chunks or (500 if quick else 3000)
    reps = reps or (2 if quick else 9)
    timings: dict[str, list[tuple[float, float]]] = {"bare": [], "inspected": []}
    with tempfile.TemporaryDirectory() as cwd:
        agents = NotebookAgents(cwd=cwd)
        try:
            ctx = ControlContext(agents, "demo", policy="allow")

            def turn() -> tuple[float, float]:
                async def prompt() -> tuple[float, float]:
                    session = await ctx.open_session()
                    wall, cpu = time.perf_counter(), _cpu()
                    done = await session.prompt(f"/long {chunks}")
                    if done.stop_reason != "end_turn":
                        raise RuntimeError(f"/long ended with {done.stop_reason or done.error}")
                    return time.perf_counter() - wall, _cpu() - cpu

                result: tuple[float, float] = agents.loop.run(prompt, timeout=600)
                return result

            turn()  # warm-up: the agent starts, the session opens, imports settle
            for _ in range(reps):
                timings["bare"].append(turn())
                display = run_control(
                    REGISTRY["inspector"], ControlContext(agents, "demo", interactive=True)
                )
                assert isinstance(display, InspectorDisplay)
                timings["inspected"].append(turn())
                display.view.refresh()  # what it shows once the traffic pauses (checked rows)
                display.close()
        finally:
            agents.shutdown()

    def median(mode: str, index: int) -> float:
        return statistics.median(t[index] for t in timings[mode])

    wall_ratio = median("inspected", 0) / median("bare", 0)
    cpu_ratio = median("inspected", 1) / median("bare", 1)
    return {
        "name": f"inspector overhead, /long {chunks} wall (inspected / bare)",
        "figure": round(median("inspected", 0), 4),
        "baseline": round(median("bare", 0), 4),
        "ratio": round(wall_ratio, 3),
        "budget": BUDGET,
        "passed": wall_ratio <= BUDGET,
        "cpu_ratio": round(cpu_ratio, 3),
        "unit": "s",
        "runs": {mode: [list(t) for t in runs] for mode, runs in timings.items()},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes (tests)")
    parser.add_argument("-n", type=int, default=None, help="chunks of the /long turn")
    parser.add_argument("--reps", type=int, default=None)
    args = parser.parse_args(argv)
    row = run(args.quick, chunks=args.n, reps=args.reps)
    print(
        f"{row['name']}: {row['figure']:.3f} s vs {row['baseline']:.3f} s, "
        f"ratio {row['ratio']:.3f} (budget {row['budget']}) "
        f"{'pass' if row['passed'] else 'FAIL'}; CPU ratio {row['cpu_ratio']:.3f}"
    )
    print(json.dumps(row))
    return 0 if row["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
