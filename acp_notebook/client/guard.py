"""The client's own decision point: every `fs/write_text_file` and `terminal/create`
passes here before it is served, so what the user decided binds whatever path the agent
takes — not only the permission requests it chose to send.

A write or a command is served when one of these holds, checked in order:

1. a permission rule allows it (:class:`~.rules.PermissionRules`, on a tool call made of
   the path or command alone); a deny rule refuses it;
2. it is *covered*: in the running turn, the latest decided permission request whose tool
   call names it was allowed. A path is named when it is among the call's ``paths``
   after resolving symlinks; a command when it equals the call's ``command``, one of its
   parts (``a && b``), or the script of the ``sh -c`` the agent starts. An allow covers
   every use within its turn (not only the first): agents write a file in several steps
   and retry failed commands, and the user approved the call, not one system call of it.
   A rejected (or cancelled) latest request refuses it: what the user decided binds.
   Beyond the turn, an "always" answer (``allow_always`` / ``reject_always``: "this and
   later actions like it") to a request of the same tool kind stands for the session;
3. the session's policy is ``allow``;
4. a person allows it when asked: the client asks itself, with a permission request in the
   turn saying the agent did not ask ("The agent wants to write `x.py` without asking
   first"), options Allow once / Reject. With no one to ask (policy ``deny``, or ``ask``
   without a UI, as in headless runs) it is refused.

Under a read-only sandbox (``--sandbox read-only``) no write is served, whatever the rules,
the policy or a person say: the agent's own process cannot write the folder then, and the
client does not write it on the agent's behalf either.

Protected paths (:func:`is_protected`: inside ``.git/``, a virtual environment or
``site-packages``, the notebook state file, any ``.ipynb``) are always asked, whatever the
policy or a wildcard rule says; only a rule with a pattern naming them, or the user's own
allow of a request naming them, lets them through. The notebook open in Jupyter (the
session's ``notebook_path``) is never written behind the browser's back: refused, unless
such a rule names it.

A refusal is a JSON-RPC error (:data:`PERMISSION_DENIED`) with one sentence the agent can
act on.
"""

from __future__ import annotations

import itertools
import logging
import os
import shlex
from collections.abc import Callable
from pathlib import PurePath
from typing import TYPE_CHECKING

import anyio.to_thread

from ..protocol import models as m
from ..protocol.errors import RpcError
from .formatting import short_path
from .fs import resolve_inside
from .toolcall import ToolCallState

if TYPE_CHECKING:
    from .permissions import PermissionRequest
    from .rules import RuleMatch
    from .session import Session

__all__ = ["PERMISSION_DENIED", "STATE_FILE_NAMES", "Guard", "is_protected", "terminal_command"]

log = logging.getLogger(__name__)

#: The error code of a refused write or command (JSON-RPC's implementation-defined range;
#: ACP defines none for it).
PERMISSION_DENIED = -32003
#: The notebook state file (``notebook/state.py`` writes it): MCP servers planted there
#: reach later agents, so the agent never writes it unasked.
STATE_FILE_NAMES = frozenset({".acp-notebook.json"})
_OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def is_protected(path: str) -> str | None:
    """Why writing ``path`` (absolute) always asks, or None: inside ``.git/`` (a hook or a
    ``core.fsmonitor`` there runs commands), inside a virtual environment or
    ``site-packages`` (code every later run imports), the notebook state file, or a
    notebook (``.ipynb``). Reads the disk (``pyvenv.cfg`` of each ancestor)."""
    pure = PurePath(path)
    if ".git" in pure.parts[:-1] or pure.name == ".git":
        return "inside `.git/`, where hooks and config run commands"
    if "site-packages" in pure.parts or pure.name == "pyvenv.cfg":
        return "inside a Python environment"
    if any(os.path.isfile(os.path.join(parent, "pyvenv.cfg")) for parent in pure.parents):
        return "inside a virtual environment"
    if pure.name in STATE_FILE_NAMES:
        return "the notebook's acp_notebook settings"
    if pure.suffix == ".ipynb":
        return "a notebook"
    return None


def terminal_command(request: m.CreateTerminalRequest) -> str:
    """What a `terminal/create` runs, as one command line (the script of ``sh -c``)."""
    argv = [request.command, *(request.args or [])]
    if len(argv) == 1:
        return request.command
    from .shell import shell_payload  # imported here: rules.py (PermissionRules.match) says why

    return shell_payload(argv) or shlex.join(argv)


def _squash(text: str) -> str:
    return " ".join(text.split())


