"""The CPU of a turn as instructions: valgrind's callgrind counts every
instruction each process runs, the same to about 0.1 % from run to run whatever else the
machine is doing (CPU seconds on a shared 2-core machine spread by 20 % or more).

Each client runs the same turn with the same agent (the demo agent) under
``valgrind --tool=callgrind --trace-children=yes``: one count per process, each logged with
its command line. The agent is left out (``--trace-children-skip``: it runs at its own
speed and is in no count); every other process is the client's (``acp-notebook run``'s
supervisor included).

- ``acp-notebook run "/help"``, client + supervisor: the gated row, at most 1.0× the
  official Python SDK's client (``sdk_client.py``) doing the same turn.
- the sandbox's cost: the same turn confined as by default against ``--sandbox off``, client
  + supervisor (gated: at most 1.05×). Valgrind 3.19 (Debian 12's) does not know Landlock's
  system calls (unhandled: ENOSYS), so under it the client finds no Landlock and confines
  with bubblewrap; the row names what confined the counted run, and with nothing to confine
  it the run stops and says so. The client's work is the same either way (the probe, the
  writable paths, the supervisor's options; bubblewrap adds one search of ``PATH``); the
  confined child's own work before its ``exec`` (with Landlock: loading ``landlock.py``
  and its system calls, about a millisecond) is in no count: valgrind keeps none for a
  process that executes a skipped program.
- reported: the SDK client, the stdlib client (``stdlib_client.py``, the least a client can
  do) and the anyio + pydantic floor (``stack_floor_client.py``).
- ingest: ``acp-notebook run --format markdown`` reading ``producer.py``'s N-chunk turn less
  its one-chunk turn, per chunk (gated: at most 2× the stdlib client's ``readline`` +
  ``json.loads`` the same way).

``python -m benchmarks.instructions [--keep DIR]`` prints every process's count (``--keep``
keeps the callgrind files, for ``callgrind_annotate``)."""

from __future__ import annotations

import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .child import ROOT, child_env
from .table import Row

AGENT = [sys.executable, "-m", "acp_notebook.agents.demo"]
PROMPT = "/help"
VALGRIND = "valgrind"
#: Agents under callgrind are scripts named so (valgrind leaves them out).
AGENT_SCRIPT = "bench-agent-"
MISSING = "valgrind is not installed, so no instructions can be counted: install it (apt-get install valgrind)."


class Unconfined(RuntimeError):
    """Nothing confined the default turn under valgrind: the sandbox row cannot be counted."""


UNCONFINED = (
    "Under valgrind nothing confined the default `acp-notebook run` (valgrind has no Landlock "
    "system calls and bubblewrap is not installed), so the sandbox's cost cannot be counted: "
    "install bubblewrap (apt-get install bubblewrap)."
)
#: Chunks of the ingest turn (``producer.py``), counted less a one-chunk turn.
INGEST_CHUNKS = 20_000


def clients(agent: list[str]) -> dict[str, list[str]]:
    """Each client's command for the turn with ``agent``; each prints the stop reason.
    ``cli`` is confined as by default, ``cli-unconfined`` the same with ``--sandbox off``."""
    scripts = ROOT / "benchmarks"
    cli = [sys.executable, "-m", "acp_notebook.cli", "run", "--agent", shlex.join(agent)]
    return {
        "cli": [*cli, PROMPT],
        "cli-unconfined": [*cli, "--sandbox", "off", PROMPT],
        "sdk": [sys.executable, str(scripts / "sdk_client.py"), PROMPT, *agent],
        "stdlib": [sys.executable, str(scripts / "stdlib_client.py"), PROMPT, *agent],
        "floor": [sys.executable, str(scripts / "stack_floor_client.py"), PROMPT, *agent],
    }


@dataclass(frozen=True)
class Process:
    """One process of a counted run: its command line and its instructions."""

    command: str
    instructions: int


@dataclass(frozen=True)
class Turn:
    """A client's counted turn: every process but the agent's."""

    processes: tuple[Process, ...]

    @property
    def client(self) -> int:
        return sum(p.instructions for p in self.processes)

    @property
    def confined_by(self) -> str | None:
        """What the supervisor was told to confine the agent with (``landlock``,
        ``bwrap``), from its command line; None when it confined nothing."""
        for process in self.processes:
            words = shlex.split(process.command)
            if any(word.endswith("supervisor.py") for word in words):
                for mechanism in ("landlock", "bwrap"):
                    if f"--{mechanism}" in words:
                        return mechanism
        return None


