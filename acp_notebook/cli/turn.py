"""The turn of ``acp-notebook run`` over an agent process already started (:mod:`.run`):
the handshake, the session, the answers on the terminal, the printed transcript and the
exit code."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING

from ..client.connection import START_TIMEOUT, ClientConnection
from ..client.errors import AcpClientError, AuthRequired, HandshakeTimeout, TurnTimeout
from ..client.handshake import handshake_limit
from ..client.presets import LaunchSpec
from ..client.secrets import redacting
from ..client.session import DEFAULT_CANCEL_GRACE, PromptTurn, Session
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.process import AgentProcess, AgentStartError
from ..protocol.trace_event import Observer
from .exits import EXIT_USAGE, fail
from .hints import auth_hint, missing_vars
from .prompts import Console, elicitation_asker, permission_asker
from .terminal_render import StartProgress, use_color

if TYPE_CHECKING:
    from ..client.rules import PermissionRules
    from ..client.text_stream import TextPrinter

__all__ = ["run_turn"]


async def run_turn(
    args: argparse.Namespace,
    spec: LaunchSpec,
    process: AgentProcess,
    *,
    env: Mapping[str, str],
    cwd: str,
    rules: PermissionRules | None,
    trace_file: IO[str] | None,
    progress: StartProgress,
) -> int:
    """Run the turn; the exit code."""
    #: The agent as the user named it (a preset, or a command line): what hints repeat.
    agent = args.agent or spec.name
    policy = args.permissions
    given = dict(args.env)
    observers = [redacting(_trace_writer(trace_file), given.values)] if trace_file else []
    interactive = policy == "ask" and sys.stdin.isatty()
    grace = DEFAULT_CANCEL_GRACE if args.cancel_grace is None else args.cancel_grace
    try:
        async with ClientConnection.over_process(
            process, observers=observers, cancel_grace=grace
        ) as conn:
            # --timeout bounds each handshake request too (at least HANDSHAKE_FLOOR).
            try:
                await conn.initialize(timeout=handshake_limit(args.timeout, START_TIMEOUT))
            finally:
                progress.done()
            if args.auth:
                problem = _auth_problem(conn, args.auth, env)
                if problem:
                    return fail(problem, EXIT_USAGE)
                await conn.authenticate(args.auth, timeout=handshake_limit(args.timeout, None))
            session = await conn.new_session(
                cwd,
                additional_directories=args.add_dir,
                policy=policy,
                interactive=interactive,
                timeout=handshake_limit(args.timeout, None),
                # No env: --env variables reach only the agent, never its terminals.
            )
            session.permissions.rules = rules or None
            async with Console() as console:
                if sys.stdin.isatty():
                    # Whatever the policy, an `ask` rule (or the safeguard), and a write to a
                    # protected path (client/guard.py), ask on the terminal.
                    session.permissions.asker = permission_asker(session, console)
                if interactive:
                    session.elicitations.asker = elicitation_asker(session, console)
                printer = _printer(session) if _for_terminal(args) else None
                if printer is not None:
                    console.before_question = printer.settle  # a question is not erased
                if printer is not None and session.sandbox:
                    _header(f"{spec.display_name} · {session.sandbox}")
                turn = await session.prompt(args.prompt, timeout=args.timeout)
            if turn.timed_out:
                # The agent is ended before the failure is told, and that says what ended.
                ended = await process.shutdown()
                if isinstance(turn.exception, TurnTimeout):  # it ignored session/cancel
                    turn.error = turn.exception.sentence(ended)
            if isinstance(turn.exception, AuthRequired):
                hint = auth_hint(agent, spec.command_line, turn.exception.auth_methods)
                turn.error = f"{turn.error} To log in, {hint}."
            if printer is not None:
                printer.close()
                return _report_streamed(printer, turn, args.timeout)
            return _report(turn, args.timeout)
    except AuthRequired as exc:
        return fail(f"{exc} To log in, {auth_hint(agent, spec.command_line, exc.auth_methods)}.")
    except HandshakeTimeout as exc:
        return fail(exc.sentence(await process.shutdown()))
    except (AgentStartError, ConnectionClosed, AcpClientError) as exc:
        return fail(str(exc))
    except RpcError as exc:
        return fail(f"The agent answered with an error: {exc}")


def _auth_problem(conn: ClientConnection, method_id: str, env: Mapping[str, str]) -> str | None:
    """Why ``--auth METHOD_ID`` cannot work, before trying: the variables an ``env_var``
    method reads are not set (the agent reads them from its environment)."""
    method = next((info for info in conn.auth_method_infos if info.id == method_id), None)
    missing = missing_vars(method, env) if method is not None else []
    if not missing:
        return None
    names = " and ".join(missing)
    return (
        f"The auth method `{method_id}` reads {names} from the agent's environment, and it is "
        f"not set: export it, or pass `--env {missing[0]}=…`."
    )


def _trace_writer(trace_file: IO[str]) -> Observer:
    from ..client.trace import TraceWriter  # only with --trace

    return TraceWriter(trace_file)


def _header(line: str) -> None:
    """How the agent runs, before a streamed turn: on stderr, as the start-up lines (stdout
    stays the turn's own text)."""
    if use_color(sys.stderr):
        from pygments.console import colorize  # only for a terminal

        line = colorize("faint", line)
    print(line, file=sys.stderr)


def _printer(session: Session) -> TextPrinter:
    """The turn streamed on the terminal as it happens."""
    from ..client.text_stream import TextPrinter  # only for a terminal (pygments)

    # On a terminal the plan is redrawn in place; a pipe gets each changed plan once.
    return TextPrinter(
        session, sys.stdout, color=use_color(sys.stdout), live_plan=sys.stdout.isatty()
    )


def _for_terminal(args: argparse.Namespace) -> bool:
    """Stream for a terminal (``--format terminal``, or ``auto`` with stdout a TTY)."""
    return args.format == "terminal" or (args.format == "auto" and sys.stdout.isatty())


def _report_streamed(printer: TextPrinter, turn: PromptTurn, timeout: float | None) -> int:
    """After a streamed turn: how it ended (already on screen), and the exit code."""
    if turn.record is not None:
        printer.footer(turn.record)
    if turn.stop_reason is not None and not turn.timed_out:
        return 0
    if turn.timed_out:
        return fail(turn.error or _not_finished(timeout))
    return fail(turn.error or _NO_STOP)


_NO_STOP = "The turn ended without a stop reason."


def _not_finished(timeout: float | None) -> str:
    return f"The agent did not finish within {timeout or 0:g} s; the turn was cancelled and the agent stopped."


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
        return fail(turn.error or _not_finished(timeout))
    return fail(turn.error or _NO_STOP)
