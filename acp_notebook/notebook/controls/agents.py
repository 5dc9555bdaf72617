"""The controls that act on the notebook's agents: what runs, starting and stopping,
logging in, and what each agent was given (MCP servers, presets)."""

from __future__ import annotations

import shlex

from ...agents.presets import PresetStatus, install_hint, preset_table
from ...client.auth_methods import auth_method_facts
from ...protocol import models as m
from ..answers import Column, Table, Text
from ..frontend import frontends
from ..inspector import MessageTable
from ..snapshots import SessionSnapshot
from ..tools.live_tools import offered_line
from .base import ControlContext, ControlFailed

#: How many messages ``%acp --log`` shows (``acp.messages()`` filters all of them).
LOG_LAST = 50


async def status(ctx: ControlContext) -> Text:
    """The working directory, each agent with its sessions, and the running turns."""
    agents = ctx.agents
    lines = [f"Working directory: {agents.cwd}"]
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
    """Stop the agent and start it again; what runs now."""
    runtime = ctx.runtime()
    await runtime.stop()
    await runtime.ensure_started()
    return Text(runtime.describe())


async def stop(ctx: ControlContext) -> Text:
    """Stop the agent given, or every agent, with their sessions' terminals."""
    runtimes = [rt for key, rt in ctx.agents.runtimes.items() if ctx.agent in (None, key)]
    for runtime in runtimes:
        await runtime.stop()
    return Text("Stopped." if runtimes else "No agent was running.")


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


async def mcp(ctx: ControlContext) -> Text:
    """The MCP servers configured, and what the agent's last session was given."""
    configured = ctx.agents.all_mcp_servers()
    if not configured:
        return Text(
            "No MCP servers configured. Set %config AcpMagics.mcp_servers = {...} (the usual "
            'mcpServers mapping), or add "mcpServers" to .acp-notebook.json next to the notebook.'
        )
    lines = []
    for entry in configured:
        kind = entry.get("type", "stdio")
        where = entry.get("url") or " ".join(
            [str(entry.get("command")), *map(str, entry.get("args", []))]
        )
        lines.append(f"{entry.get('name')}: {kind} {where}")
    runtime = ctx.existing_runtime()
    if runtime is not None and (runtime.mcp_passed or runtime.mcp_skipped):
        lines.append("Passed to the last session: " + (", ".join(runtime.mcp_passed) or "none"))
        lines += runtime.mcp_skipped
    return Text("\n".join(lines))


async def login(ctx: ControlContext, method_id: str | None = None) -> Text:
    """``authenticate`` with the method given, or the agent's only agent-handled one."""
    runtime = ctx.runtime()
    conn = await runtime.ensure_started()
    if method_id is None:
        agent_methods = [mm for mm in conn.auth_methods if isinstance(mm, m.AuthMethodAgent)]
        if len(agent_methods) != 1:
            offered = (
                ", ".join(f"`{auth_method_facts(mm).id}`" for mm in conn.auth_methods) or "none"
            )
            raise ControlFailed(
                f"Name the auth method: `%acp --login METHOD` (the agent offers: {offered})."
            )
        method_id = agent_methods[0].id
    await runtime.authenticate(method_id)
    return Text(f"Logged in to {runtime.name} with {method_id}.")


async def logout(ctx: ControlContext) -> Text:
    runtime = ctx.runtime()
    await runtime.logout()
    return Text(f"Logged out of {runtime.name}.")
