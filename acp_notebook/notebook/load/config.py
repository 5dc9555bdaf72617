"""The ``%acp`` configuration: ``%config AcpMagics.agent = "claude"``, ``ipython_config.py``,
each with an environment variable that sets its default.

==================  ==============================  =====================
trait               environment variable            default
==================  ==============================  =====================
agent               ACP_NOTEBOOK_AGENT              demo
permissions         ACP_NOTEBOOK_PERMISSIONS        ask
wait                ACP_NOTEBOOK_WAIT               true
headless            ACP_NOTEBOOK_HEADLESS           auto (allow_stdin)
timeout             ACP_NOTEBOOK_TIMEOUT            none
permission_rules    ACP_NOTEBOOK_PERMISSION_RULES   none (rules separated by ;)
mcp_servers         ACP_NOTEBOOK_MCP_SERVERS        none (a JSON file)
context             ACP_NOTEBOOK_CONTEXT            true
tools               ACP_NOTEBOOK_TOOLS              true
sandbox             ACP_NOTEBOOK_SANDBOX            none (the preset's: workspace)
writable_dirs       ACP_NOTEBOOK_WRITABLE_DIRS      none (separated by os.pathsep)
allowed_ports       ACP_NOTEBOOK_ALLOWED_PORTS      none (separated by commas)
==================  ==============================  =====================

The sandbox settings apply to an agent when it next starts (``%acp --restart``).

A setting that is refused (a malformed rule, an unreadable MCP file) says so in one line
on stderr and leaves what was in force.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import TYPE_CHECKING, Any

from traitlets import (
    Bool,
    Dict,
    Enum,
    Float,
    Int,
    List,
    Unicode,
    Union,
    default,
    observe,
    validate,
)
from traitlets.config import Configurable
from traitlets.utils.bunch import Bunch

from ...client.mcp import McpConfigError, normalise
from ...client.policy import POLICIES, Policy
from ...client.presets import DEMO
from ...protocol.sandbox import MODES, SandboxChoice
from .headless import detect_frontend, detect_headless, env_flag

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from ..runtime.agents import NotebookAgents

#: MCP servers as configured: the usual ``mcpServers`` mapping, or ACP's list (JSON values).
McpServers = dict[str, Any] | list[Any]


def _refused(what: str, exc: Exception) -> None:
    print(f"acp_notebook: {what}: {exc}", file=sys.stderr)


def _checked_rules(rules: str | list[str]) -> list[str]:
    """``rules`` (a string: separated by ``;`` or newlines) when every one parses;
    :class:`ValueError` with one sentence otherwise."""
    if not (rules.strip() if isinstance(rules, str) else rules):
        return []
    # Loaded when there are rules to check: with the shell lexer its matcher needs, this
    # module was half of `%load_ext`'s time, and most notebooks configure no rules.
    from ...client.rules import PermissionRules, split_rules

    texts = split_rules(rules) if isinstance(rules, str) else list(rules)
    PermissionRules.parse(texts)
    return texts


class AcpConfig(Configurable):
    """The configurable part of :class:`~.magics.AcpMagics`; it applies the shared
    settings (MCP servers, permission rules, tools) to the agents once they are made."""

    #: The kernel's shell, whose frontend decides what "headless" and "plain" mean
    #: (set by :class:`~IPython.core.magic.Magics`).
    shell: InteractiveShell | None

    agent = Unicode(
        help="The default agent: a preset name (see `%acp --agents`) or a command line."
    ).tag(config=True)
    permissions = Enum(
        list(POLICIES),
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

    context = Bool(
        help="Send the code above a %acp line, the last code cell and the notebook's path "
        "with every prompt (--no-context: only the words)."
    ).tag(config=True)
    tools = Bool(
        help="Offer every new session the `notebook` MCP server: the kernel's variables, "
        "cells and last error, and running code in it after approval (--no-tools: not)."
    ).tag(config=True)

    sandbox = Enum(
        list(MODES),
        None,
        allow_none=True,
        help="What the agents and their commands may write, enforced by the operating system: "
        "workspace (this folder, temp and the agent's own files; network on), read-only, "
        "workspace-offline (TCP only to allowed_ports), off; None: the preset's default "
        "(workspace). Applies when an agent next starts.",
    ).tag(config=True)
    writable_dirs = List(
        Unicode(),
        help="Directories the confined agents may write besides the notebook's folder.",
    ).tag(config=True)
    allowed_ports = List(
        Int(),
        help="With sandbox = workspace-offline: the TCP ports connections may still go to "
        "(on any host: Landlock's rules are per port).",
    ).tag(config=True)

    def sandbox_choice(self) -> SandboxChoice:
        """The sandbox settings as the agents' starts read them."""
        return SandboxChoice(self.sandbox, tuple(self.writable_dirs), tuple(self.allowed_ports))

    def is_headless(self, given: bool | None = None) -> bool:
        """No widgets: as given (``--headless``), configured, or when no one can click."""
        if given is not None:
            return given
        configured = {"yes": True, "no": False}.get(self.headless)
        return configured if configured is not None else detect_headless(self.shell)

    def is_plain(self, given: bool | None = None) -> bool:
        """Someone reads, but the frontend shows no widgets (``jupyter console``): unless
        ``--headless``/``--interactive`` or the configuration chose."""
        if given is not None or self.headless != "auto":
            return False
        return detect_frontend(self.shell) == "plain"

    def policy(self, given: str | None = None) -> Policy:
        return given or self.permissions  # type: ignore[return-value]

    def agents_if_made(self) -> NotebookAgents | None:
        """The agents, once the first ``%acp`` made them (the magics say)."""
        return None

    def apply_to_agents(self, agents: NotebookAgents) -> None:
        """Hand the shared settings to ``agents`` when they are made (later, on change)."""
        self._apply_mcp_servers(agents, self.mcp_servers)
        agents.permission_rules.replace(self.permission_rules)
        if agents.tools is not None:
            agents.tools.enabled = self.tools
        agents.sandbox = self.sandbox_choice()

    # ------------------------------------------------------------------ defaults

    @default("agent")
    def _default_agent(self) -> str:
        return os.environ.get("ACP_NOTEBOOK_AGENT", DEMO)

    @default("permissions")
    def _default_permissions(self) -> str:
        value = os.environ.get("ACP_NOTEBOOK_PERMISSIONS", "ask")
        return value if value in POLICIES else "ask"

    @default("wait")
    def _default_wait(self) -> bool:
        return env_flag("ACP_NOTEBOOK_WAIT") is not False

    @default("context")
    def _default_context(self) -> bool:
        return env_flag("ACP_NOTEBOOK_CONTEXT") is not False

    @default("tools")
    def _default_tools(self) -> bool:
        return env_flag("ACP_NOTEBOOK_TOOLS") is not False

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

    @default("mcp_servers")
    def _default_mcp_servers(self) -> McpServers:
        path = os.environ.get("ACP_NOTEBOOK_MCP_SERVERS")
        if not path:
            return {}
        try:
            with open(path, encoding="utf-8") as handle:
                return json.load(handle)
        except (OSError, ValueError) as exc:
            _refused(f"ignoring ACP_NOTEBOOK_MCP_SERVERS ({path})", exc)
            return {}

    @default("permission_rules")
    def _default_permission_rules(self) -> list[str]:
        try:
            return _checked_rules(os.environ.get("ACP_NOTEBOOK_PERMISSION_RULES", ""))
        except ValueError as exc:
            _refused("ignoring ACP_NOTEBOOK_PERMISSION_RULES", exc)
            return []

    @default("sandbox")
    def _default_sandbox(self) -> str | None:
        value = os.environ.get("ACP_NOTEBOOK_SANDBOX", "")
        if value and value not in MODES:
            problem = ValueError(f"the sandbox is one of {', '.join(MODES)}, not {value!r}")
            _refused("ignoring ACP_NOTEBOOK_SANDBOX", problem)
        return value if value in MODES else None

    @default("writable_dirs")
    def _default_writable_dirs(self) -> list[str]:
        return list(
            filter(None, os.environ.get("ACP_NOTEBOOK_WRITABLE_DIRS", "").split(os.pathsep))
        )

    @default("allowed_ports")
    def _default_allowed_ports(self) -> list[int]:
        text = os.environ.get("ACP_NOTEBOOK_ALLOWED_PORTS", "")
        try:
            return [int(port) for port in text.split(",") if port.strip()]
        except ValueError as exc:
            _refused("ignoring ACP_NOTEBOOK_ALLOWED_PORTS", exc)
            return []

    # ------------------------------------------------------------------ changes

    @observe("sandbox", "writable_dirs", "allowed_ports")
    def _sandbox_changed(self, change: Bunch) -> None:
        agents = self.agents_if_made()
        if agents is not None:
            agents.sandbox = self.sandbox_choice()

    @validate("permission_rules")
    def _validate_permission_rules(self, proposal: Bunch) -> list[str]:
        try:
            return _checked_rules(proposal["value"])
        except ValueError as exc:
            _refused("permission rules not changed", exc)
            return list(self._trait_values.get("permission_rules", []))

    @observe("permission_rules")
    def _permission_rules_changed(self, change: Bunch) -> None:
        agents = self.agents_if_made()
        if agents is not None:
            # `%config` holds notifications: this may run before the validator refused
            # the value (said there), so a malformed one leaves the rules in force.
            with contextlib.suppress(ValueError):
                agents.permission_rules.replace(self.permission_rules)

    @observe("tools")
    def _tools_changed(self, change: Bunch) -> None:
        agents = self.agents_if_made()
        if agents is not None and agents.tools is not None:
            agents.tools.enabled = bool(change["new"])

    @observe("mcp_servers")
    def _mcp_servers_changed(self, change: Bunch) -> None:
        agents = self.agents_if_made()
        if agents is not None:
            self._apply_mcp_servers(agents, change["new"])

    @staticmethod
    def _apply_mcp_servers(agents: NotebookAgents, value: McpServers) -> None:
        try:
            agents.mcp_servers = normalise(value) if value else []
        except McpConfigError as exc:
            _refused("MCP servers not used", exc)
