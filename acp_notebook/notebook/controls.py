"""The session controls of ``%acp``: settings, modes and config options, session history
(list, load, resume, close, delete), login and logout, MCP servers.

Each runs on the agent loop and answers in one sentence or a small table; an agent that
does not support a control says so (the client checks capabilities before sending).
"""

from __future__ import annotations

import concurrent.futures
import functools
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from IPython.display import Markdown, display

from ..agents.presets import AgentNotFound
from ..client.errors import AcpClientError
from ..client.render import Renderer
from ..client.rules import PermissionRules
from ..client.session import Session
from ..protocol import models as m
from ..protocol.errors import ConnectionClosed, RpcError
from .manager import NotebookAgents
from .options import AcpOptions
from .runtime import AgentFailed, AgentRuntime

T = TypeVar("T")

EXPECTED = (
    AgentFailed,
    AgentNotFound,
    ConnectionClosed,
    RpcError,
    AcpClientError,
    concurrent.futures.TimeoutError,
)
CONTROL_TIMEOUT = 120.0


class ControlFailed(Exception):
    """A control could not be carried out; the message is one sentence."""


class SessionControls:
    def __init__(
        self, agents: NotebookAgents, *, agent: str, policy: str, interactive: bool
    ) -> None:
        self.agents = agents
        self.agent = agent
        self.policy = policy
        self.interactive = interactive

    # ------------------------------------------------------------------ plumbing

    def run(self, func: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        try:
            return self.agents.loop.run(
                functools.partial(func, *args, **kwargs), timeout=CONTROL_TIMEOUT
            )
        except EXPECTED as exc:
            raise ControlFailed(str(exc) or type(exc).__name__) from None

    @property
    def runtime(self) -> AgentRuntime:
        try:
            return self.agents.runtime(self.agent)
        except AgentNotFound as exc:
            raise ControlFailed(str(exc)) from None

    def session(self, name: str) -> Session:
        """The named session, started (and created) if needed."""
        runtime = self.runtime
        return self.run(runtime.session, name, policy=self.policy, interactive=self.interactive)

    # ------------------------------------------------------------------ controls

    def dispatch(self, options: AcpOptions) -> None:
        handler = getattr(self, f"do_{options.control}", None)
        if handler is None:
            raise ControlFailed(f"Unknown control {options.control}.")
        handler(options)

    def do_settings(self, options: AcpOptions) -> None:
        session = self.session(options.session)
        if not self.interactive:
            for line in settings_lines(session):
                print(line)
            return
        from ..ui.session_panel import SessionPanel

        loop = self.agents.loop

        async def build() -> SessionPanel:  # on the loop: only it writes the panel's widgets
            return SessionPanel(session, submit=loop.submit, schedule_later=loop.call_later)

        panel = self.run(build)
        display(panel.widget)

    def do_mode(self, options: AcpOptions) -> None:
        session = self.session(options.session)
        mode_id = str(options.control_value)
        mode_option = next(
            (o for o in session.transcript.known_config_options if o.category == "mode"),
            None,
        )
        if mode_option is not None:  # spec: prefer config options when both exist
            self.run(session.set_config_option, mode_option.id, mode_id)
        else:
            self.run(session.set_mode, mode_id)
        print(
            f"Mode: {session.transcript.mode_name(session.transcript.current_mode_id)}."
            if mode_option is None
            else f"{mode_option.name}: {mode_id}."
        )

    def do_set(self, options: AcpOptions) -> None:
        session = self.session(options.session)
        key, sep, raw = str(options.control_value).partition("=")
        if not sep:
            raise ControlFailed("--set takes ID=VALUE, e.g. --set model=demo-large.")
        option = next(
            (o for o in session.transcript.config_options if getattr(o, "id", None) == key), None
        )
        if option is None:
            known = (
                ", ".join(str(getattr(o, "id", "?")) for o in session.transcript.config_options)
                or "none"
            )
            raise ControlFailed(f"The session has no config option `{key}` (it has: {known}).")
        value: str | bool = raw
        if isinstance(option, m.SessionConfigOptionBoolean):
            lowered = raw.strip().lower()
            if lowered not in ("true", "false", "on", "off", "yes", "no", "1", "0"):
                raise ControlFailed(f"`{key}` is on or off; give true or false, not {raw!r}.")
            value = lowered in ("true", "on", "yes", "1")
        self.run(session.set_config_option, key, value)
        changed = next(
            (o for o in session.transcript.config_options if getattr(o, "id", None) == key), option
        )
        print(f"{getattr(changed, 'name', key)}: {session.transcript.config_value_name(changed)}.")

    def do_history(self, options: AcpOptions) -> None:
        runtime = self.runtime
        sessions = self.run(runtime.list_sessions)
        last = (
            self.agents.state.last_session(runtime.key, options.session)
            if self.agents.state
            else None
        )
        if not sessions:
            print("The agent lists no saved sessions for this folder.")
            return
        lines = ["| session | title | updated | |", "|---|---|---|---|"]
        for info in sessions:
            mark = (
                "this notebook's last" if last and last.get("sessionId") == info.session_id else ""
            )
            lines.append(
                f"| `{info.session_id}` | {info.title or ''} | {info.updated_at or ''} | {mark} |"
            )
        lines.append(
            "\n`%acp --load ID` replays one here; `%acp --resume ID` continues it without replay."
        )
        display(Markdown("\n".join(lines)))

    def do_load(self, options: AcpOptions) -> None:
        runtime = self.runtime
        session = self.run(
            runtime.load,
            str(options.control_value),
            options.session,
            policy=self.policy,
            interactive=self.interactive,
        )
        self.agents.remember(runtime, options.session, session)
        display(replay_bundle(session), raw=True)

    def do_resume(self, options: AcpOptions) -> None:
        runtime = self.runtime
        session_id = options.control_value
        if session_id is None:
            last = (
                self.agents.state.last_session(runtime.key, options.session)
                if self.agents.state
                else None
            )
            if last is None:
                raise ControlFailed(
                    "This notebook has no earlier session to resume; `%acp --history` lists the agent's."
                )
            session_id = str(last["sessionId"])
        capabilities = self.run(runtime.ensure_started).agent_capabilities
        if capabilities.session_capabilities.resume is None and capabilities.load_session:
            # An agent that can only load: load it (its history is replayed into this cell).
            options.control_value = session_id
            self.do_load(options)
            return
        session = self.run(
            runtime.resume,
            session_id,
            options.session,
            policy=self.policy,
            interactive=self.interactive,
        )
        self.agents.remember(runtime, options.session, session)
        title = f" ({session.transcript.title})" if session.transcript.title else ""
        print(
            f"Resumed session {session.session_id}{title} as {options.session!r}; the next %acp continues it."
        )

    def do_close(self, options: AcpOptions) -> None:
        print(self.run(self.runtime.close, options.session))

    def do_delete(self, options: AcpOptions) -> None:
        print(self.run(self.runtime.delete, str(options.control_value)))

    def do_login(self, options: AcpOptions) -> None:
        runtime = self.runtime
        conn = self.run(runtime.ensure_started)
        method_id = options.control_value
        agent_methods = [mm for mm in conn.auth_methods if isinstance(mm, m.AuthMethodAgent)]
        if method_id is None:
            if len(agent_methods) != 1:
                offered = (
                    ", ".join(f"`{getattr(mm, 'id', '?')}`" for mm in conn.auth_methods) or "none"
                )
                raise ControlFailed(
                    f"Name the auth method: `%acp --login METHOD` (the agent offers: {offered})."
                )
            method_id = agent_methods[0].id
        self.run(runtime.authenticate, method_id)
        print(f"Logged in to {runtime.name} with {method_id}.")

    def do_logout(self, options: AcpOptions) -> None:
        runtime = self.runtime
        self.run(runtime.logout)
        print(f"Logged out of {runtime.name}.")

    def do_rules(self, options: AcpOptions) -> None:
        """The permission rules in order, what each does, and what decides otherwise."""
        rules = self.agents.permission_rules or PermissionRules()
        for line in rules.describe(self.policy):
            print(line)
        if not rules:
            print(
                'Add some with %config AcpMagics.permission_rules = ["allow read", "allow edit *.py"] '
                "(or ACP_NOTEBOOK_PERMISSION_RULES, separated by ;)."
            )

    def do_mcp(self, options: AcpOptions) -> None:
        configured = self.agents.all_mcp_servers()
        if not configured:
            print(
                "No MCP servers configured. Set %config AcpMagics.mcp_servers = {...} (the usual "
                'mcpServers mapping), or add "mcpServers" to .acp-notebook.json next to the notebook.'
            )
            return
        for entry in configured:
            kind = entry.get("type", "stdio")
            where = entry.get("url") or " ".join(
                [str(entry.get("command")), *map(str, entry.get("args", []))]
            )
            print(f"{entry.get('name')}: {kind} {where}")
        runtime = self.agents.runtimes.get(self.agent)
        if runtime is not None and (runtime.mcp_passed or runtime.mcp_skipped):
            print("Passed to the last session: " + (", ".join(runtime.mcp_passed) or "none"))
            for note in runtime.mcp_skipped:
                print(note)


def settings_lines(session: Session) -> list[str]:
    """The session's mode and options as text (headless ``--settings``)."""
    from ..ui.session_panel import choices_text

    transcript = session.transcript
    lines = [
        f"Session {session.session_id}" + (f" ({transcript.title})" if transcript.title else "")
    ]
    if transcript.modes:
        lines.append(
            f"Mode: {transcript.mode_name(transcript.current_mode_id)} "
            f"(modes: {', '.join(mm.id for mm in transcript.modes)}; change with --mode ID)"
        )
    for option in transcript.known_config_options:
        lines.append(
            f"{option.name} [{option.id}]: {transcript.config_value_name(option)} "
            f"(values: {choices_text(option)}; change with --set {option.id}=VALUE)"
        )
    return lines


def replay_bundle(session: Session) -> dict[str, str]:
    """A loaded session's replayed history, collapsed, as a display bundle."""
    entries = [e for e in session.transcript.entries if e.turn is None]
    title = session.transcript.title or session.session_id
    head = f"Loaded session `{session.session_id}` ({title}): {len(entries)} replayed entries."
    md = Renderer(session.transcript, terminals=session.terminal_view, markdown=True)
    text = Renderer(session.transcript, terminals=session.terminal_view, markdown=False)
    body_md = "\n\n".join(p for p in (md.entry(e) for e in entries) if p)
    body_text = "\n\n".join(p for p in (text.entry(e) for e in entries) if p)
    return {
        "text/markdown": f"{head}\n\n<details><summary>Replayed history</summary>\n\n{body_md}\n\n</details>\n",
        "text/plain": f"{head.replace('`', '')}\n\n{body_text}\n",
    }
