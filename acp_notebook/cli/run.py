"""``acp-notebook run PROMPT``: one prompt turn from a shell.

It prints the turn's transcript as Markdown on stdout and ends with the line
``stop reason: <stopReason>``. It exits 0 whenever the turn ended with a stop reason, and
non-zero with one line on stderr when the agent failed (exited, closed its output, or did
not answer within the timeout).

The agent is started first, with only what starting it needs loaded; the client
(:mod:`.turn`) loads while the agent starts: both import the protocol models, and one after
the other they made a fresh ``acp-notebook run`` wait for that twice. What only some turns
use (``--rule``, ``--trace``) is imported here only when given.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import IO, TYPE_CHECKING

from ..client.presets import AgentNotFound, resolve_agent
from ..protocol.process import AgentStartError, open_agent_process
from .exits import EXIT_USAGE, fail
from .terminal_render import StartProgress

if TYPE_CHECKING:
    from ..client.rules import PermissionRules

__all__ = ["run"]


async def run(args: argparse.Namespace) -> int:
    """Start the agent, then run the turn (:func:`.turn.run_turn`); the exit code."""
    try:
        spec = resolve_agent(args.agent)
    except AgentNotFound as exc:
        return fail(str(exc))
    cwd = os.path.abspath(args.cwd)
    try:
        confinement = spec.confinement(args.sandbox, [cwd, *args.add_dir], ports=args.allow_port)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    env = {**spec.confined_env(confinement), **dict(args.env)}
    if confinement.mode != "off" and not confinement.enforced:  # never silently
        print(f"acp-notebook: the agent runs {confinement.describe(cwd)}.", file=sys.stderr)
    try:
        rules = _rules(args.rule)
    except ValueError as exc:
        return fail(str(exc), EXIT_USAGE)
    trace_file = _trace_file(args.trace)
    progress = StartProgress(sys.stderr)
    try:
        async with open_agent_process(
            spec.confined_argv(confinement),
            env=env,
            cwd=cwd,
            name=spec.name,
            on_stderr=progress,
            confinement=confinement,
        ) as process:
            from .turn import run_turn  # while the agent starts

            return await run_turn(
                args,
                spec,
                process,
                env=env,
                cwd=cwd,
                rules=rules,
                trace_file=trace_file,
                progress=progress,
            )
    except AgentStartError as exc:
        return fail(str(exc))
    finally:
        if trace_file:
            trace_file.close()


def _rules(lines: list[str]) -> PermissionRules | None:
    """The ``--rule`` lines parsed before the agent starts (a malformed one is a usage
    error); None without any."""
    if not lines:
        return None
    from ..client.rules import PermissionRules

    return PermissionRules.parse(lines)


def _trace_file(path: str | None) -> IO[str] | None:
    if not path:
        return None
    from ..client.trace import open_private

    return open_private(path)
