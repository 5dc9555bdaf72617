"""``python -m benchmarks [--gate | --quick] [--only NAME ...] [--json-out FILE]``: one table
(figure, value, baseline measured in the same run, ratio, budget, verdict), then one JSON
line with every row.

``--gate`` runs only what CI gates: figures that do not depend on the machine's load, the
instructions of the CLI's ``/help`` turn against the official Python SDK's client (valgrind's
callgrind) and the bytes a streamed reply puts on the kernel's wire. The full table adds the
wall-clock and CPU-time rows, reported with their medians and never asserted. Exit status 1
when a gated budget does not hold, 2 when it cannot count (no valgrind; nothing to confine the
turn under valgrind). ``--quick``
uses small sizes."""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from pathlib import Path

from . import (
    first_turn,
    ingest,
    inspector_overhead,
    instructions,
    kernel_turns,
    sandbox,
    sizes,
    startup,
)
from .table import Row, format_table


def inspector(quick: bool) -> list[Row]:
    """benchmarks/inspector_overhead.py's row (the live inspector attached to a turn)."""
    row = inspector_overhead.run(quick)
    return [
        Row(
            row["name"], row["figure"], row["baseline"], "not inspected", row["unit"], row["budget"]
        )
    ]


BENCHMARKS: dict[str, Callable[[bool], list[Row]]] = {
    "startup": startup.measure,
    "first_turn": first_turn.measure,
    "instructions": instructions.measure,
    "ingest": ingest.measure,
    "kernel": kernel_turns.measure,
    "inspector": inspector,
    "sizes": sizes.measure,
    "sandbox": sandbox.measure,
}
#: What CI gates (``--gate``): counts, not times.
GATE: dict[str, Callable[[bool], list[Row]]] = {
    "instructions": instructions.measure,
    "wire": kernel_turns.wire,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument(
        "--gate", action="store_true", help="only the gated rows (instructions, wire bytes)"
    )
    parser.add_argument("--quick", action="store_true", help="small sizes")
    parser.add_argument(
        "--only", nargs="+", choices=sorted({*BENCHMARKS, *GATE}), help="run only these"
    )
    parser.add_argument("--json-out", type=Path, help="append the JSON record to this file")
    args = parser.parse_args(argv)
    benchmarks = {**BENCHMARKS, **GATE}
    names = args.only or list(GATE if args.gate else BENCHMARKS)
    if "instructions" in names and not instructions.available():
        if args.gate:
            print(instructions.MISSING, file=sys.stderr)
            return 2
        print(f"{instructions.MISSING} Its rows are left out.", file=sys.stderr)
        names = [name for name in names if name != "instructions"]
    rows: list[Row] = []
    started = time.monotonic()
    for name in names:
        print(f"running {name}…", file=sys.stderr, flush=True)
        try:
            rows.extend(benchmarks[name](args.quick))
        except instructions.Unconfined as exc:  # as for a missing valgrind: cannot count
            print(exc, file=sys.stderr)
            return 2
    print(format_table(rows))
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": os.getloadavg(),
        "quick": args.quick,
        "gate": args.gate,
        "seconds": round(time.monotonic() - started, 1),
        "rows": [row.record() for row in rows],
    }
    line = json.dumps(record, ensure_ascii=False)
    print(line)
    if args.json_out is not None:
        with args.json_out.open("a") as out:
            out.write(line + "\n")
    failed = [row.figure for row in rows if row.gated and not row.ok]
    if failed:
        print(f"gated budgets not held: {'; '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
