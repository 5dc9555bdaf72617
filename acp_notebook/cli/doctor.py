"""``acp-notebook doctor [--agent SPEC] [--report [--json]]``: start an agent and report what
it supports.

The report says the command, whether it started, how long ``initialize`` took, the
protocol version, agent info, capabilities, auth methods and whether ``session/new``
works, with a hint for each failure. It exits non-zero when something failed.

``--report`` prints the agent's report card instead (:mod:`acp_notebook.lab.report`): a
table of protocol checks, or with ``--json`` a list with the card; it exits non-zero when a
check failed.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from typing import IO

import anyio

from ..agents.evidence import STDERR_LINES, before_start, explain
from ..client.connection import ClientConnection
from ..client.errors import AcpClientError, AuthRequired
from ..client.presets import DEMO, AgentNotFound, LaunchSpec, install_hint, resolve_agent
from ..protocol import models as m
from ..protocol.errors import ConnectionClosed, RpcError
from ..protocol.process import AgentStartError
from ..protocol.sandbox import sandbox_line
from .exits import EXIT_AGENT_FAILED
from .hints import auth_hint

__all__ = ["capability_summary", "doctor", "report"]


def capability_summary(caps: m.AgentCapabilities) -> str:
    """The agent's capabilities beyond the baseline, in wire names."""
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


def _agent_info(response: m.InitializeResponse) -> str:
    info = response.agent_info
    if info is None:
        return "(none sent)"
    return f"{info.name} {info.version}" + (f" ({info.title})" if info.title else "")


def _known_failure(spec: LaunchSpec, said: str, stderr: list[str], out: IO[str]) -> bool:
    """The preset's known failure that ``said`` and ``stderr`` show, as a hint; whether
    there was one."""
    finding = explain(spec.preset.id if spec.preset else None, "\n".join([said, *stderr]))
    if finding is not None:
        print(f"Hint: {finding.text('terminal')}", file=out)
    return finding is not None


def _stderr_hint(conn: ClientConnection, out: IO[str], lead: str, spec: LaunchSpec) -> None:
    """The agent's last stderr lines, or (when it wrote none) how to see what it does."""
    tail = [line for line in (conn.process.stderr_tail(STDERR_LINES) if conn.process else []) if line.strip()]
    if tail:
        print(f"Hint: {lead}: " + " | ".join(tail), file=out)
    else:
        print(
            f"Hint: it wrote nothing on stderr; run `{spec.command_line}` in a terminal to see "
            "what it does (an ACP agent waits for JSON-RPC on its stdin).",
            file=out,
        )


def _stderr(conn: ClientConnection) -> list[str]:
    return conn.process.stderr_tail(STDERR_LINES) if conn.process else []


async def _stop(conn: ClientConnection, out: IO[str]) -> None:
    """An agent that did not answer: ended now, its whole tree, and what that ended said."""
    if conn.process is None:
        return
    ended = await conn.process.shutdown()
    print(f"Stopped: {ended.still_running if ended.left else ended.ended}", file=out)


async def _check_new_session(
    conn: ClientConnection, args: argparse.Namespace, spec: LaunchSpec, out: IO[str]
) -> bool:
    """Open a session in this directory (never prompting); whether it worked."""
    try:
        with anyio.fail_after(args.timeout):
            session = await conn.new_session(os.getcwd(), policy="deny")
    except AuthRequired as exc:
        print(f"session/new: needs authentication: {exc.said}", file=out)
        _known_failure(spec, exc.said, _stderr(conn), out)
        hint = auth_hint(args.agent or spec.name, spec.command_line, exc.auth_methods)
        print(f"Hint: {hint}", file=out)
        if spec.preset is not None and spec.preset.auth:
            print(f"Hint: {spec.preset.auth}", file=out)
        return False
    except TimeoutError:
        print(f"session/new: no answer within {args.timeout:g} s", file=out)
        _stderr_hint(conn, out, "its last stderr lines", spec)
        await _stop(conn, out)
        return False
    except (RpcError, AcpClientError) as exc:
        print(f"session/new: failed: {exc}", file=out)
        _known_failure(spec, str(exc), _stderr(conn), out)
        _stderr_hint(conn, out, "the agent's last stderr lines", spec)
        return False
    extras = []
    transcript = session.transcript
    if transcript.modes:
        extras.append("modes: " + ", ".join(mode.id for mode in transcript.modes))
    if transcript.config_options:
        names = (str(getattr(option, "id", "?")) for option in transcript.config_options)
        extras.append("config options: " + ", ".join(names))
    print("session/new: works" + (f" ({'; '.join(extras)})" if extras else ""), file=out)
    return True


