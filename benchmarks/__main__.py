"""``python -m benchmarks [--quick] [--only NAME ...] [--json-out FILE]``: every benchmark, one
table (figure, value, baseline measured in the same run, ratio, budget, pass/fail), then one
JSON line with every row. Exit status 1 when a budget does not hold.

``--quick`` uses small sizes (tests/test_benchmarks.py runs it in CI); budgets are ratios to
baselines of the same run, so a slow machine slows both sides alike."""

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

from . import first_turn, ingest, inspector_overhead, kernel_turns, sandbox, sizes, startup
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
    "ingest": ingest.measure,
    "kernel": kernel_turns.measure,
    "inspector": inspector,
    "sizes": sizes.measure,
    "sandbox": sandbox.measure,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small sizes (CI)")
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), help="run only these")
    parser.add_argument("--json-out", type=Path, help="append the JSON record to this file")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    started = time.monotonic()
    for name in args.only or list(BENCHMARKS):
        print(f"running {name}…", file=sys.stderr, flush=True)
        rows.extend(BENCHMARKS[name](args.quick))
    print(format_table(rows))
    record = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average": os.getloadavg(),
        "quick": args.quick,
        "seconds": round(time.monotonic() - started, 1),
        "rows": [row.record() for row in rows],
    }
    line = json.dumps(record, ensure_ascii=False)
    print(line)
    if args.json_out is not None:
        with args.json_out.open("a") as out:
            out.write(line + "\n")
    return 0 if all(row.ok for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
