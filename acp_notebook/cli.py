"""The ``acp-notebook`` command: one turn from a shell, diagnosing an agent, listing presets.

    acp-notebook run [--agent SPEC] [--cwd DIR] [--add-dir DIR]... [--permissions ask|allow|deny]
                     [--rule RULE]... [--trace FILE] [--timeout SECONDS] [--auth METHOD_ID]
                     [--env NAME=VALUE]... PROMPT
    acp-notebook doctor [--agent SPEC]
    acp-notebook agents
    acp-notebook demo-agent [...]
    acp-notebook replay-agent TRACE [--speed X]
    acp-notebook install-kernel [--user|--sys-prefix|--prefix DIR]

``run`` prints the turn's transcript as Markdown on stdout and ends with the line
``stop reason: <stopReason>``. It exits 0 whenever the turn ended with a stop reason,
and non-zero with one line on stderr when the agent failed (exited, closed its output,
or did not answer within the timeout).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Sequence
from typing import IO, Any

import anyio

from .agents.presets import AgentNotFound, launch_options, load_presets, resolve_agent
from .client.connection import ClientConnection
from .client.errors import AcpClientError, AuthRequired
from .client.permissions import POLICIES, PermissionRequest
from .client.render import Renderer
from .client.rules import PermissionRules
from .client.session import DEFAULT_CANCEL_GRACE, Session
from .protocol.errors import ConnectionClosed, RpcError
from .protocol.jsonrpc import TraceEvent
from .protocol.process import AgentStartError

EXIT_AGENT_FAILED = 1
EXIT_USAGE = 2


class TraceWriter:
    """``--trace FILE``: one JSON object per JSON-RPC message, flushed as it happens."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, event: TraceEvent) -> None:
        self.stream.write(json.dumps(event.to_json(), ensure_ascii=False) + "\n")
        self.stream.flush()


def _env_pairs(pairs: Sequence[str]) -> dict[str, str]:
    env = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise SystemExit(f"acp-notebook: --env takes NAME=VALUE, got {pair!r}")
        env[name] = value
    return env


def _fail(message: str, code: int = EXIT_AGENT_FAILED) -> int:
    print(f"acp-notebook: {message}", file=sys.stderr)
    return code


# ---------------------------------------------------------------------------- run


def _terminal_asker(session: Session) -> Any:
    """``--permissions ask`` on a TTY: show what is being approved, read a choice."""

    async def ask(request: PermissionRequest) -> None:
        call = session.transcript.tool_calls.get(request.tool_call_id)
        renderer = Renderer(session.transcript, terminals=session.terminal_view, markdown=False)
        lines = ["", "The agent asks for permission:"]
        if call is not None:
            lines.append(renderer.tool_call(call))
            if call.raw_input is not None and call.content:
                lines.append("Raw input: " + json.dumps(call.raw_input, ensure_ascii=False))
        for number, option in enumerate(request.options, 1):
            lines.append(f"  [{number}] {option.name} ({option.kind})")
        lines.append("  [c] cancel")
        print("\n".join(lines), file=sys.stderr)
        while request.pending:
            answer = (
                (await anyio.to_thread.run_sync(_read_line, "Choice: ", abandon_on_cancel=True))
                .strip()
                .lower()
            )
            if not request.pending:
                break
            if answer in ("c", "cancel", ""):
                session.permissions.cancel(request.key, by="user")
            elif answer.isdigit() and 1 <= int(answer) <= len(request.options):
                session.permissions.choose(request.key, request.options[int(answer) - 1].option_id)
            else:
                print(f"Type a number from 1 to {len(request.options)}, or c.", file=sys.stderr)

    return ask


