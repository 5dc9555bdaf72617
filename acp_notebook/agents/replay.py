"""Replay a recorded conversation as an agent: ``acp-notebook replay-agent TRACE``.

A trace (``acp-notebook run --trace``, ``acp.messages().save(...)``) holds every message
of a conversation as the client saw it. The replay agent walks it in order: a message
the agent sent is sent again; a message the client sent is waited for. So a bug report's
trace becomes a fake agent that reproduces the conversation — malformed lines included —
against any client, and a teaching notebook can show a real agent's session offline.

Ids: the live client's request ids replace the recorded ones in the answers; the agent's
own requests keep their recorded ids. A client message that differs from the recording
(another method) is reported on stderr and, if it is a request, answered with an error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any


@dataclass(frozen=True)
class Step:
    """One recorded message: sent by the agent (``agent``) or by the client."""

    agent: bool
    time: float
    message: dict[str, Any] | None = None
    invalid: str | None = None


def load_trace(path: str | Path) -> list[Step]:
    """The steps of a trace file (JSON Lines, the ``--trace`` format)."""
    steps = []
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 (closed below)
    except OSError as exc:
        raise SystemExit(f"replay-agent: cannot read the trace {path}: {exc.strerror}") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                direction = record["direction"]
            except (ValueError, KeyError, TypeError) as exc:
                raise SystemExit(
                    f"replay-agent: line {number} of {path} is not a trace record: {exc}"
                ) from None
            steps.append(
                Step(
                    agent=direction == "recv",  # recorded by the client: recv = from the agent
                    time=float(record.get("time", 0.0)),
                    message=record.get("message"),
                    invalid=record.get("invalid"),
                )
            )
    return steps


@dataclass
class Replayer:
    """Plays ``steps`` to ``out`` (the client's input), notes to ``err``; ``speed`` 0 plays
    as fast as possible, else at the recorded pace × ``speed``."""

    steps: list[Step]
    out: IO[bytes]
    err: IO[str]
    speed: float = 0.0
    #: recorded client request id (as JSON) -> the live client's id
    ids: dict[str, Any] = field(default_factory=dict)

    def send(self, message: dict[str, Any]) -> None:
        self.out.write(
            json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        )
        self.out.flush()

    def note(self, text: str) -> None:
        self.err.write(f"replay-agent: {text}\n")
        self.err.flush()

    def run(self, incoming: Iterator[dict[str, Any] | None]) -> int:
        previous: float | None = None
        for step in self.steps:
            if self.speed and previous is not None and step.agent:
                time.sleep(max(0.0, min(step.time - previous, 5.0)) / self.speed)
            previous = step.time
            if step.agent:
                self.play(step)
                continue
            live = next(incoming, None)
            if live is None:
                self.note("the client closed the connection before the recording ended")
                return 0
            self.match(step.message or {}, live)
        self.note("the recording is over; waiting for the client to close")
        for live in incoming:
            if live is not None and "id" in live and "method" in live:
                self.send(self.error(live["id"], "The recorded conversation is over."))
        return 0

    def play(self, step: Step) -> None:
        if step.message is None:
            self.out.write((step.invalid or "").encode() + b"\n")  # malformed lines too
            self.out.flush()
            return
        message = dict(step.message)
        if "method" not in message and "id" in message:
            # An answer to a client request: under the live client's id.
            message["id"] = self.ids.pop(json.dumps(message["id"]), message["id"])
        self.send(message)

    def match(self, recorded: dict[str, Any], live: dict[str, Any]) -> None:
        if "method" in recorded and "id" in recorded:
            if live.get("method") != recorded["method"]:
                self.note(f"expected {recorded['method']}, got {live.get('method')}")
                if "id" in live and "method" in live:
                    self.send(
                        self.error(live["id"], f"The recording expected {recorded['method']} here.")
                    )
                return
            self.ids[json.dumps(recorded["id"])] = live.get("id")
        elif "method" in recorded and live.get("method") != recorded["method"]:
            self.note(f"expected the notification {recorded['method']}, got {live.get('method')}")

    @staticmethod
    def error(request_id: Any, message: str) -> dict[str, Any]:
        return {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {"code": -32603, "message": f"replay-agent: {message}"},
        }


def read_messages(stream: IO[bytes]) -> Iterator[dict[str, Any] | None]:
    for line in stream:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict):
            yield message


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="acp-notebook replay-agent", description=__doc__.splitlines()[0]
    )
    parser.add_argument("trace", help="a trace file (JSON Lines, as written by --trace)")
    parser.add_argument(
        "--speed",
        type=float,
        default=0.0,
        help="replay at recorded pace × SPEED (0: as fast as possible)",
    )
    args = parser.parse_args(argv)
    steps = load_trace(args.trace)
    replayer = Replayer(steps, sys.stdout.buffer, sys.stderr, speed=args.speed)
    return replayer.run(read_messages(sys.stdin.buffer))


if __name__ == "__main__":
    sys.exit(main())
