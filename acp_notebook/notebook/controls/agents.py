"""The controls that act on the notebook's agents: what runs, starting and stopping,
logging in, and what each agent was given (MCP servers, presets)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...agents.evidence import GEMINI_UNTRUSTED
from ...client.presets import PresetStatus, install_hint, preset_table
from ...protocol.sandbox import sandbox_line
from ..frontend import frontends
from ..runtime.folder_servers import quote
from ..runtime.notebook_state import FolderServersChanged
from .answers import Column, Table, Text
from .base import ControlContext, ControlFailed

if TYPE_CHECKING:
    from ...client.auth import AuthMethodInfo
    from ..inspector import MessageTable
    from ..runtime.agent import AgentRuntime
    from ..runtime.snapshots import SessionSnapshot

#: How many messages ``%acp --log`` shows (``acp.messages()`` filters all of them).
LOG_LAST = 50


async def status(ctx: ControlContext) -> Text:
    """The working directory, each agent with its sessions, and the running turns."""
    from ..tools.live_tools import offered_line

    agents = ctx.agents
    lines = [f"Working directory: {agents.cwd}", f"Sandbox: {sandbox_line(agents.sandbox.mode)}"]
    if not agents.runtimes:
        lines.append("No agent started yet (the first %acp starts one).")
    lines += [runtime.describe() for runtime in agents.runtimes.values()]
    lines.append(offered_line(frontends))
    for handle, turn in agents.running_turns():
        settings = handle.settings
        lines.append(f"turn in session {settings.session!r} of {settings.agent}: {turn.state}")
    return Text("\n".join(lines))


async def cancel(ctx: ControlContext) -> Text:
    """Cancel the running and queued turns (of the agent and session given, if any)."""
    count = 0
    for handle, _turn in ctx.agents.running_turns():
        if ctx.session is not None and handle.settings.session != ctx.session:
            continue
        if ctx.agent is not None and handle.settings.agent != ctx.agent:
            continue
        handle.cancel()
        count += 1
    return Text(f"Cancelling {count} turn(s)." if count else "No turn is running.")


async def restart(ctx: ControlContext) -> Text:
    """Stop the agent and start it again; what that ended, and what runs now."""
    runtime = ctx.runtime()
    ended = await runtime.stop()
    await runtime.ensure_started()
    return Text(f"{ended.sentence()}\n{runtime.describe()}")


async def stop(ctx: ControlContext) -> Text:
    """Stop the agent given, or every agent, with their sessions' terminals, whatever
    each is doing; per agent, what that ended or what is left of it."""
    runtimes = [rt for key, rt in ctx.agents.runtimes.items() if ctx.agent in (None, key)]
    if not runtimes:
        return Text("No agent was running.")
    return Text("\n".join([(await runtime.stop()).sentence() for runtime in runtimes]))


def presets(ctx: ControlContext) -> Table[PresetStatus]:
    """The agent presets, whether each can start here, and how."""
    columns: tuple[Column[PresetStatus], ...] = (
        Column("preset", lambda row: row.preset.id, code=True),
        Column("agent", lambda row: row.preset.name),
        Column("here", _availability),
        Column(
            "starts with", lambda row: shlex.join(row.usable.argv) if row.usable else "", code=True
        ),
    )
    return Table(
        preset_table(),
        columns,
        empty="No agent presets.",
        note='`%acp -a PRESET PROMPT` uses one; any other agent is a command line: `%acp -a "my-agent --acp" PROMPT`.',
    )


def _availability(row: PresetStatus) -> str:
    if row.usable is not None:
        return row.status
    missing = "; ".join(option.missing for option in row.options if option.missing)
    hint = install_hint(row.preset)
    return f"{row.status}: {missing}" + (f" — {hint}" if hint else "")


async def sessions(ctx: ControlContext) -> Table[SessionSnapshot]:
    """This notebook's sessions, per agent."""
    from ..runtime.snapshots import SessionSnapshot

    columns: tuple[Column[SessionSnapshot], ...] = (
        Column("session", lambda info: info.name),
        Column("agent", lambda info: info.agent),
        Column("id", lambda info: info.session_id, code=True),
        Column("title", lambda info: info.title),
    )
    rows = [
        SessionSnapshot.of(agent, name, session)
        for agent, runtime in ctx.agents.runtimes.items()
        for name, session in runtime.sessions.items()
    ]
    return Table(rows, columns, empty="No session yet.")


def log(ctx: ControlContext) -> MessageTable:
    """The last JSON-RPC messages (of the agent given, if any)."""
    return ctx.agents.message_table().filter(agent=ctx.agent, last=LOG_LAST)


def _notebook_tools(ctx: ControlContext) -> str:
    """What the notebook's own server is, and whether new sessions get it."""
    tools = ctx.agents.tools
    if tools is None:
        return "notebook: not offered (no kernel)"
    if not tools.enabled:
        return "notebook: off (%config AcpMagics.tools = True offers it to new sessions)"
    names = ", ".join(tool.name for tool in tools.registry.tools())
    return f"notebook: this kernel's tools, offered to every new session ({names}); --no-tools: not"