def _terminal_elicitation_asker(session: Session) -> Any:
    """``--permissions ask`` on a TTY: fill in a form (or consent to a URL) on the terminal."""
    from .client.elicitation import InvalidContent, split_url

    async def read(prompt: str) -> str:
        return (await anyio.to_thread.run_sync(_read_line, prompt, abandon_on_cancel=True)).rstrip(
            "\n"
        )

    async def ask(request: Any) -> None:
        broker = session.elicitations
        print(f"\n{request.agent or 'The agent'} asks: {request.message}", file=sys.stderr)
        if request.mode == "url" and request.url:
            scheme, host, rest = split_url(request.url)
            print(f"  It wants you to open {scheme}[{host}]{rest}  (host: {host})", file=sys.stderr)
            answer = (
                (await read("Open it yourself? [y = accept / n = decline / c = cancel] "))
                .strip()
                .lower()
            )
            if answer == "y":
                broker.accept(request.key)
            elif answer == "n":
                broker.decline(request.key)
            else:
                broker.cancel(request.key)
            return
        while request.pending:
            values: dict[str, Any] = {}
            for spec in request.fields:
                star = "*" if spec.required else ""
                raw = (await read(f"  {spec.title}{star} ({spec.describe()}): ")).strip()
                if raw == "":
                    continue
                values[spec.name] = _parse_field(spec.kind, raw)
            answer = (
                (await read("Send it? [y = accept / n = decline / c = cancel] ")).strip().lower()
            )
            if answer == "n":
                broker.decline(request.key)
            elif answer != "y":
                broker.cancel(request.key)
            else:
                try:
                    broker.accept(request.key, values)
                except InvalidContent as exc:
                    for name, problem in exc.errors.items():
                        print(f"  {name or 'form'}: {problem}", file=sys.stderr)

    return ask


def _parse_field(kind: str, raw: str) -> Any:
    """A typed value from what was typed (validation against the schema comes after)."""
    if kind == "boolean":
        return raw.lower() in ("y", "yes", "true", "1", "on")
    if kind == "integer":
        try:
            return int(raw)
        except ValueError:
            return raw
    if kind == "number":
        try:
            return float(raw)
        except ValueError:
            return raw
    if kind == "multi":
        return [part.strip() for part in raw.split(",") if part.strip()]
    return raw