def available() -> bool:
    """Whether valgrind can be run here."""
    return shutil.which(VALGRIND) is not None


def read_logs(directory: Path) -> tuple[Process, ...]:
    """The command line and instruction count of each process valgrind logged.

    A process forked by a counted one starts under valgrind with its parent's command line
    and leaves it when it executes the agent (skipped): its log has no count, and nothing
    of it is counted (a few instructions between fork and exec). Any other log without a
    count is a process that did not end (or was killed): an error."""
    logs: dict[int, tuple[str, int, int | None, str]] = {}
    for log in glob.glob(str(directory / "valgrind.*.log")):
        text = Path(log).read_text(errors="replace")
        fields = [
            re.search(rf"^==\d+== {field}: ?(.*)$", text, re.MULTILINE)
            for field in ("Command", "Parent PID", "Collected ")
        ]
        command, parent, collected = (found.group(1) if found else None for found in fields)
        logs[int(Path(log).name.split(".")[1])] = (
            command or "",
            int(parent or 0),
            None if collected is None else int(collected),
            text,
        )
    processes = []
    for pid, (command, parent_pid, instructions, text) in sorted(logs.items()):
        if instructions is not None:
            processes.append(Process(command, instructions))
        elif parent_pid not in logs or logs[parent_pid][0] != command:
            raise RuntimeError(f"callgrind did not finish process {pid}: {text[-1500:]}")
    return tuple(processes)


def count(command: list[str], keep: Path | None = None, timeout: float = 900) -> Turn:
    """Run ``command`` under callgrind (its children too); each process's count."""
    directory = Path(tempfile.mkdtemp(prefix="bench-callgrind-"))
    try:
        out = subprocess.run(
            [
                VALGRIND,
                "--tool=callgrind",
                "--trace-children=yes",
                f"--trace-children-skip=*/{AGENT_SCRIPT}*",
                f"--callgrind-out-file={directory}/callgrind.out.%p",
                f"--log-file={directory}/valgrind.%p.log",
                *command,
            ],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=_env(),
            timeout=timeout,
        )
        if out.returncode != 0 or "end_turn" not in out.stdout:
            raise RuntimeError(f"{command[:3]}: {out.stdout[-500:]}{out.stderr[-1500:]}")
        turn = Turn(read_logs(directory))
        if keep is not None:
            keep.mkdir(parents=True, exist_ok=True)
            for path in directory.iterdir():
                shutil.copy(path, keep / path.name)
        return turn
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _env() -> dict[str, str]:
    # A fixed hash seed: the order of sets and dicts of strings, and so the work, is the
    # same in every run (a random one moves the counts by about 0.1 %).
    return {**child_env(), "PYTHONHASHSEED": "0"}


def _warm(command: list[str]) -> None:
    """Run ``command`` once without valgrind: bytecode compiled, so no count includes it."""
    subprocess.run(command, capture_output=True, cwd=ROOT, env=_env(), timeout=120, check=True)


def agent_script(
    directory: Path, command: list[str] | None = None, name: str = "demo"
) -> list[str]:
    """An agent (the demo agent unless ``command``) as a script of its own in ``directory``:
    valgrind skips it by name, so it runs at its own speed and no count includes it (a
    traced agent takes seconds to end, past the grace the client gives it before SIGTERM
    and SIGKILL, which then cut short the count of the supervisor)."""
    script = directory / f"{AGENT_SCRIPT}{name}"
    script.write_text(f'#!/bin/sh\nexec {shlex.join(command or AGENT)} "$@"\n')
    script.chmod(0o755)
    return [str(script)]


def ingest_clients(directory: Path) -> dict[str, list[str]]:
    """``acp-notebook run`` (its transcript printed as Markdown) and the stdlib client
    (``readline`` + ``json.loads`` a line) reading ``producer.py``'s N-chunk and one-chunk
    turns."""
    commands = {}
    for chunks in (INGEST_CHUNKS, 1):
        producer = [sys.executable, str(ROOT / "benchmarks" / "producer.py"), str(chunks)]
        agent = agent_script(directory, producer, f"producer-{chunks}")
        cli = [sys.executable, "-m", "acp_notebook.cli", "run", "--format", "markdown"]
        commands[f"ingest-cli-{chunks}"] = [*cli, "--agent", shlex.join(agent), "go"]
        stdlib = [sys.executable, str(ROOT / "benchmarks" / "stdlib_client.py"), "go"]
        commands[f"ingest-stdlib-{chunks}"] = [*stdlib, *agent]
    return commands


