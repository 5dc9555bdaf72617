"""What the sandbox costs a turn: ``acp-notebook run "/help"`` confined as by default
(Landlock applied by the supervisor before the agent's ``exec``) against the same turn with
``--sandbox off``, wall and CPU of a fresh process with its children (the agent and the
supervisor), alternating runs, medians. The budget is 1.05×; these rows are reported, not asserted
(a turn's CPU is measured to a few percent at best here): the gated figure is the same
comparison in instructions (``instructions.py``)."""

from __future__ import annotations

import statistics
import sys

from .first_turn import _process_command
from .instructions import AGENT, clients
from .table import Row


def measure(quick: bool) -> list[Row]:
    reps = 5 if quick else 9
    confined_command = clients(AGENT)["cli"]
    unconfined_command = [*confined_command[:-1], "--sandbox", "off", confined_command[-1]]
    _process_command(confined_command)  # warm-up: bytecode, page cache
    confined: list[tuple[float, float]] = []
    unconfined: list[tuple[float, float]] = []
    for _ in range(reps):
        confined.append(_process_command(confined_command))
        unconfined.append(_process_command(unconfined_command))
    return [
        Row(
            f'`acp-notebook run "/help"` confined (default) {what}, budget 1.05× (reported; median of {reps})',
            statistics.median(run[index] for run in confined) * 1000,
            statistics.median(run[index] for run in unconfined) * 1000,
            "the same with --sandbox off",
            "ms",
            limit=float("inf"),
        )
        for index, what in ((0, "wall"), (1, "CPU, agent included"))
    ]


if __name__ == "__main__":
    from .table import format_table

    print(format_table(measure("--quick" in sys.argv)))