def _read_line(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline()


async def _run(args: argparse.Namespace) -> int:
    try:
        spec = resolve_agent(args.agent)
    except AgentNotFound as exc:
        return _fail(str(exc))
    env = {**spec.env, **_env_pairs(args.env)}
    cwd = os.path.abspath(args.cwd)
    policy = args.permissions
    try:
        rules = PermissionRules.parse(args.rule)
    except ValueError as exc:
        return _fail(str(exc), EXIT_USAGE)
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
            if interactive or (rules and sys.stdin.isatty()):
                # An `ask` rule (or the safeguard) asks on the terminal whatever the policy.
                session.permissions.asker = _terminal_asker(session)
            if interactive:
                session.elicitations.asker = _terminal_elicitation_asker(session)
            turn = await session.prompt(args.prompt, timeout=args.timeout)
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
                return _fail(
                    turn.error
                    or f"The agent did not finish within {args.timeout:g} s; the turn was cancelled and the agent stopped."
                )
            return _fail(turn.error or "The turn ended without a stop reason.")
    except AuthRequired as exc:
        return _fail(str(exc) + " Pass --auth METHOD_ID.")
    except (AgentStartError, ConnectionClosed, AcpClientError) as exc:
        return _fail(str(exc))
    except RpcError as exc:
        return _fail(f"The agent answered with an error: {exc}")
    finally:
        if trace_file:
            trace_file.close()


# ---------------------------------------------------------------------------- doctor


def _capability_summary(caps: Any) -> str:
    parts = []
    if caps.load_session:
        parts.append("loadSession")
    prompt = [
        n for n in ("image", "audio", "embedded_context") if getattr(caps.prompt_capabilities, n)
    ]
    if prompt:
        parts.append(
            "prompt: " + ", ".join(p.replace("embedded_context", "embeddedContext") for p in prompt)
        )
    mcp = [n for n in ("http", "sse") if getattr(caps.mcp_capabilities, n)]
    if mcp:
        parts.append("MCP: stdio, " + ", ".join(mcp))
    sessions = [
        n.replace("additional_directories", "additionalDirectories")
        for n in ("list", "resume", "close", "delete", "additional_directories")
        if getattr(caps.session_capabilities, n) is not None
    ]
    if sessions:
        parts.append("sessions: " + ", ".join(sessions))
    if caps.auth.logout is not None:
        parts.append("logout")
    return "; ".join(parts) or "none beyond the baseline"


async def _doctor(args: argparse.Namespace) -> int:
    out = sys.stdout
    try:
        spec = resolve_agent(args.agent)
    except AgentNotFound as exc:
        print(f"Agent: {args.agent}\nProblem: {exc}", file=out)
        return EXIT_AGENT_FAILED
    print(f"Agent: {spec.display_name}", file=out)
    print(f"Command: {spec.command_line}  (via {spec.method})", file=out)
    env = {**spec.env, **_env_pairs(args.env)}
    ok = True
    started = time.monotonic()
    try:
        async with ClientConnection.spawn(
            spec.argv, env=env, name=spec.name, cancel_grace=2.0
        ) as conn:
            print(f"Started: yes (pid {conn.process.pid if conn.process else '?'})", file=out)
            try:
                with anyio.fail_after(args.timeout):
                    response = await conn.initialize()
            except TimeoutError:
                print(f"initialize: no answer within {args.timeout:g} s", file=out)
                tail = conn.process.stderr_tail(5) if conn.process else []
                if tail:
                    print("Hint: its last stderr lines: " + " | ".join(tail), file=out)
                return EXIT_AGENT_FAILED
            print(f"initialize: answered in {time.monotonic() - started:.2f} s", file=out)
            print(f"Protocol version: {response.protocol_version}", file=out)
            info = response.agent_info
            print(
                "Agent info: "
                + (
                    f"{info.name} {info.version}" + (f" ({info.title})" if info.title else "")
                    if info
                    else "(none sent)"
                ),
                file=out,
            )
            print(f"Capabilities: {_capability_summary(response.agent_capabilities)}", file=out)
            methods = []
            for method in response.auth_methods:
                kind = (
                    getattr(method, "type", None)
                    or getattr(method, "discriminator_value", None)
                    or "agent"
                )
                method_id = getattr(method, "id", None) or (
                    method.raw.get("id") if hasattr(method, "raw") else "?"
                )
                name = getattr(method, "name", None) or (
                    method.raw.get("name") if hasattr(method, "raw") else ""
                )
                methods.append(f"{method_id} ({name}; {kind})")
            print("Auth methods: " + (", ".join(methods) if methods else "none"), file=out)
            try:
                with anyio.fail_after(args.timeout):
                    session = await conn.new_session(os.getcwd(), policy="deny")
                extras = []
                if session.transcript.modes:
                    extras.append(
                        "modes: " + ", ".join(mode.id for mode in session.transcript.modes)
                    )
                if session.transcript.config_options:
                    extras.append(
                        "config options: "
                        + ", ".join(
                            str(getattr(o, "id", "?")) for o in session.transcript.config_options
                        )
                    )
                print(
                    "session/new: works" + (f" ({'; '.join(extras)})" if extras else ""), file=out
                )
            except AuthRequired as exc:
                ok = False
                ids = [getattr(mm, "id", "?") for mm in exc.auth_methods]
                print(f"session/new: needs authentication: {exc.message}", file=out)
                if ids:
                    print(
                        f"Hint: authenticate with method `{ids[0]}` (e.g. `acp-notebook run --agent {shlex.quote(args.agent or 'demo')} "
                        f"--auth {ids[0]} ...`); methods: {', '.join(ids)}",
                        file=out,
                    )
            except TimeoutError:
                ok = False
                print(f"session/new: no answer within {args.timeout:g} s", file=out)
            except RpcError as exc:
                ok = False
                detail = ""
                if exc.data is not None:
                    data = json.dumps(exc.data, ensure_ascii=False)
                    detail = f"; data: {data[:300]}"
                print(f"session/new: failed: {exc}{detail}", file=out)
                tail = [
                    line
                    for line in (conn.process.stderr_tail(5) if conn.process else [])
                    if line.strip()
                ]
                if tail:
                    print("Hint: the agent's last stderr lines: " + " | ".join(tail), file=out)
    except AgentStartError as exc:
        print(f"Started: no. {exc}", file=out)
        return EXIT_AGENT_FAILED
    except ConnectionClosed as exc:
        print(f"Problem: {exc}", file=out)
        print(
            "Hint: the agent exited early; its last stderr lines (in the problem above) usually say "
            "why — a missing model, key or configuration is common.",
            file=out,
        )
        return EXIT_AGENT_FAILED
    return 0 if ok else EXIT_AGENT_FAILED


# ---------------------------------------------------------------------------- agents


def _agents(args: argparse.Namespace) -> int:
    presets = load_presets()
    for preset in presets.values():
        options = launch_options(preset)
        usable = next((o for o in options if o.available), None)
        status = f"ready via {usable.method}" if usable else "not installed"
        print(f"{preset.id:14} {preset.name} — {status}")
        for option in options:
            mark = "✓" if option.available else "✗"
            print(
                f"    {mark} {option.method:8} {' '.join(option.argv)}"
                + ("" if option.available else f"  ({option.missing})")
            )
        if preset.auth:
            print(f"    auth: {preset.auth}")
    return 0


# ---------------------------------------------------------------------------- parser


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-notebook", description="An Agent Client Protocol client."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="run one prompt turn and print its transcript as Markdown")
    run.add_argument(
        "--agent", help="a preset name (see `acp-notebook agents`) or a command line; default: demo"
    )
    run.add_argument(
        "--cwd", default=os.getcwd(), help="the session's working directory (default: here)"
    )
    run.add_argument(
        "--add-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="another directory the agent may use",
    )
    run.add_argument(
        "--permissions",
        choices=POLICIES,
        default="ask",
        help="who answers permission requests (default: ask)",
    )
    run.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="RULE",
        help='a permission rule, tried in order before the policy: "allow read", '
        '"allow edit *.py", "allow execute pytest*", "deny execute rm *", "ask *" (repeatable)',
    )
    run.add_argument(
        "--trace", metavar="FILE", help="write every JSON-RPC message to FILE as JSON Lines"
    )
    run.add_argument(
        "--timeout", type=float, metavar="SECONDS", help="cancel the turn after SECONDS"
    )
    run.add_argument(
        "--cancel-grace",
        type=float,
        default=DEFAULT_CANCEL_GRACE,
        metavar="SECONDS",
        help="after a timeout, how long to wait for the agent to confirm the cancel (default: 10)",
    )
    run.add_argument(
        "--auth", metavar="METHOD_ID", help="authenticate with this method before the session"
    )
    run.add_argument(
        "--env", action="append", default=[], metavar="NAME=VALUE", help="environment for the agent"
    )
    run.add_argument("prompt", metavar="PROMPT")
    run.set_defaults(func=lambda a: anyio.run(_run, a))

    doctor = sub.add_parser("doctor", help="start an agent and report what it supports")
    doctor.add_argument("--agent", help="a preset name or a command line; default: demo")
    doctor.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    doctor.add_argument(
        "--timeout", type=float, default=60.0, help="seconds to wait for each answer (default: 60)"
    )
    doctor.set_defaults(func=lambda a: anyio.run(_doctor, a))

    agents = sub.add_parser("agents", help="list the agent presets and whether each is installed")
    agents.set_defaults(func=_agents)

    replay = sub.add_parser(
        "replay-agent",
        help="replay a recorded trace (--trace FILE) as an agent on stdio",
        add_help=False,
    )
    replay.add_argument("rest", nargs=argparse.REMAINDER)
    replay.set_defaults(func=_replay_agent)

    demo = sub.add_parser("demo-agent", help="run the built-in demo agent on stdio", add_help=False)
    demo.add_argument("rest", nargs=argparse.REMAINDER)
    demo.set_defaults(func=_demo_agent)

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
    return parser


def _replay_agent(args: argparse.Namespace) -> int:
    from .agents import replay

    return int(replay.main(args.rest) or 0)


def _demo_agent(args: argparse.Namespace) -> int:
    from .agents import demo

    return int(demo.main(args.rest) or 0)


def _install_kernel(args: argparse.Namespace) -> int:
    from .notebook.kernelspec import install_kernelspecs

    for line in install_kernelspecs(user=args.user, sys_prefix=args.sys_prefix, prefix=args.prefix):
        print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


if __name__ == "__main__":
    sys.exit(main())