def turns(keep: Path | None = None) -> dict[str, Turn]:
    """Every client's counted turn."""
    directory = Path(tempfile.mkdtemp(prefix="bench-agent-"))
    try:
        commands = {**clients(agent_script(directory)), **ingest_clients(directory)}
        for command in commands.values():
            _warm(command)
        # Side by side, one per core: a count does not depend on what else runs.
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            counted = {
                name: pool.submit(count, command, keep / name if keep else None)
                for name, command in commands.items()
            }
            return {name: future.result() for name, future in counted.items()}
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def per_chunk(counted: dict[str, Turn], client: str) -> float:
    """Instructions per chunk of ``client``'s ingest: the N-chunk turn less the one-chunk."""
    many, one = counted[f"ingest-{client}-{INGEST_CHUNKS}"], counted[f"ingest-{client}-1"]
    return (many.client - one.client) / (INGEST_CHUNKS - 1)


#: How each mechanism is named in the sandbox row.
CONFINED_BY = {"landlock": "Landlock", "bwrap": "bubblewrap: valgrind has no Landlock calls"}


def sandbox_row(confined: Turn, unconfined: Turn) -> Row:
    """The sandbox's cost: the default (confined) turn against ``--sandbox off``."""
    mechanism = confined.confined_by
    if mechanism is None or unconfined.confined_by is not None:
        raise Unconfined(UNCONFINED)
    return Row(
        f'`acp-notebook run "/help"` confined as by default ({CONFINED_BY[mechanism]}), '
        "instructions, client + supervisor (callgrind)",
        confined.client / 1e6,
        unconfined.client / 1e6,
        "the same turn with --sandbox off",
        "M",
        limit=1.05,
        gated=True,
    )


def rows(counted: dict[str, Turn]) -> list[Row]:
    cli, sdk = counted["cli"], counted["sdk"]
    stdlib, floor = counted["stdlib"], counted["floor"]
    return [
        Row(
            '`acp-notebook run "/help"` instructions, client + supervisor (callgrind)',
            cli.client / 1e6,
            sdk.client / 1e6,
            "official Python SDK client, same turn",
            "M",
            limit=1.0,
            gated=True,
        ),
        sandbox_row(cli, counted["cli-unconfined"]),
        Row(
            "… the stdlib client's instructions (callgrind)",
            stdlib.client / 1e6,
            sdk.client / 1e6,
            "official Python SDK client",
            "M",
            limit=float("inf"),
        ),
        Row(
            "… the stack's floor: a minimal anyio + pydantic client's instructions (callgrind)",
            floor.client / 1e6,
            stdlib.client / 1e6,
            "stdlib client",
            "M",
            limit=float("inf"),
        ),
        Row(
            "… `acp-notebook run` client + supervisor against that floor (callgrind)",
            cli.client / 1e6,
            floor.client / 1e6,
            "anyio + pydantic client",
            "M",
            limit=float("inf"),
        ),
        Row(
            f"ingest instructions per chunk, `acp-notebook run`, transcript printed "
            f"({INGEST_CHUNKS:,} chunks less one; callgrind)",
            per_chunk(counted, "cli"),
            per_chunk(counted, "stdlib"),
            "stdlib client: readline + json.loads",
            "instructions",
            limit=2.0,
            gated=True,
        ),
    ]


def measure(quick: bool) -> list[Row]:
    """The rows (the counts are exact, so ``quick`` changes nothing)."""
    if not available():
        raise RuntimeError(MISSING)
    return rows(turns())


def main(argv: list[str]) -> None:
    keep = Path(argv[argv.index("--keep") + 1]) if "--keep" in argv else None
    counted = turns(keep)
    for name, turn in counted.items():
        for process in turn.processes:
            print(f"{name:14} {process.instructions:>15,} {process.command}")
    from .table import format_table

    print(format_table(rows(counted)))


if __name__ == "__main__":
    main(sys.argv[1:])
