"""``acp-notebook run PROMPT``: one prompt turn from a shell.

It prints the turn's transcript as Markdown on stdout and ends with the line
``stop reason: <stopReason>``. It exits 0 whenever the turn ended with a stop reason, and
non-zero with one line on stderr when the agent failed (exited, closed its output, or did
not answer within the timeout).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import IO

from ..agents.presets import AgentNotFound, resolve_agent
from ..client.connection import ClientConnection
from ..client.errors import AcpClientError, AuthRequired
from ..client.rules import PermissionRules
from ..client.session import PromptTurn
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.jsonrpc import TraceEvent
from ..protocol.process import AgentStartError
from .exits import EXIT_USAGE, fail
from .prompts import Console, elicitation_asker, permission_asker

__all__ = ["TraceWriter", "run"]


class TraceWriter:
    """``--trace FILE``: one JSON object per JSON-RPC message, flushed as it happens."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, event: TraceEvent) -> None:
        self.stream.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
        self.stream.flush()


async def run(args: argparse.Namespace) -> int:
    """Run the turn; the exit code."""
    try:
        spec = resolve_agent(args.agent)
    except AgentNotFound as exc:
        return fail(str(exc))
    env = {**spec.env, **dict(args.env)}
    cwd = os.path.abspath(args.cwd)
    policy = args.permissions
    try:
        rules = PermissionRules.parse(args.rule)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    trace_file = open(args.trace, "w", encoding="utf-8") if args.trace else None  # noqa: SIM115
    observers = [TraceWriter(trace_file)] if trace_file else []
    interactive = policy == "ask" and sys.stdin.isatty()
    try:
        async with ClientConnection.spawn(
            spec.argv,
            env=env,
            cwd=cwd,
            name=spec.name,
            observers=observers,
            cancel_grace=args.cancel_grace,
        ) as conn:
            await conn.initialize()
            if args.auth:
                await conn.authenticate(args.auth)
            session = await conn.new_session(
                cwd,
                additional_directories=args.add_dir,
                policy=policy,
                interactive=interactive,
                env=env,
            )
            session.permissions.rules = rules or None
            async with Console() as console:
                if sys.stdin.isatty():
                    # Whatever the policy, an `ask` rule (or the safeguard), and a write to a
                    # protected path (client/guard.py), ask on the terminal.
                    session.permissions.asker = permission_asker(session, console)
                if interactive:
                    session.elicitations.asker = elicitation_asker(session, console)
                turn = await session.prompt(args.prompt, timeout=args.timeout)
            return _report(turn, args.timeout)
    except AuthRequired as exc:
        return fail(str(exc) + " Pass --auth METHOD_ID.")
    except (AgentStartError, ConnectionClosed, AcpClientError) as exc:
        return fail(str(exc))
    except RpcError as exc:
        return fail(f"The agent answered with an error: {exc}")
    finally:
        if trace_file:
            trace_file.close()


def _report(turn: PromptTurn, timeout: float | None) -> int:
    """The transcript and the stop reason on stdout, or the failure on stderr."""
    if turn.record is not None and (
        turn.stop_reason is not None or turn.error is None or turn.timed_out
    ):
        sys.stdout.write(turn.bundle()["text/markdown"])
    if turn.stop_reason is not None and not turn.timed_out:
        sys.stdout.write(f"\nstop reason: {turn.stop_reason}\n")
        return 0
    if turn.timed_out:
        if turn.stop_reason is not None:
            sys.stdout.write(f"\nstop reason: {turn.stop_reason}\n")
        return fail(
            turn.error
            or f"The agent did not finish within {timeout or 0:g} s; the turn was cancelled and the agent stopped."
        )
    return fail(turn.error or "The turn ended without a stop reason.")
