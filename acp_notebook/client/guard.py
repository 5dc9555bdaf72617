"""The client's own gate: every `fs/write_text_file` and `terminal/create` passes here
before it is served, so what the user decided binds whatever path the agent takes — not
only the permission requests it chose to send.

:class:`Guard` gathers the facts of the write or command (its resolved path, whether it is
protected or the open notebook, its risk, which earlier answers name it) and asks
:func:`~.decision.decide`, whose docstring is the policy, in order. An earlier answer
names a write when the path is among its call's ``paths`` after resolving symlinks, and a
command when it equals the call's ``command``, one of its parts (``a && b``), or the
script of the ``sh -c`` the agent starts: an allow covers every use within its turn
(agents write a file in several steps and retry failed commands).

When the decision is to ask, the client asks itself (:func:`ask_itself`, the one way it
does, also for its notebook tools): a permission request in the turn saying the agent did
not ask ("The agent wants to write `x.py` without asking first"), options Allow once /
Reject.

Under a read-only sandbox (``--sandbox read-only``) no write is served, whatever the rules,
the policy or a person say: the agent's own process cannot write the folder then, and the
client does not write it on the agent's behalf either.

A refusal is a JSON-RPC error (:data:`PERMISSION_DENIED`) with one sentence the agent can
act on.
"""

from __future__ import annotations

import itertools
import logging
import os
import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

import anyio.to_thread

from ..protocol import models as m
from ..protocol.errors import RpcError
from .decision import Grant, Question, Verdict, decide, risk_rank
from .formatting import code_span, short_path
from .fs import resolve_inside
from .protected import STATE_FILE_NAMES, is_protected
from .toolcall import ToolCallState

if TYPE_CHECKING:
    from .permission_request import PermissionRequest
    from .session import Session

__all__ = [
    "PERMISSION_DENIED",
    "STATE_FILE_NAMES",
    "Guard",
    "ask_itself",
    "is_protected",
]

log = logging.getLogger(__name__)

#: The error code of a refused write or command (JSON-RPC's implementation-defined range;
#: ACP defines none for it).
PERMISSION_DENIED = -32003


def options(allow: str = "Allow once") -> list[m.PermissionOption]:
    """The buttons of a question the client asks itself: ``allow`` (its label) and Reject.
    Built when a question is, not at import: a model built at import builds its validator
    while the notebook layer loads."""
    return [
        m.PermissionOption(option_id="allow", name=allow, kind="allow_once"),
        m.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
    ]


async def ask_itself(
    session: Session,
    tool_call: m.ToolCallUpdate,
    *,
    notebook_tool: str | None = None,
    unasked: bool = False,
    allow: str = "Allow once",
) -> PermissionRequest:
    """A permission request of the client's own, shown in the running turn like the
    agent's, decided by the session's broker: about its notebook tool ``notebook_tool``
    (the broker decides it with :func:`~.decision.decide`), or ``unasked``: about a write
    or command the agent did not ask for, which only a person decides. ``allow`` labels
    the allow button ("Allow": a notebook tool's call runs once anyway)."""
    params = m.RequestPermissionRequest(
        session_id=session.session_id, tool_call=tool_call, options=options(allow)
    )
    broker = session.permissions
    request = broker.receive(
        params,
        session.transcript,
        cwd=session.cwd,
        roots=session.roots,
        notebook_tool=notebook_tool,
        sandbox=session.sandbox,
    )
    request.unasked = unasked
    active = session.active_turn
    if active is not None and active.cancel_requested:
        # spec: after session/cancel every permission request is answered `cancelled`.
        broker.cancel(request.key, by="cancel")
    return await broker.decide(request)


def _squash(text: str) -> str:
    return " ".join(text.split())


def _shortened(command: str, limit: int = 80) -> str:
    words = _squash(command)
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