async def report(args: argparse.Namespace) -> int:
    """``--report``: the agent's report card on stdout; non-zero when a check failed."""
    from ..lab.report import report_card  # the lab is only needed here

    out = sys.stdout
    try:
        card = await report_card(
            args.agent or DEMO, timeout=args.timeout, env=dict(args.env), name=args.agent or DEMO
        )
    except AgentNotFound as exc:
        print(f"Agent: {args.agent}\nProblem: {exc}", file=out)
        return EXIT_AGENT_FAILED
    except AgentStartError as exc:
        print(f"Agent: {args.agent}\nStarted: no. {exc}", file=out)
        return EXIT_AGENT_FAILED
    if args.json:
        print(json.dumps([card.to_json()], indent=2, sort_keys=True, ensure_ascii=False), file=out)
    else:
        print(card.text(), file=out)
    return 0 if card.passed else EXIT_AGENT_FAILED


async def doctor(args: argparse.Namespace) -> int:
    """The report on stdout; the exit code."""
    if getattr(args, "report", False):
        return await report(args)
    out = sys.stdout
    try:
        spec = resolve_agent(args.agent)
    except AgentNotFound as exc:
        print(f"Agent: {args.agent}\nProblem: {exc}", file=out)
        print("Hint: `acp-notebook agents` lists every preset and what each needs.", file=out)
        return EXIT_AGENT_FAILED
    print(f"Agent: {spec.display_name}", file=out)
    confinement = spec.confinement(None, [os.getcwd()])
    argv = spec.confined_argv(confinement)
    print(f"Command: {shlex.join(argv)}  (via {spec.method})", file=out)
    here = f" (here: {confinement.describe()})" if confinement.enforced else ""
    print(f"Sandbox: {sandbox_line(confinement.mode)}{here}", file=out)
    if spec.sandbox_note:
        print(f"  {spec.sandbox_note}", file=out)
    # Said before the agent starts (which can take seconds): what surely is missing.
    env = {**spec.confined_env(confinement), **dict(args.env)}
    preset = spec.preset.id if spec.preset else None
    for finding in before_start(preset, env, confined=confinement.enforced):
        print(f"Hint: {finding.text('terminal')}", file=out, flush=True)
    started = time.monotonic()
    process = None
    try:
        async with ClientConnection.spawn(
            argv,
            env={**spec.confined_env(confinement), **dict(args.env)},
            name=spec.name,
            cancel_grace=2.0,
            confinement=confinement,
        ) as conn:
            process = conn.process
            print(f"Started: yes (pid {process.pid if process else '?'})", file=out)
            try:
                with anyio.fail_after(args.timeout):
                    response = await conn.initialize(timeout=None)
            except TimeoutError:
                print(f"initialize: no answer within {args.timeout:g} s", file=out)
                _stderr_hint(conn, out, "its last stderr lines", spec)
                await _stop(conn, out)
                return EXIT_AGENT_FAILED
            except AcpClientError as exc:  # a protocol version we do not speak
                print(f"initialize: {exc}", file=out)
                print("Hint: update the agent, or acp-notebook, so both speak ACP v1.", file=out)
                return EXIT_AGENT_FAILED
            print(f"initialize: answered in {time.monotonic() - started:.2f} s", file=out)
            print(f"Protocol version: {response.protocol_version}", file=out)
            print(f"Agent info: {_agent_info(response)}", file=out)
            print(f"Capabilities: {capability_summary(response.agent_capabilities)}", file=out)
            methods = [f"{a.id} ({a.name}; {a.type})" for a in conn.auth_method_infos]
            print("Auth methods: " + (", ".join(methods) if methods else "none"), file=out)
            ok = await _check_new_session(conn, args, spec, out)
    except AgentStartError as exc:
        print(f"Started: no. {exc}", file=out)
        if spec.preset is not None and (hint := install_hint(spec.preset)):
            print(f"Hint: {hint}", file=out)
        return EXIT_AGENT_FAILED
    except ConnectionClosed as exc:
        print(f"Problem: {exc}", file=out)
        stderr = process.stderr_tail(5) if process is not None else []
        if _known_failure(spec, str(exc), stderr, out):
            return EXIT_AGENT_FAILED
        if process is None or process.start_problem is None:  # that one says what to do
            print(
                "Hint: the agent exited early; its last stderr lines (in the problem above) "
                "usually say why — a missing model, key or configuration is common.",
                file=out,
            )
        return EXIT_AGENT_FAILED
    return 0 if ok else EXIT_AGENT_FAILED
