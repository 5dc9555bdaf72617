"""Start-up and steady-state cost of the generated protocol models.

Each repetition is a fresh Python process (``--child``) that measures, in order:

- ``import pydantic``: the floor every version pays (``BaseModel``, ``Field``, ``TypeAdapter``…);
- ``import models``: ``import acp_notebook.protocol.models`` on top of it;
- ``first parse``: the first ``SessionNotification.parse`` of an ``agent_message_chunk``
  (with lazily built models, this is where the validators the chunk needs get built);
- ``first to_wire``: the first ``to_wire()`` of that notification (builds the serializer);
- ``steady state``: parse and re-serialise ``--chunks`` distinct chunks, after a warm-up
  (the fastest of three rounds);
- how many model classes are built after the first parse, out of all of them;
- ``first schema check``: the first ``conformance.schema_errors`` of a chunk message (it imports
  ``jsonschema``, whose optional format checkers can dominate: see the JSON record's wall times);
- ``schema check per chunk``: the steady cost of that check, over 1,000 chunk messages.

``--baseline DIR`` also runs the same child against another checkout (for example
``git archive main acp_notebook | tar -x -C DIR``), alternating with this one, and prints before / after / ratio, so both
are measured in the same run on the same machine. Figures are CPU time of the process
(``time.process_time``), which a busy machine disturbs far less than wall time; the JSON record
has the wall times too. Bytecode is compiled once beforehand (in a temporary
``PYTHONPYCACHEPREFIX``), as it is for an installed package, so compiling the sources is not
counted. Medians over ``--reps`` processes; the last line of output is a JSON
record with every figure.

usage: python benchmarks/models_import.py [--reps 7] [--chunks 10000] [--baseline DIR]
                                          [--source DIR] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: (key, label, unit) of each figure, in table order; times are CPU time.
FIGURES = [
    ("import_pydantic_ms", "import pydantic", "ms"),
    ("import_models_ms", "import acp_notebook.protocol.models (after pydantic)", "ms"),
    ("first_parse_ms", "first SessionNotification.parse(agent_message_chunk)", "ms"),
    ("first_to_wire_ms", "first to_wire() of it", "ms"),
    ("steady_ms", "parse + to_wire of N chunks, steady state", "ms"),
    ("built_after_first_parse", "model classes built after the first parse", "count"),
    ("first_check_ms", "first schema_errors() of a chunk message (imports jsonschema)", "ms"),
    ("check_us", "schema_errors() of one chunk message, steady state", "µs"),
]
CHECKS = 1000
#: The steady loop runs this many times per process; the fastest counts (the others were
#: slowed by neighbours on the machine, not by the code).
STEADY_ROUNDS = 3


class Stopwatch:
    """Named spans of CPU and wall time: ``figures[name]`` (CPU ms), ``figures[name_wall]``."""

    def __init__(self) -> None:
        self.figures: dict[str, float] = {}
        self.restart()

    def restart(self) -> None:
        self.cpu, self.wall = time.process_time(), time.perf_counter()

    def lap(self, name: str) -> None:
        cpu, wall = time.process_time(), time.perf_counter()
        self.figures[f"{name}_ms"] = (cpu - self.cpu) * 1e3
        self.figures[f"{name}_wall_ms"] = (wall - self.wall) * 1e3
        self.cpu, self.wall = cpu, wall


def child(chunks: int) -> dict[str, Any]:
    """Runs in a fresh interpreter: measure once, return the figures."""
    watch = Stopwatch()
    # The floor: what any version of the models imports from pydantic.
    from pydantic import BaseModel, BeforeValidator, Discriminator, Field, Tag, TypeAdapter  # noqa: F401

    watch.lap("import_pydantic")
    from acp_notebook.protocol import models as m
    from acp_notebook.protocol.modelbase import AcpModel

    watch.lap("import_models")
    first = {"sessionId": "s", "update": _chunk(-1)}
    parsed = m.SessionNotification.parse(first)
    watch.lap("first_parse")
    wire = parsed.to_wire()
    watch.lap("first_to_wire")
    assert wire == first, wire
    assert isinstance(parsed.update, m.AgentMessageChunk)

    # Every model class: those the parse did not use are made now (each is made on first use).
    every = (getattr(m, name) for name in m.__all__)
    classes = [c for c in every if isinstance(c, type) and issubclass(c, AcpModel)]
    built = sum(1 for c in classes if c.__pydantic_complete__)

    data = [{"sessionId": "s", "update": _chunk(i)} for i in range(chunks)]
    parse = m.SessionNotification.parse
    for item in data[:1000]:  # warm-up: caches and the allocator
        parse(item).to_wire()
    rounds = []
    for _ in range(STEADY_ROUNDS):
        watch.restart()
        for item in data:
            parse(item).to_wire()
        watch.lap("steady")
        rounds.append((watch.figures["steady_ms"], watch.figures["steady_wall_ms"]))
    watch.figures["steady_ms"], watch.figures["steady_wall_ms"] = min(rounds)

    from acp_notebook.protocol.conformance import schema_errors

    messages = [{"jsonrpc": "2.0", "method": "session/update", "params": p} for p in data[:CHECKS]]
    watch.restart()
    assert schema_errors(messages[0], sender="agent") == []
    watch.lap("first_check")
    for message in messages:
        schema_errors(message, sender="agent")
    watch.lap("checks")
    return {
        **watch.figures,
        "check_us": watch.figures["checks_ms"] * 1e3 / CHECKS,
        "built_after_first_parse": built,
        "model_classes": len(classes),
        "models_file": m.__file__,
    }


def _chunk(i: int) -> dict[str, Any]:
    return {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": f"chunk {i}: some streamed words "},
    }


def run_child(source: Path, chunks: int, pycache: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(source), "PYTHONPYCACHEPREFIX": str(pycache)}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed package has its bytecode compiled
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", "--chunks", str(chunks)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    # PYTHONPATH must win over the editable install, or both columns measure the same code.
    if not Path(result["models_file"]).resolve().is_relative_to(source.resolve()):
        raise SystemExit(f"{source}: imported {result['models_file']} instead")
    return result


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    return {key: statistics.median(r[key] for r in runs) for key, _, _ in FIGURES}


def fmt(value: float, unit: str) -> str:
    return f"{value:.0f}" if unit == "count" else f"{value:.1f} {unit}"


def table(columns: dict[str, dict[str, float]], chunks: int, total: int) -> str:
    names = list(columns)
    header = ["figure", *names] + (["ratio"] if len(names) == 2 else [])
    rows = [header, ["---"] * len(header)]
    for key, label, unit in FIGURES:
        label = label.replace("N chunks", f"{chunks:,} chunks")
        if unit == "count":
            label += f" (of {total})"
        row = [label, *(fmt(columns[n][key], unit) for n in names)]
        if len(names) == 2:
            before, after = columns[names[0]][key], columns[names[1]][key]
            row.append(f"{after / before:.2f}×" if before else "–")
        rows.append(row)
    per_chunk = ", ".join(
        f"{n}: {columns[n]['steady_ms'] * 1e3 / chunks:.2f} µs/chunk" for n in names
    )
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([*lines, "", f"steady state per chunk — {per_chunk}"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=7, help="fresh processes per column")
    parser.add_argument("--chunks", type=int, default=10_000, help="chunks in the steady loop")
    parser.add_argument("--source", type=Path, default=ROOT, help="checkout to measure")
    parser.add_argument("--baseline", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--json-out", type=Path, help="also write the JSON record here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.chunks)))
        return 0

    sources = {"this": args.source}
    if args.baseline is not None:
        sources = {"baseline": args.baseline, "this": args.source}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in sources}
    with tempfile.TemporaryDirectory(prefix="models-import-pycache-") as pycache:
        for source in sources.values():  # warm-up: compile the bytecode, as an install does
            run_child(source, 10, Path(pycache))
        for _ in range(args.reps):
            for name, source in sources.items():  # alternating, so load affects both alike
                runs[name].append(run_child(source, args.chunks, Path(pycache)))
    columns = {name: medians(r) for name, r in runs.items()}
    total = runs["this"][0]["model_classes"]
    print(f"CPU time, median of {args.reps} fresh processes; Python {sys.version.split()[0]}")
    print(table(columns, args.chunks, total))
    record = {
        "benchmark": "models_import",
        "chunks": args.chunks,
        "reps": args.reps,
        "medians": columns,
        "runs": runs,
    }
    if args.json_out:
        args.json_out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