class Guard:
    """The gate of one session (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._ids = itertools.count(1)
        #: Commands started without a permission request naming them (a rule, the policy
        #: or an "always" answer allowed them): (turn, command, who allowed it).
        self.ran: list[tuple[int, str, str]] = []

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
        call = ToolCallState("", None, kind="edit", raw_input={"path": path})
        call.locations = [m.ToolCallLocation(path=path)]
        question, grants = await anyio.to_thread.run_sync(self._write_facts, call, path)
        shown = short_path(path, session.cwd)
        await self._apply(
            question,
            grants,
            asking=f"The agent wants to write `{shown}` without asking first",
            refused=f"Writing {path}",
            data={"path": path},
        )

    async def check_command(self, request: m.CreateTerminalRequest) -> None:
        """Raise :class:`RpcError` unless running ``request``'s command is allowed."""
        # Its env and cwd are facts too: `BASH_ENV`, `LD_PRELOAD`, `PATH`… change what runs.
        call = ToolCallState.for_terminal(request)
        # The command line of the call's raw input (terminal_command.command_line).
        command = call.raw_input["command"]
        argv = shlex.join([request.command, *(request.args or [])])
        question, grants = await anyio.to_thread.run_sync(self._command_facts, call, argv)
        await self._apply(
            question,
            grants,
            asking=f"The agent wants to run `{command}` without asking first",
            refused=f"Running `{command}`",
            data={"command": command},
        )

    # ------------------------------------------------------------------ facts (a worker thread)

    def _write_facts(self, call: ToolCallState, path: str) -> tuple[Question, list[Grant]]:
        session = self.session
        # Resolved inside the roots (the file system's own error when it is not: nobody
        # is asked about a write that cannot happen).
        real = resolve_inside(path, session.fs.roots)
        protected = is_protected(os.path.normpath(path)) or is_protected(real)
        question = Question(
            call,
            "write",
            names=frozenset({f"path:{real}"}),
            protected=protected,
            open_notebook=self._is_open_notebook(real),
            risk=self._risk(call),
        )
        return question, self._grants()

    def _command_facts(self, call: ToolCallState, argv: str) -> tuple[Question, list[Grant]]:
        command = call.command or ""
        # Absolute, resolved from the terminal's own cwd (relative to the session's).
        targets = [_real(os.path.expanduser(t)) for t in call.write_targets(self.session.cwd)]
        protected = next((why for t in targets if (why := is_protected(t)) is not None), None)
        question = Question(
            call,
            "command",
            names=frozenset({f"command:{_squash(command)}", f"command:{_squash(argv)}"}),
            protected=protected,
            open_notebook=any(self._is_open_notebook(t) for t in targets),
            risk=self._risk(call),
            uncertainty=call.command_uncertainty,
        )
        return question, self._grants()

    def _is_open_notebook(self, real: str) -> bool:
        notebook = self.session.notebook_path
        return notebook is not None and real == _real(notebook)

    def _risk(self, call: ToolCallState) -> int:
        from .danger import assess_call  # imported here: rules.py (PermissionRules.match) says why

        try:
            return risk_rank(assess_call(call, self.session.roots))
        except Exception:  # unrated is not safe: a grant then covers only unrated calls
            log.exception("could not rate the risk of a client-side check")
            return risk_rank(None)

    def _grants(self) -> list[Grant]:
        """The agent's decided requests that can bear on a decision now: this turn's, and
        "always" answers of any turn (the client's own questions cover nothing beyond
        themselves). Only this turn's are read for what they name."""
        turn = self.session.permissions.turn()
        grants = []
        for request in list(self.session.permissions.requests.values()):
            call, chosen = request.call, request.chosen
            if request.pending or request.unasked or call is None:
                continue
            always = chosen is not None and chosen.kind.endswith("_always")
            current = turn is not None and call.turn == turn.index
            if not (current or always):
                continue
            grants.append(
                Grant(
                    kind=call.kind,
                    turn=call.turn,
                    allowed=request.state == "selected" and chosen is not None and chosen.allows,
                    always=always,
                    by_user=request.decided_by == "user",
                    risk=risk_rank(request.danger),
                    names=_names(call, self.session.cwd) if current else frozenset(),
                )
            )
        return grants

    # ------------------------------------------------------------------ deciding

    async def _apply(
        self,
        question: Question,
        grants: Sequence[Grant],
        *,
        asking: str,
        refused: str,
        data: dict[str, str],
    ) -> None:
        session = self.session
        broker = session.permissions
        turn = broker.turn()
        verdict = decide(
            question,
            turn=turn,
            rules=broker.rules,
            cwd=session.cwd,
            grants=grants,
            can_ask=broker.can_ask,
        )
        if verdict.action == "allow":
            if question.origin == "command" and turn is not None and verdict.by not in _ASKED:
                self.ran.append((turn.index, question.call.command or "", verdict.by))
            return
        if verdict.action == "deny":
            raise _refusal(refused, verdict, data)
        protected = question.protected
        title = f"{asking} — {protected}" if protected else asking
        decided = await self._ask(question.call, title)
        if decided.state == "selected" and decided.chosen is not None and decided.chosen.allows:
            return
        raise RpcError(
            PERMISSION_DENIED,
            f"{refused} was refused: the user did not allow it; do not retry it.",
            data,
        )

    def ran_note(self, turn: int) -> str:
        """One line listing the commands of ``turn`` (now ended: they are forgotten) that
        no permission request named, as "Changed in this turn" lists its files; empty when
        there were none."""
        ran = [f"{code_span(_shortened(c))} ({by})" for t, c, by in self.ran if t == turn]
        self.ran = [entry for entry in self.ran if entry[0] != turn]
        if not ran:
            return ""
        more = f", and {len(ran) - _NAMED} more" if len(ran) > _NAMED else ""
        return f"Ran in this turn without a permission request: {', '.join(ran[:_NAMED])}{more}."

    async def _ask(self, call: ToolCallState, title: str) -> PermissionRequest:
        """The client asks itself about ``call``; the question's call ends completed when
        allowed, failed otherwise."""
        session = self.session
        call_id = f"acp-client-{next(self._ids)}"
        update = m.ToolCallUpdate(
            tool_call_id=call_id,
            title=title,
            kind=call.kind,
            status="pending",
            raw_input=call.raw_input,
            locations=list(call.locations),
        )
        decided = await ask_itself(session, update, unasked=True)
        shown = session.transcript.tool_calls.get(call_id)
        if shown is not None:
            allowed = decided.chosen is not None and decided.chosen.allows
            shown.status = "completed" if decided.state == "selected" and allowed else "failed"
            session.transcript.changed()
        return decided


