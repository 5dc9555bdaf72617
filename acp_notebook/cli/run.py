"""``acp-notebook run PROMPT``: one prompt turn from a shell.

It prints the turn's transcript as Markdown on stdout and ends with the line
``stop reason: <stopReason>``. It exits 0 whenever the turn ended with a stop reason, and
non-zero with one line on stderr when the agent failed (exited, closed its output, or did
not answer within the timeout).
"""

from __future__ import annotations

import argparse
import os
import sys

from ..agents.presets import AgentNotFound, resolve_agent
from ..client.connection import ClientConnection
from ..client.errors import AcpClientError, AuthRequired
from ..client.rules import PermissionRules
from ..client.secrets import redacting
from ..client.session import PromptTurn
from ..client.trace import TraceWriter, open_private
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.process import AgentStartError
from .exits import EXIT_USAGE, fail
from .prompts import elicitation_asker, permission_asker

__all__ = ["run"]

#: The least time ``--timeout`` gives each handshake request.
HANDSHAKE_FLOOR = 10.0


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
    trace_file = open_private(args.trace) if args.trace else None
    given = dict(args.env)
    observers = [redacting(TraceWriter(trace_file), given.values)] if trace_file else []
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
            if args.timeout is not None:
                # Starting an agent takes seconds (an interpreter, npx): a turn timeout
                # shorter than that bounds the handshake at that floor, not below it.
                conn.handshake_timeout = max(args.timeout, HANDSHAKE_FLOOR)
            await conn.initialize()
            if args.auth:
                await conn.authenticate(args.auth)
            session = await conn.new_session(
                cwd,
                additional_directories=args.add_dir,
                policy=policy,
                interactive=interactive,
                # No env: --env variables reach only the agent, never its terminals.
            )
            session.permissions.rules = rules or None
            if interactive or (rules and sys.stdin.isatty()):
                # An `ask` rule (or the safeguard) asks on the terminal whatever the policy.
                session.permissions.asker = permission_asker(session)
            if interactive:
                session.elicitations.asker = elicitation_asker(session)
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
