"""``%acp`` and ``%%acp``: a prompt turn in a cell.

By default the cell stays busy until its turn ends — so Run All runs the next cells
after the agent's edits, and the kernel's interrupt button cancels the turn — while
its buttons keep working. That needs ipykernel >= 7.4, which processes widget
messages while a cell *awaits*; an input transformer therefore turns a top-level
``%acp`` line into ``await ...``. Where the kernel cannot process clicks during a
busy cell, ``%acp`` returns at once instead (said once).

Configuration (``%config AcpMagics.agent = "claude"``, ``ipython_config.py``), each
with an environment variable that sets its default:

==================  ==============================  =====================
trait               environment variable            default
==================  ==============================  =====================
agent               ACP_NOTEBOOK_AGENT              demo
permissions         ACP_NOTEBOOK_PERMISSIONS        ask
wait                ACP_NOTEBOOK_WAIT               true
headless            ACP_NOTEBOOK_HEADLESS           auto (allow_stdin)
timeout             ACP_NOTEBOOK_TIMEOUT            none
permission_rules    ACP_NOTEBOOK_PERMISSION_RULES   none (rules separated by ;)
==================  ==============================  =====================
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand
from IPython.display import Markdown, display
from traitlets import Bool, Dict, Enum, Float, List, Unicode, Union, default, observe, validate

from ..agents.presets import DEMO, AgentNotFound
from ..client.mcp import McpConfigError, normalise
from ..client.rules import PermissionRules, split_rules
from .context import prompt_with_context
from .controls import ControlFailed, SessionControls
from .headless import detect_headless, env_flag
from .manager import NotebookAgents, TurnHandle, TurnSettings
from .options import USAGE, AcpOptions, OptionError, parse_line

AWAIT_HELPER = "__acp_notebook_await__"

# The transformed forms of `%acp ...` / `x = %acp ...` / `%%acp` at the top level of a cell.
_LINE_MAGIC = re.compile(
    r"^(?P<assign>[A-Za-z_][A-Za-z0-9_]*\s*=\s*)?get_ipython\(\)\.run_line_magic\('acp', (?P<args>.*)\)\s*$"
)
_CELL_MAGIC = re.compile(r"^get_ipython\(\)\.run_cell_magic\('acp', (?P<args>.*)\)\s*$", re.DOTALL)


_ACP_LINE = re.compile(r"^%acp(?=\s|$)(?P<rest>.*)$")


def escape_transformer(lines: list[str]) -> list[str]:
    """Turn a top-level ``%acp`` line into the magic call before IPython reads it.

    A prompt is free text: IPython would take ``%acp what can you do?`` for a help
    request on ``do`` (a trailing ``?``); here the whole line reaches the magic as typed.
    """
    out = []
    for line in lines:
        match = _ACP_LINE.match(line.rstrip("\n"))
        if match:
            line = f"get_ipython().run_line_magic('acp', {match.group('rest').strip()!r})\n"
        out.append(line)
    return out


def await_transformer(lines: list[str]) -> list[str]:
    """Make top-level ``%acp`` awaited, so the cell stays busy while clicks still work."""
    text = "".join(lines)
    cell = _CELL_MAGIC.match(text)
    if cell:
        return [f"await {AWAIT_HELPER}({cell.group('args')})\n"]
    out = []
    for line in lines:
        match = _LINE_MAGIC.match(line.rstrip("\n"))
        if match:
            line = (
                f"{match.group('assign') or ''}await {AWAIT_HELPER}({match.group('args')}, None)\n"
            )
        out.append(line)
    return out


def kernel_runs_comms_while_awaiting() -> bool:
    """ipykernel >= 7.4 dispatches comm messages while a cell awaits (ipykernel#1565)."""
    try:
        import ipykernel
    except ImportError:
        return False
    parts = re.findall(r"\d+", ipykernel.__version__)[:2]
    return tuple(int(p) for p in parts) >= (7, 4)


@magics_class
class AcpMagics(Magics):
    """The ``%acp`` magics and their configuration."""

    agent = Unicode(
        help="The default agent: a preset name (see `%acp --agents`) or a command line."
    ).tag(config=True)
    permissions = Enum(
        ["ask", "allow", "deny"],
        help="Who answers permission requests: ask (buttons; deny when headless), allow, deny.",
    ).tag(config=True)
    wait = Bool(
        help="Keep a prompt cell busy until its turn ends (buttons keep working on ipykernel >= 7.4)."
    ).tag(config=True)
    headless = Enum(
        ["auto", "yes", "no"],
        help="Plain-text output without widgets: auto = when no one can click.",
    ).tag(config=True)
    timeout = Float(
        None, allow_none=True, help="Cancel a turn after this many seconds (none: no limit)."
    ).tag(config=True)
    coalesce_ms = Float(
        75.0, help="At most one widget update per view per this many milliseconds."
    ).tag(config=True)
    mcp_servers = Union(
        [Dict(), List()],
        help="MCP servers passed to every new session: the usual {name: {command, args, env} | "
        "{type: http|sse, url, headers}} mapping, or ACP's list. ACP_NOTEBOOK_MCP_SERVERS may name a JSON file.",
    ).tag(config=True)

    permission_rules = List(
        Unicode(),
        help="Permission rules, tried in order before the policy, in every session: "
        '"allow read", "allow edit *.py", "allow execute pytest*", "deny execute rm *", '
        '"ask *"… (see %acp --rules). ACP_NOTEBOOK_PERMISSION_RULES sets them, separated by ;.',
    ).tag(config=True)

    @default("permission_rules")
    def _default_permission_rules(self) -> list[str]:
        rules = split_rules(os.environ.get("ACP_NOTEBOOK_PERMISSION_RULES", ""))
        try:
            PermissionRules.parse(rules)
        except ValueError as exc:
            print(f"acp_notebook: ignoring ACP_NOTEBOOK_PERMISSION_RULES: {exc}", file=sys.stderr)
            return []
        return rules

    @validate("permission_rules")
    def _validate_permission_rules(self, proposal: Any) -> list[str]:
        try:
            PermissionRules.parse(proposal["value"])
        except ValueError as exc:
            print(f"acp_notebook: permission rules not changed: {exc}", file=sys.stderr)
            return list(self._trait_values.get("permission_rules", []))
        return list(proposal["value"])

    @observe("permission_rules")
    def _permission_rules_changed(self, change: Any) -> None:
        if hasattr(self, "agents"):  # config is applied before __init__ made them
            # Not change["new"]: `%config` holds notifications, so the change may carry
            # the proposed value that the validator then refused.
            self._apply_permission_rules(self.permission_rules)

    def _apply_permission_rules(self, value: list[str]) -> None:
        try:
            rules = PermissionRules.parse(value)
        except ValueError:  # already said by the validator; keep what was in force
            return
        self.agents.set_permission_rules(rules if rules else None)

    @default("mcp_servers")
    def _default_mcp_servers(self) -> Any:
        path = os.environ.get("ACP_NOTEBOOK_MCP_SERVERS")
        if not path:
            return {}
        try:
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError) as exc:
            print(
                f"acp_notebook: ignoring ACP_NOTEBOOK_MCP_SERVERS ({path}): {exc}", file=sys.stderr
            )
            return {}

    @observe("mcp_servers")
    def _mcp_servers_changed(self, change: Any) -> None:
        if hasattr(self, "agents"):  # config is applied before __init__ made them
            self._apply_mcp_servers(change["new"])

    def _apply_mcp_servers(self, value: Any) -> None:
        try:
            self.agents.mcp_servers = normalise(value) if value else []
        except McpConfigError as exc:
            print(f"acp_notebook: MCP servers not used: {exc}", file=sys.stderr)
            return
        for runtime in self.agents.runtimes.values():
            runtime.mcp_servers = self.agents.all_mcp_servers()

    @default("agent")
    def _default_agent(self) -> str:
        return os.environ.get("ACP_NOTEBOOK_AGENT", "demo")

    @default("permissions")
    def _default_permissions(self) -> str:
        value = os.environ.get("ACP_NOTEBOOK_PERMISSIONS", "ask")
        return value if value in ("ask", "allow", "deny") else "ask"

    @default("wait")
    def _default_wait(self) -> bool:
        flag = env_flag("ACP_NOTEBOOK_WAIT")
        return True if flag is None else flag

    @default("headless")
    def _default_headless(self) -> str:
        flag = env_flag("ACP_NOTEBOOK_HEADLESS")
        return "auto" if flag is None else ("yes" if flag else "no")

    @default("timeout")
    def _default_timeout(self) -> float | None:
        value = os.environ.get("ACP_NOTEBOOK_TIMEOUT")
        try:
            return float(value) if value else None
        except ValueError:
            return None

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.agents = NotebookAgents()
        self._fallback_said = False
        self._apply_mcp_servers(self.mcp_servers)
        self._apply_permission_rules(self.permission_rules)

    # ------------------------------------------------------------------ entry points

    @no_var_expand
    @line_cell_magic
    def acp(self, line: str, cell: str | None = None) -> None:
        """Send a prompt to the agent (``%acp --help`` for options)."""
        handle = self._start(line, cell, awaited=False)
        if handle is not None and handle.settings.headless:
            try:
                handle.wait()
            finally:  # an interrupted turn still leaves its transcript in the output
                self._show_headless(handle)

    async def acp_awaited(self, line: str, cell: str | None) -> None:
        """What a top-level ``%acp`` becomes: awaited, so the cell stays busy."""
        handle = self._start(line, cell, awaited=True)
        if handle is None:
            return
        if handle.settings.headless:
            try:
                await handle
            finally:  # an interrupted turn still leaves its transcript in the output
                self._show_headless(handle)
        elif handle.settings.wait:
            await handle

    # ------------------------------------------------------------------ the turn

    def settings(self, options: AcpOptions, *, awaited: bool) -> TurnSettings:
        headless = options.headless
        if headless is None:
            headless = {"yes": True, "no": False}.get(self.headless)
        if headless is None:
            headless = detect_headless(self.shell)
        wait = self.wait if options.wait is None else options.wait
        if not headless and wait and not (awaited and kernel_runs_comms_while_awaiting()):
            wait = False
            if awaited and not self._fallback_said:
                self._fallback_said = True
                print(
                    "acp_notebook: this kernel cannot process button clicks while a cell runs "
                    "(that needs ipykernel >= 7.4), so %acp returns at once and the turn goes on "
                    "in the background.",
                    file=sys.stderr,
                )
        return TurnSettings(
            prompt=prompt_with_context(options.prompt, getattr(self.shell, "user_ns", None)),
            agent=options.agent or self.agent,
            session=options.session,
            permissions=options.permissions or self.permissions,  # type: ignore[arg-type]
            timeout=options.timeout if options.timeout is not None else self.timeout,
            headless=headless,
            wait=wait,
            coalesce=self.coalesce_ms / 1000,
        )

    def _start(self, line: str, cell: str | None, *, awaited: bool) -> TurnHandle | None:
        try:
            options = parse_line(line, cell)
        except OptionError as exc:
            raise UsageError(str(exc)) from None
        if options.control is not None:
            self._control(options)
            return None
        if not options.prompt.strip():
            raise UsageError(
                "Give a prompt after %acp (or a cell body after %%acp); %acp --help lists the options."
            )
        settings = self.settings(options, awaited=awaited)
        if settings.headless:
            return self.agents.start_turn(settings)
        from ..ui.turn import TurnView

        loop = self.agents.loop
        label = settings.agent
        if label == DEMO:
            # Say so: with no configuration at all, this is the built-in demo agent.
            label = "demo agent (built in, offline; -a claude, -a gemini … for a real one)"
        view = TurnView(
            label,
            settings.session,
            post=loop.post,
            schedule_later=loop.call_later,
            interval=settings.coalesce,
        )
        handle = self.agents.start_turn(settings, view)
        display(
            handle.widget if handle.widget is not None else view.widget,
            display_id=handle.display_id,
        )
        return handle

    def _show_headless(self, handle: TurnHandle) -> None:
        display(handle.bundle(), raw=True)

    # ------------------------------------------------------------------ controls

    def _control(self, options: AcpOptions) -> None:
        control = options.control
        agent = options.agent or self.agent
        if control == "help":
            print(USAGE)
        elif control == "status":
            print("\n".join(self.agents.status_lines()))
        elif control == "cancel":
            count = self.agents.cancel(
                session=options.session if "session" in options.given else None,
                agent=options.agent,
            )
            print(f"Cancelling {count} turn(s)." if count else "No turn is running.")
        elif control == "restart":
            try:
                print(self.agents.restart(agent))
            except AgentNotFound as exc:
                raise UsageError(str(exc)) from None
        elif control == "stop":
            self.agents.stop(options.agent)
            print("Stopped." if self.agents.runtimes else "No agent was running.")
        elif control == "agents":
            from ..cli import main as cli_main

            cli_main(["agents"])
        elif control == "sessions":
            rows = self.agents.sessions()
            if not rows:
                print("No session yet.")
            for agent_name, name, session in rows:
                title = session.transcript.title or ""
                print(f"{name:12} {agent_name:12} {session.session_id}  {title}")
        elif control == "commands":
            self._show_commands(options)
        elif control == "log":
            self._show_log()
        else:
            controls = SessionControls(
                self.agents,
                agent=agent,
                policy=options.permissions or self.permissions,
                interactive=not detect_headless(self.shell)
                if options.headless is None
                else not options.headless,
            )
            try:
                controls.dispatch(options)
            except ControlFailed as exc:
                print(f"acp_notebook: {exc}", file=sys.stderr)

    def _show_commands(self, options: AcpOptions) -> None:
        runtime = self.agents.runtimes.get(options.agent or self.agent)
        session = runtime.sessions.get(options.session) if runtime else None
        if session is None or not session.transcript.commands:
            print(
                "No commands known yet: the agent announces them once a session exists (send a prompt first)."
            )
            return
        lines = ["| command | description | input |", "|---|---|---|"]
        for command in session.transcript.commands:
            hint = getattr(command.input, "hint", "") if command.input is not None else ""
            lines.append(f"| `/{command.name}` | {command.description} | {hint} |")
        display(Markdown("\n".join(lines)))

    def _show_log(self) -> None:
        display(self.agents.message_table().filter(last=50))


def register(shell: Any) -> AcpMagics:
    magics = AcpMagics(shell=shell)
    shell.register_magics(magics)
    shell.user_ns[AWAIT_HELPER] = magics.acp_awaited
    shell.user_ns_hidden[AWAIT_HELPER] = magics.acp_awaited
    from .completion import install

    install(shell, magics)
    if escape_transformer not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(escape_transformer)
    if await_transformer not in shell.input_transformers_post:
        shell.input_transformers_post.append(await_transformer)
    return magics


def unregister(shell: Any, magics: AcpMagics | None) -> None:
    if escape_transformer in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(escape_transformer)
    if await_transformer in shell.input_transformers_post:
        shell.input_transformers_post.remove(await_transformer)
    shell.user_ns.pop(AWAIT_HELPER, None)
    shell.user_ns_hidden.pop(AWAIT_HELPER, None)
    if magics is not None:
        magics.agents.shutdown()
        shell.magics_manager.magics["line"].pop("acp", None)
        shell.magics_manager.magics["cell"].pop("acp", None)