#: Who allowed a command that a permission request of this turn named (shown in its call).
_ASKED = frozenset({"the user", "this turn's answer"})
#: How many commands the "Ran in this turn" line names before "and N more".
_NAMED = 20


def _refusal(refused: str, verdict: Verdict, data: dict[str, str]) -> RpcError:
    why = verdict.reason
    if verdict.ask_first:
        why += "; ask for permission with session/request_permission first"
    elif verdict.by != "no turn" and verdict.by != "the open notebook":
        why += "; do not retry it"
    return RpcError(PERMISSION_DENIED, f"{refused} was refused: {why}.", data)


def _names(call: ToolCallState, cwd: str) -> frozenset[str]:
    """The writes and commands ``call`` names, as :attr:`Question.names` names them."""
    names = {f"path:{_real(p, cwd)}" for p in call.paths}
    command = call.command
    if command is not None:
        from .shell import command_parts  # imported here: rules.py (PermissionRules.match) says why

        names.add(f"command:{_squash(command)}")
        names.update(f"command:{_squash(p)}" for p in command_parts(command))
    return frozenset(names)


def _real(path: str, cwd: str = "") -> str:
    try:
        return os.path.realpath(os.path.join(cwd, path))
    except (OSError, ValueError):
        return os.path.normpath(path)
