"""The ``acp-notebook`` argument parser, the small commands, :func:`main`, and
:func:`entry` (the command as a process)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

import anyio

from ..client.policy import POLICIES
from ..client.presets import preset_table
from ..protocol.sandbox import MODES
from .exits import EXIT_INTERRUPTED, fail
from .output import terminal_safe_output
from .run import run

__all__ = ["build_parser", "entry", "main"]


def _env_pair(text: str) -> tuple[str, str]:
    """``--env NAME=VALUE``."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"takes NAME=VALUE, got {text!r}")
    return name, value


def _agents(args: argparse.Namespace) -> int:
    for row in preset_table():
        preset = row.preset
        print(f"{preset.id:14} {preset.name} — {row.status}")
        for option in row.options:
            mark = "✓" if option.available else "✗"
            print(
                f"    {mark} {option.method:8} {' '.join(option.argv)}"
                + ("" if option.available else f"  ({option.missing})")
            )
        if preset.auth:
            print(f"    auth: {preset.auth}")
        if preset.sandbox.get("note"):
            print(f"    sandbox: {preset.sandbox['note']}")
    return 0


def _replay_agent(argv: Sequence[str]) -> int:
    from ..agents import replay

    return replay.main(list(argv))


def _demo_agent(argv: Sequence[str]) -> int:
    from ..agents import demo

    return demo.main(argv)


#: Commands that are agents: everything after the name is theirs to parse (``--help`` too).
AGENTS: dict[str, Callable[[Sequence[str]], int]] = {
    "demo-agent": _demo_agent,
    "replay-agent": _replay_agent,
}


def _doctor(args: argparse.Namespace) -> int:
    from .doctor import doctor

    return anyio.run(doctor, args)


def _install_kernel(args: argparse.Namespace) -> int:
    from ..notebook.kernelspec import install_kernelspecs

    for line in install_kernelspecs(user=args.user, sys_prefix=args.sys_prefix, prefix=args.prefix):
        print(line)
    return 0


def _add_run(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    run_parser = sub.add_parser(
        "run", help="run one prompt turn: streamed on a terminal, Markdown when piped"
    )
    add = run_parser.add_argument
    # The short options are %acp's: -a agent, -p policy, -t timeout.
    add(
        "--agent",
        "-a",
        help="a preset name (see `acp-notebook agents`) or a command line; default: demo",
    )
    add("--cwd", default=os.getcwd(), help="the session's working directory (default: here)")
    add(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="another directory the agent may use",
    )
    add(
        "--sandbox",
        choices=MODES,
        help="what the agent and its commands may write, enforced by the operating system: "
        "workspace (the session's folders, temp and the agent's own files; network on), "
        "read-only, workspace-offline (TCP only to --allow-port ports), off; default: the "
        "preset's, else workspace",
    )
    add(
        "--allow-port",
        action="append",
        default=[],
        type=int,
        metavar="PORT",
        help="with --sandbox workspace-offline: a TCP port connections may go to, on any host "
        "(repeatable)",
    )
    add(
        "--permissions",
        "-p",
        choices=POLICIES,
        default="ask",
        help="who answers permission requests (default: ask)",
    )
    add(
        "--rule",
        action="append",
        default=[],
        metavar="RULE",
        help='a permission rule, tried in order before the policy: "allow read", '
        '"allow edit *.py", "allow execute pytest*", "deny execute rm *", "ask *" (repeatable)',
    )
    add("--trace", metavar="FILE", help="write every JSON-RPC message to FILE as JSON Lines")
    add("--timeout", "-t", type=float, metavar="SECONDS", help="cancel the turn after SECONDS")
    add(
        "--cancel-grace",
        type=float,
        # None: the session's default (``client.session.DEFAULT_CANCEL_GRACE``), read
        # where the turn runs, so the parser does not load the session.
        default=None,
        metavar="SECONDS",
        help="after a timeout, how long to wait for the agent to confirm the cancel (default: 10)",
    )
    add(
        "--auth",
        metavar="METHOD_ID",
        help="authenticate with this auth method (any id the agent offers) before the session",
    )
    add(
        "--format",
        choices=("auto", "terminal", "markdown"),
        default="auto",
        help="terminal: stream the reply as it comes, styled; markdown: the transcript as "
        "Markdown at the end; auto (default): terminal when stdout is one, else markdown",
    )
    add(
        "--env",
        action="append",
        default=[],
        type=_env_pair,
        metavar="NAME=VALUE",
        help="environment for the agent process only (its terminals do not get it: keys stay out of transcripts)",
    )
    add("prompt", metavar="PROMPT")
    run_parser.set_defaults(func=lambda a: anyio.run(run, a))


def _add_doctor(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doctor_parser = sub.add_parser("doctor", help="start an agent and report what it supports")
    doctor_parser.add_argument("--agent", help="a preset name or a command line; default: demo")
    doctor_parser.add_argument(
        "--env", action="append", default=[], type=_env_pair, metavar="NAME=VALUE"
    )
    doctor_parser.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for each answer (default: 60)"
    )
    doctor_parser.add_argument(
        "--report",
        action="store_true",
        help="grade the agent: the report card's protocol checks (it runs a few prompts in a "
        "scratch directory, allowing what the agent asks there)",
    )
    doctor_parser.add_argument(
        "--json", action="store_true", help="with --report: the card as JSON (sorted keys)"
    )
    doctor_parser.set_defaults(func=_doctor)


def _add_install_kernel(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kernel = sub.add_parser(
        "install-kernel", help="install the 'Python 3 (ACP)' kernelspec for this interpreter"
    )
    where = kernel.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="for the current user")
    where.add_argument(
        "--sys-prefix", action="store_true", help="into sys.prefix (the active environment)"
    )
    where.add_argument("--prefix", metavar="DIR", help="under DIR")
    kernel.set_defaults(func=_install_kernel)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-notebook", description="An Agent Client Protocol client."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _add_run(sub)
    _add_doctor(sub)
    agents = sub.add_parser("agents", help="list the agent presets and whether each is installed")
    agents.set_defaults(func=_agents)
    # Listed for --help; main() hands their arguments over before parsing (see AGENTS).
    sub.add_parser(
        "replay-agent", help="replay a recorded trace (--trace FILE) as an agent on stdio"
    )
    sub.add_parser("demo-agent", help="run the built-in demo agent on stdio")
    _add_install_kernel(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """``acp-notebook ARGS``; the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in AGENTS:
            return AGENTS[argv[0]](argv[1:])
        args = build_parser().parse_args(argv)
        with terminal_safe_output():
            return int(args.func(args))
    except KeyboardInterrupt:
        return fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:
        # The reader went away (`acp-notebook agents | head`): what it wanted was printed.
        # Python would complain again flushing stdout at exit, so stdout goes nowhere now.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0


def entry() -> NoReturn:
    """The ``acp-notebook`` process: :func:`main`, its output flushed, then out at once.

    By then every agent and terminal it started has been shut down and waited for, and
    the command registers no exit handler; what the interpreter would still do is free
    every module and object one by one: 60-130 ms (2 cores) between ``main`` returning
    and the exit its parent saw, against 4 ms this way.
    """
    code = main()
    for stream in (sys.stdout, sys.stderr):
        # The reader went away (BrokenPipeError), or the stream was closed (ValueError).
        with contextlib.suppress(BrokenPipeError, ValueError):
            stream.flush()
    os._exit(code)
