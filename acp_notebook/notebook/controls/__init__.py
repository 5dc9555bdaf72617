"""The ``%acp`` controls: each defined once, here.

From an entry come the ``%acp`` option that runs it (``load/options.py``), its Tab completion
(``load/completion.py``), its line in ``%acp --help``, and the ``acp.<name>()`` function of the
Python API (``api.py``); :func:`~.base.run` carries it out for both. A new control is one
entry below and one handler.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import agents, changes, permissions, sessions, timeline
from .answers import Text
from .base import Arg, Control, ControlContext, ControlFailed, run, run_awaited

__all__ = [
    "REGISTRY",
    "Arg",
    "Control",
    "ControlContext",
    "ControlFailed",
    "Registry",
    "run",
    "run_awaited",
]


class Registry:
    """The controls in the order ``%acp --help`` lists them, by name and by flag."""

    def __init__(self, controls: list[Control]) -> None:
        self.controls = tuple(controls)
        self.by_name = {control.name: control for control in self.controls}
        self.by_flag = {flag: control for control in self.controls for flag in control.flags}
        if len(self.by_name) != len(self.controls):
            raise ValueError("Two controls have the same name.")
        if len(self.by_flag) != sum(len(c.flags) for c in self.controls):
            raise ValueError("Two controls have the same flag.")

    def __iter__(self) -> Iterator[Control]:
        return iter(self.controls)

    def __getitem__(self, name: str) -> Control:
        return self.by_name[name]

    def help_rows(self) -> list[tuple[str, str]]:
        """Per control: its flags and value, and what it does (``%acp --help``)."""
        return [(", ".join([*c.flags[1:], c.usage]), c.help) for c in self.controls]


def show_help(ctx: ControlContext) -> Text:
    """The ``%acp`` line: options, then controls."""
    from ..load.options import usage  # options.py reads this registry

    return Text(usage())


# One row per control, in --help order: name (acp.<name>), flags, help, handler (in the
# module of its group), its value on the %acp line, what -a/-s select.
# fmt: off
REGISTRY = Registry([
    Control("status", ("--status",), "agents, sessions and running turns", agents.status),
    Control("cancel", ("--cancel",), "cancel the running and queued turns", agents.cancel, scope="session"),
    Control("restart", ("--restart",), "restart the agent", agents.restart, scope="agent"),
    Control("stop", ("--stop",), "stop the agent (every agent without -a)", agents.stop, scope="agent"),
    Control("presets", ("--agents",), "the agent presets and what is installed here", agents.presets),
    Control("sessions", ("--sessions",), "this notebook's sessions", agents.sessions),
    Control("commands", ("--commands",), "the agent's slash commands", sessions.commands, scope="session"),
    Control("settings", ("--settings",), "the session's mode and options, as controls", sessions.settings,
            scope="session"),
    Control("mode", ("--mode",), "switch the session's mode", sessions.mode, Arg("MODE"), scope="session"),
    Control("set_option", ("--set",), "set a config option of the session (model, …)", sessions.set_option,
            Arg("ID=VALUE", split=sessions.split_assignment), scope="session"),
    Control("history", ("--history",), "the agent's saved sessions", sessions.history, scope="session"),
    Control("load", ("--load",), "load a saved session here (its history is replayed)", sessions.load,
            Arg("ID"), scope="session"),
    Control("resume", ("--resume",), "continue a saved session without replay (default: this notebook's last)",
            sessions.resume, Arg("ID", required=False), scope="session"),
    Control("close", ("--close",), "close the session", sessions.close, scope="session"),
    Control("delete", ("--delete",), "delete a saved session", sessions.delete, Arg("ID"), scope="agent"),
    Control("login", ("--login",), "authenticate with the agent", agents.login, Arg("METHOD", required=False),
            scope="agent"),
    Control("logout", ("--logout",), "log out of the agent", agents.logout, scope="agent"),
    Control("mcp", ("--mcp",), "the MCP servers passed to the agent; `trust` confirms .acp-notebook.json's",
            agents.mcp, Arg("trust", required=False), scope="agent"),
    Control("rules", ("--rules",), "the permission rules, in order, and what each does", permissions.rules),
    Control("pending", ("--pending",), "permission requests waiting for an answer", permissions.pending),
    Control("answer", ("--answer",), "answer a waiting permission request with one of its options",
            permissions.answer, Arg("KEY=OPTION", split=permissions.split_answer), scope="agent"),
    Control("changes", ("--changes",), "what the session's last turn changed, with Revert per hunk and Revert all",
            changes.changes, scope="session"),
    Control("undo", ("--undo",), "revert the files and cells the session's last turn changed", changes.undo,
            scope="session", awaits_page=True),
    Control("log", ("--log",), "the last JSON-RPC messages of the agents", agents.log, scope="agent"),
    Control("inspector", ("--inspect",), "the protocol inspector: every message live, paired, checked, filterable",
            timeline.inspector),
    Control("help", ("--help", "-h"), "this text", show_help),
])
# fmt: on
