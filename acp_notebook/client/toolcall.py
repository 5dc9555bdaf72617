"""A tool call as merged from `tool_call`, `tool_call_update` and permission requests, and
what it runs, touches and fetches.

Those facts are read here once, from the call's fields and its ``rawInput``
(``rawinput.py``), and every reader uses them: the permission rules, the risk rating, the
permission prompt and both renderers (Markdown and HTML). So a command that a rule matched
is the command the prompt shows, and a file the rating warns about is a file the prompt
names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..protocol import models as m
from ..protocol.sandbox import REFUSED_WRITE
from .rawinput import FileDiff, command_of, cwd_of, edits_from_raw_input, paths_of, url_of

if TYPE_CHECKING:
    from .permission_request import PermissionRequest

__all__ = ["CANCELLED", "EDIT_KINDS", "FINISHED_STATUSES", "FileDiff", "ToolCallState"]

#: A tool call that has not finished when the turn is cancelled is shown with this
#: client-local status (v1 has no `cancelled` tool call status).
CANCELLED = "cancelled"
FINISHED_STATUSES = frozenset({"completed", "failed", CANCELLED})
#: Tool kinds that change files.
EDIT_KINDS = frozenset({"edit", "delete", "move"})

#: Titles that say nothing about the call (compared lowercased, stripped).
GENERIC_TITLES = frozenset({"", "tool", "tool call", "tool use", "function", "function call"})


@dataclass
class ToolCallState:
    """A tool call as merged from `tool_call`, `tool_call_update` and permission requests."""

    tool_call_id: str
    turn: int | None
    title: str = ""
    #: The programmatic name of the tool (`name`, schema 1.22), shown where the title is generic.
    name: str | None = None
    kind: str = "other"
    status: str = "pending"
    content: list[m.ToolCallContent] = field(default_factory=list)
    locations: list[m.ToolCallLocation] = field(default_factory=list)
    raw_input: Any = None
    raw_output: Any = None
    meta: dict[str, Any] | None = None
    #: Permission requests about this call (the permission broker opens them).
    permissions: list[PermissionRequest] = field(default_factory=list)
    #: The name of the client's own notebook tool this call is (``run_code``), set by the
    #: client that made the call, never from the wire: ``notebook`` rules match on it.
    notebook_tool: str | None = None
    #: Who rejected what this call asked, when the client itself knows (a cell edit the
    #: user rejected in the cell: ``Transcript.reject_running_call``), never from the wire.
    client_rejection: str | None = None
    #: The environment the command runs with (a ``terminal/create``'s ``env``, by name), set
    #: by the client that runs it (:meth:`for_terminal`), never from a tool call's fields.
    command_env: dict[str, str] | None = None
    #: The directory the command runs in (a ``terminal/create``'s ``cwd``), set like
    #: ``command_env``; None: the session's directory.
    command_cwd: str | None = None
    #: Made while the operating system confined the agent (``Transcript.confined``), never
    #: from the wire: a failure that says a write was refused reads as the sandbox's.
    confined: bool = False

    @classmethod
    def for_terminal(
        cls, request: m.CreateTerminalRequest, tool_call_id: str = ""
    ) -> ToolCallState:
        """The facts of a ``terminal/create``: kind ``execute``, the command line it runs
        (:func:`~.terminal_command.command_line`), its ``env`` and its ``cwd``."""
        from .terminal_command import command_line

        call = cls(
            tool_call_id,
            None,
            kind="execute",
            raw_input={"command": command_line(request.command, request.args or [])},
        )
        call.command_env = {v.name: v.value for v in request.env or []}
        call.command_cwd = request.cwd
        return call

    @property
    def output_text(self) -> str:
        """The text the call reported: its text content and its raw output."""
        texts = [
            c.content.text
            for c in self.content
            if isinstance(c, m.ContentToolCallContent) and isinstance(c.content, m.TextContentBlock)
        ]
        if self.raw_output is not None:
            texts.append(str(self.raw_output))
        return "\n".join(texts)

    @property
    def sandbox_refused(self) -> bool:
        """It failed saying a write was refused (EACCES, "Permission denied", EROFS) while
        the agent was confined: most likely the sandbox's doing."""
        return (
            self.confined
            and self.status == "failed"
            and REFUSED_WRITE.search(self.output_text) is not None
        )

    @property
    def finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    def merge(self, update: m.ToolCall | m.ToolCallUpdate) -> None:
        """spec: present non-null fields replace; `content` and `locations` replace the
        whole list; absent or null fields stay unchanged."""
        present = update.model_fields_set
        if "title" in present and update.title is not None:
            self.title = update.title
        if "name" in present and update.name is not None:
            self.name = update.name
        if "kind" in present and update.kind is not None:
            self.kind = str(update.kind)
        if "status" in present and update.status is not None:
            self.status = str(update.status)
        if "content" in present and update.content is not None:
            self.content = list(update.content)
        if "locations" in present and update.locations is not None:
            self.locations = list(update.locations)
        if "raw_input" in present and update.raw_input is not None:
            self.raw_input = update.raw_input
        if "raw_output" in present and update.raw_output is not None:
            self.raw_output = update.raw_output
        if update.field_meta is not None:
            self.meta = update.field_meta

    @property
    def shown_title(self) -> str:
        """What names the call to the user: its title, or its tool's ``name`` where the
        title says nothing ("Tool call", empty); empty when neither says anything."""
        if self.name and self.title.strip().lower() in GENERIC_TITLES:
            return self.name
        return self.title

    # ------------------------------------------------------------------ what it does

    @property
    def command(self) -> str | None:
        """The shell command the call runs: from rawInput (``command``/``cmd``), else — for
        kind ``execute`` — its title (agents that name the command only there), without
        the backticks around it."""
        if self.notebook_tool is not None:
            return None  # Python in the kernel, not a shell command
        command = command_of(self.raw_input)
        if command is None and self.kind == "execute":
            command = self.title.strip().strip("`").strip()
        return command or None

    @property
    def command_uncertainty(self) -> str | None:
        """Why the command cannot be read with certainty, in a short phrase ("an expansion
        inside ${…}; sets LD_PRELOAD"), or None: it can (or the call runs no command).
        Whatever the reader does not model is a doubt (:func:`~.shell.uncertain`), and so
        is an ``env`` entry that changes what runs (``command_env.py``). No rule decides
        an uncertain command without asking: an allow rule does not allow it, and a deny or
        ask rule it might escape asks."""
        command = self.command
        if command is None:
            return None
        # Imported here: most turns run no command (tests/cli/test_cli_imports.py).
        from .command_env import env_doubts
        from .shell import uncertain

        doubts = [d for d in [uncertain(command)] if d is not None]
        doubts += env_doubts(self.command_env or {})
        return "; ".join(doubts) or None

    def write_targets(self, cwd: str) -> list[str]:
        """Every file the command names as written — redirection targets, the
        destinations of ``cp``/``mv``/``install``/``ln``/``rsync``, ``tee``'s files,
        ``dd of=``, what ``rm`` removes… (``shell_writes.py``) — as absolute paths
        resolved against the directory it runs in (``command_cwd``, else ``cwd``, the
        session's) and every directory a literal ``cd`` in it leads to. An agent's own
        call that names its directory in rawInput (``cwd``, ``workdir``) is resolved from
        there *and* from ``cwd``: the agent says where, the client cannot check it. Symlinks
        are not resolved: a protected-path check resolves them itself. A path the shell
        expands is not listed; :attr:`command_uncertainty` names it."""
        command = self.command
        if command is None:
            return []
        from .shell_writes import write_targets

        if self.command_cwd:
            return write_targets(command, os.path.join(cwd, self.command_cwd))
        claimed = cwd_of(self.raw_input)
        found = write_targets(command, os.path.join(cwd, claimed)) if claimed else []
        return list(dict.fromkeys([*found, *write_targets(command, cwd)]))

    @property
    def url(self) -> str | None:
        """The URL the call fetches, from rawInput (never its title: a title is a
        description the agent chose, not what is fetched)."""
        return url_of(self.raw_input)

    @property
    def diffs(self) -> list[FileDiff]:
        """Every diff to show: the agent's own `diff` contents, in order; when it sent
        none, the edits its rawInput describes (``derived``), so a prompt never hides
        what is approved (agent-shell#123)."""
        own = [FileDiff.of(c) for c in self.content if isinstance(c, m.DiffToolCallContent)]
        if own or self.raw_input is None:
            return own
        return edits_from_raw_input(self.raw_input, self.kind)

    @property
    def paths(self) -> list[str]:
        """Every file path the call names, each once, in this order: its diffs, its
        locations, rawInput's paths, and the files of every edit rawInput describes
        (patches included) — also when the agent sent diffs of its own."""
        paths = [c.path for c in self.content if isinstance(c, m.DiffToolCallContent)]
        paths += [loc.path for loc in self.locations]
        paths += paths_of(self.raw_input)
        for edit in edits_from_raw_input(self.raw_input, self.kind):
            paths += edit.paths
        return list(dict.fromkeys(p for p in paths if p))

    @property
    def terminal_ids(self) -> list[str]:
        """The client terminals embedded in the call's content."""
        return [c.terminal_id for c in self.content if isinstance(c, m.TerminalToolCallContent)]