async def mcp(ctx: ControlContext, action: str | None = None) -> Text:
    """The MCP servers configured, and what the agent's last session was given;
    ``trust`` confirms those of ``.acp-notebook.json`` beside the notebook, as this
    control last showed them."""
    state = ctx.agents.state
    if action is not None:
        if action != "trust":
            raise ControlFailed(f"`--mcp` takes `trust` or nothing, not {action!r}.")
        if not state.mcp_servers():
            raise ControlFailed(f"There are no MCP servers in {state.legacy_path} to confirm.")
        if state.mcp_servers_read is None:
            raise ControlFailed(
                f"Run `%acp --mcp` to read the MCP servers in {state.legacy_path} first; "
                "`trust` confirms what it showed."
            )
        try:
            state.trust_mcp_servers(state.mcp_servers_read)
        except FolderServersChanged as exc:
            state.mcp_servers_read = None
            raise ControlFailed(str(exc)) from None
    configured = ctx.agents.all_mcp_servers()
    waiting = state.mcp_servers_shown() if not state.mcp_servers_trusted() else None
    lines = [_notebook_tools(ctx)]
    if not configured and not waiting:
        lines.append(
            "No other MCP servers configured. Set %config AcpMagics.mcp_servers = {...} (the "
            'usual mcpServers mapping), or add "mcpServers" to .acp-notebook.json next to the '
            "notebook."
        )
    lines += [_server_line(entry) for entry in configured]
    if waiting:
        lines.append(
            f"Not used until you confirm them with `%acp --mcp trust` (they are commands "
            f"from {state.legacy_path}, shown exactly):"
        )
        lines.append(waiting)
        if state.trust_key.in_memory:
            lines.append(
                "Trusted for this kernel only: the state directory is inside the notebook's "
                "folder, where the agent could read a saved trust's key."
            )
        # What `trust` confirms: this text, if the file still reads so then.
        state.mcp_servers_read = waiting
    runtime = ctx.existing_runtime()
    if runtime is not None and (runtime.mcp_passed or runtime.mcp_skipped):
        lines.append("Passed to the last session: " + (", ".join(runtime.mcp_passed) or "none"))
        lines += runtime.mcp_skipped
    if runtime is not None:
        lines += [_dropped(runtime, name) for name in _unheard(runtime)]
    return Text("\n".join(lines))


def _unheard(runtime: AgentRuntime) -> list[str]:
    """The sessions given the notebook tools whose agent, a turn later, has never listed
    nor called them."""
    return [
        name
        for name, tools in runtime.tools.items()
        if not tools.heard
        and tools.session is not None
        and any(record.finished for record in tools.session.transcript.turns)
    ]


def _dropped(runtime: AgentRuntime, name: str) -> str:
    preset = runtime.spec.preset.id if runtime.spec.preset else None
    why = GEMINI_UNTRUSTED.text("notebook") if preset == GEMINI_UNTRUSTED.preset else ""
    said = (
        f"Session {quote(name)}: the agent was given the notebook tools but has never listed "
        "nor called them; it may have dropped them."
    )
    return f"{said} {why}" if why else said


def _server_line(entry: dict[str, Any]) -> str:
    kind = entry.get("type", "stdio")
    if kind == "stdio":
        argv = [str(entry.get("command")), *map(str, entry.get("args", []))]
        where = " ".join(quote(part) for part in argv)
    else:
        where = quote(str(entry.get("url")))
    return f"{quote(str(entry.get('name')))}: {kind} {where}"


async def login(ctx: ControlContext, method_id: str | None = None) -> Text:
    """``authenticate`` with the method given; else with the first that reads variables
    all set, or where someone can click, the agent's only agent-handled one (which may
    wait for a browser); else the methods and what each needs."""
    runtime = ctx.runtime()
    conn = await runtime.ensure_started()
    if method_id is None:
        method_id = _login_method(conn.auth_method_infos, runtime.env, ctx.interactive)
    await runtime.authenticate(method_id)
    return Text(f"Logged in to {runtime.name} with {method_id}.")


def _login_method(
    methods: Sequence[AuthMethodInfo], env: Mapping[str, str], interactive: bool
) -> str:
    from ...client.auth import env_methods_first, ready_env_method

    ready = ready_env_method(methods, env)
    if ready is not None:
        return ready.id
    by_agent = [mm for mm in methods if mm.type == "agent"]
    if interactive and len(by_agent) == 1:
        return by_agent[0].id
    ways = "; ".join(_login_way(mm, env) for mm in env_methods_first(methods)) or "none"
    raise ControlFailed(f"Name the auth method: `%acp --login METHOD` (the agent offers: {ways}).")


def _login_way(method: AuthMethodInfo, env: Mapping[str, str]) -> str:
    """"`openai-api-key` (set `OPENAI_API_KEY` first)", "`chatgpt` (the agent logs you in)"."""
    from ...client.auth import missing_vars

    missing = missing_vars(method, env)
    if missing:
        return f"`{method.id}` (set {' and '.join(f'`{var}`' for var in missing)} first)"
    if method.type == "terminal":
        return f"`{method.id}` (run in a terminal)"
    return f"`{method.id}` (the agent logs you in, maybe in a browser)"


async def logout(ctx: ControlContext) -> Text:
    runtime = ctx.runtime()
    await runtime.logout()
    return Text(f"Logged out of {runtime.name}.")