class Guard:
    """The decision point of one session (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ the two gates

    async def check_write(self, path: str) -> None:
        """Raise :class:`RpcError` unless writing ``path`` is allowed."""
        session = self.session
        confinement = session.confinement
        if confinement is not None and confinement.mode == "read-only":
            raise RpcError(
                PERMISSION_DENIED,
                f"Writing {path} was refused: the sandbox is read-only; do not retry it (the "
                "user can choose another sandbox).",
                {"path": path},
            )
        real, protected = await anyio.to_thread.run_sync(_path_facts, path, session.fs.roots)
        shown = short_path(path, session.cwd)
        call = ToolCallState("", None, kind="edit", raw_input={"path": path})
        call.locations = [m.ToolCallLocation(path=path)]
        rule = self._rule(call)
        named = rule is not None and rule.action == "allow" and not rule.wildcard
        notebook = session.notebook_path
        if notebook is not None and not named and real == _real(notebook):
            raise RpcError(
                PERMISSION_DENIED,
                f"The file {path} is the notebook open in Jupyter; edit it with the `notebook` "
                "MCP tools (edit_cell, insert_cell) instead of writing the file.",
                {"path": path},
            )

        def covers(prior: ToolCallState) -> bool:
            return any(_real(p, session.cwd) == real for p in prior.paths)

        await self._decide(
            call,
            rule,
            covers,
            protected=None if named else protected,
            asking=f"The agent wants to write `{shown}` without asking first",
            refused=f"Writing {path}",
            data={"path": path},
        )

    async def check_command(self, request: m.CreateTerminalRequest) -> None:
        """Raise :class:`RpcError` unless running ``request``'s command is allowed."""
        from .shell import command_parts  # imported here: rules.py (PermissionRules.match) says why

        command = terminal_command(request)
        call = ToolCallState("", None, kind="execute", raw_input={"command": command})
        wanted = {_squash(command), _squash(shlex.join([request.command, *(request.args or [])]))}

        def covers(prior: ToolCallState) -> bool:
            if prior.command is None:
                return False
            named = {_squash(prior.command), *(_squash(p) for p in command_parts(prior.command))}
            return bool(wanted & named)

        await self._decide(
            call,
            self._rule(call),
            covers,
            protected=None,
            asking=f"The agent wants to run `{command}` without asking first",
            refused=f"Running `{command}`",
            data={"command": command},
        )

    # ------------------------------------------------------------------ deciding

    async def _decide(
        self,
        call: ToolCallState,
        rule: RuleMatch | None,
        covers: Callable[[ToolCallState], bool],
        *,
        protected: str | None,
        asking: str,
        refused: str,
        data: dict[str, str],
    ) -> None:
        broker = self.session.permissions

        def refuse(why: str) -> RpcError:
            return RpcError(PERMISSION_DENIED, f"{refused} was refused: {why}.", data)

        if rule is not None and rule.action == "deny":
            raise refuse(f"the permission rule `{rule.rule}` denies it; do not retry it")
        if rule is not None and rule.action == "allow" and protected is None:
            return
        prior = self._latest_decision(covers) or self._standing(call.kind)
        if prior is not None:
            if prior.state != "selected" or prior.chosen is None or not prior.chosen.allows:
                raise refuse("the user rejected it in this turn; do not retry it")
            if protected is None or prior.decided_by == "user":
                return
        elif (
            protected is None
            and broker.policy == "allow"
            and (rule is None or rule.action != "ask")
        ):
            return
        if broker.policy == "deny" or (broker.asker is None and not broker.interactive):
            why = (
                "the session's permission policy is deny"
                if broker.policy == "deny"
                else "no one can be asked to allow it in this run"
            )
            if protected is not None:
                why = f"it is {protected}, and {why}"
            raise refuse(f"{why}; ask for permission with session/request_permission first")
        title = f"{asking} — {protected}" if protected else asking
        decided = await self._ask(call, title)
        if decided.state == "selected" and decided.chosen is not None and decided.chosen.allows:
            return
        raise refuse("the user did not allow it; do not retry it")

    def _rule(self, call: ToolCallState) -> RuleMatch | None:
        try:
            return self.session.permissions.rules.match(call, self.session.cwd)
        except Exception:  # a rule must never break a request: decided as if none matched
            log.exception("permission rules failed on a client-side check")
            return None

    def _latest_decision(self, covers: Callable[[ToolCallState], bool]) -> PermissionRequest | None:
        """The latest decided request of the running turn whose call names the action."""
        session = self.session
        turn = session.active_turn
        if turn is None or turn.record is None:
            return None
        latest = None
        for request in session.permissions.requests.values():
            call = request.call
            if request.pending or call is None or call.turn != turn.record.index:
                continue
            if request.unasked:
                continue  # the client's own questions cover nothing beyond themselves
            if covers(call):
                latest = request
        return latest

    def _standing(self, kind: str) -> PermissionRequest | None:
        """The latest "always" answer to a request about a tool call of ``kind``."""
        latest = None
        for request in self.session.permissions.requests.values():
            chosen, call = request.chosen, request.call
            if chosen is None or call is None or call.kind != kind or request.unasked:
                continue
            if chosen.kind in ("allow_always", "reject_always"):
                latest = request
        return latest

    async def _ask(self, call: ToolCallState, title: str) -> PermissionRequest:
        """A permission request of the client's own, shown in the turn like the agent's."""
        session = self.session
        call_id = f"acp-client-{next(self._ids)}"
        params = m.RequestPermissionRequest.model_validate(
            {
                "sessionId": session.session_id,
                "toolCall": {
                    "toolCallId": call_id,
                    "title": title,
                    "kind": call.kind,
                    "status": "pending",
                    "rawInput": call.raw_input,
                    "locations": [loc.to_wire() for loc in call.locations],
                },
                "options": _OPTIONS,
            }
        )
        broker = session.permissions
        request = broker.receive(params, session.transcript, cwd=session.cwd, roots=session.roots)
        request.unasked = True
        decided = await broker.decide(request)
        shown = session.transcript.tool_calls.get(call_id)
        if shown is not None:
            allowed = decided.chosen is not None and decided.chosen.allows
            shown.status = "completed" if decided.state == "selected" and allowed else "failed"
            session.transcript.changed()
        return decided


def _real(path: str, cwd: str = "") -> str:
    try:
        return os.path.realpath(os.path.join(cwd, path))
    except (OSError, ValueError):
        return os.path.normpath(path)


def _path_facts(path: str, roots: list[str]) -> tuple[str, str | None]:
    """``path`` resolved inside ``roots`` (the file system's own error when it is not:
    nobody is asked about a write that cannot happen), and why it is protected."""
    real = resolve_inside(path, roots)
    return real, is_protected(os.path.normpath(path)) or is_protected(real)
