"""The one permission decision: whatever an agent wants done through the client is
decided by :func:`decide`, from facts alone (it reads no disk, no clock, no session).

The questions (``Question.origin``):

* ``request`` — the agent's own `session/request_permission`;
* ``write`` / ``command`` — an `fs/write_text_file` or a `terminal/create` about to be
  served, asked about first or not;
* ``tool`` — a call of the client's own notebook tools that asks (``run_code``, cell edits).

The answer is allow, deny (a reason the agent is shown) or ask (a person decides). Checked
in this order, the first that decides wins:

1. **No turn is running**: deny. A policy (``-p``), a grant and the person at the screen
   belong to a turn; between turns the agent is served nothing.
2. **The notebook open in Jupyter** is never written behind the browser's back (``write``
   and ``command``: a write target of the command): deny, unless an allow rule names it.
3. **A deny rule** denies.
4. **The agent asks about a notebook tool of this session** (``request`` whose call is a
   notebook tool, ``notebook_names.py``): a read-only tool is allowed (it asks nothing when
   it runs); one that asks when it runs (``run_code``, cell edits) is allowed unless the
   turn's policy is ``deny`` and no rule names it: its own approval, which sees the real
   code, is then the one question.
5. **This turn's answer**: for a ``write`` or ``command``, the latest decided request of
   this turn whose call names the same action binds: rejected, deny; allowed, allow (a
   protected path only when a person allowed it).
6. **An ask rule** (or an allow rule its safeguard turned into asking) asks.
7. **A protected path** written (``fs/*`` or a command's write target; not by the notebook
   tools, which are the way to edit a notebook) is asked, unless an allow rule names it;
   under the policy ``deny`` it is refused.
8. **An allow rule** allows, but not a command the shell reader cannot read with
   certainty (``ToolCallState.command_uncertainty``): that is asked.
9. **An "always" answer** (``write`` and ``command``; not for an uncertain command): the
   latest ``allow_always`` / ``reject_always`` to a call of the same kind stands for the
   session; an allow covers a call of the same or a lower risk rating, never a riskier one.
10. **The turn's policy**: ``allow`` allows, ``deny`` denies.
11. **A person**: ask; when no one can answer (headless), deny.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .permission_request import Origin
from .policy import Policy

if TYPE_CHECKING:
    from .danger import Danger
    from .rules import PermissionRules, RuleMatch
    from .toolcall import ToolCallState

__all__ = [
    "NO_TURN",
    "Grant",
    "Origin",
    "Question",
    "Turn",
    "Verdict",
    "decide",
    "risk_rank",
]

log = logging.getLogger(__name__)

Action = Literal["allow", "deny", "ask"]

#: ``danger.py``'s levels in order: a grant covers its own rank and the ranks below.
_RANKS = {None: 0, "caution": 1, "danger": 2}


def risk_rank(danger: Danger | None) -> int:
    """0 for no rating, 1 for caution, 2 for danger."""
    return _RANKS[danger.level if danger is not None else None]


@dataclass(frozen=True)
class Turn:
    """The running turn: its index in the transcript and the policy it runs under."""

    index: int
    policy: Policy


@dataclass(frozen=True)
class Grant:
    """A decided permission request of the agent, as later writes and commands read it."""

    kind: str
    #: The transcript turn the request was asked in.
    turn: int | None
    allowed: bool
    #: ``allow_always`` / ``reject_always``: it stands beyond its turn.
    always: bool
    #: A person chose the answer (not a rule or the policy).
    by_user: bool
    #: The request's risk rank (:func:`risk_rank`).
    risk: int
    #: The actions its call names (``path:/real/path``, ``command:echo hi``).
    names: frozenset[str]


@dataclass(frozen=True)
class Question:
    """What is to be decided: the call and the facts about it that read the disk, gathered
    by the caller (``guard.py``, ``permissions.py``)."""

    call: ToolCallState
    origin: Origin
    #: The actions it is (``write``/``command``), named as :attr:`Grant.names` names them.
    names: frozenset[str] = frozenset()
    #: Why a path it writes is protected (:func:`~.protected.is_protected`), or None.
    protected: str | None = None
    #: It writes the notebook open in Jupyter.
    open_notebook: bool = False
    #: Its risk rank (:func:`risk_rank`).
    risk: int = 0
    #: The notebook tool only reads (``request`` about a notebook tool).
    read_only: bool = False
    #: Why the shell reader cannot read its command with certainty, or None.
    uncertainty: str | None = None


@dataclass(frozen=True)
class Verdict:
    """allow, deny or ask; ``by`` names who decided ("rule `allow read`", "policy allow");
    ``reason`` is a fragment the agent or the transcript is shown."""

    action: Action
    by: str
    reason: str = ""
    #: Why the decision is not what a rule or the policy says alone (for the transcript).
    note: str | None = None
    #: The rule that decided (or made it ask), if one matched.
    rule: RuleMatch | None = None
    #: A denial the agent could have avoided by asking first (the policy deny, no one to
    #: ask): its error says so.
    ask_first: bool = False

    @property
    def allowed(self) -> bool:
        return self.action == "allow"


NO_TURN = "no turn is running; the agent can act only while a prompt of the user is being answered"


def decide(
    question: Question,
    *,
    turn: Turn | None,
    rules: PermissionRules,
    cwd: str,
    grants: Sequence[Grant] = (),
    can_ask: bool,
) -> Verdict:
    """The answer to ``question`` (the module docstring is the order it follows)."""
    call, origin = question.call, question.origin
    if turn is None:
        return Verdict("deny", "no turn", NO_TURN)
    match = _match(rules, call, cwd)
    named = match is not None and match.action == "allow" and not match.wildcard
    if question.open_notebook and not named:
        return Verdict(
            "deny",
            "the open notebook",
            "it is the notebook open in Jupyter; edit it with the `notebook` MCP tools "
            "(edit_cell, insert_cell) instead of writing the file",
        )
    if match is not None and match.action == "deny":
        return Verdict(
            "deny", match.by, f"the permission rule `{match.rule}` denies it", rule=match
        )
    if origin == "request" and call.notebook_tool is not None:
        return _notebook_question(question, match, turn)
    if origin in ("write", "command"):
        prior = _latest(question, turn, grants)
        if prior is not None:
            if not prior.allowed:
                return Verdict("deny", "the user", "the user rejected it in this turn")
            if question.protected is None or prior.by_user:
                return Verdict("allow", "the user" if prior.by_user else "this turn's answer")
    if match is not None and match.action == "ask":
        note = match.note or f"asked because of rule `{match.rule}`"
        by = "safeguard" if match.safeguard else match.by
        return _ask(can_ask, by, note, question, rule=match)
    doubt = question.uncertainty if origin != "tool" else None
    if question.protected is not None and origin != "tool" and not named:
        if turn.policy == "deny":
            why = f"it is {question.protected}, and the session's permission policy is deny"
            return Verdict("deny", "policy deny", why, ask_first=True)
        return _ask(can_ask, "protected", f"it is {question.protected}", question, rule=match)
    if match is not None and match.action == "allow":
        if doubt is None:
            return Verdict("allow", match.by, rule=match)
        note = (
            f"rule `{match.rule}` does not cover a command it cannot read with certainty ({doubt})"
        )
        return _ask(can_ask, "safeguard", note, question, rule=match)
    if origin in ("write", "command") and doubt is None:
        standing = _standing(question, grants)
        if standing is not None:
            if not standing.allowed:
                return Verdict("deny", "the user", "the user rejected it for this session")
            return Verdict("allow", "an earlier “always” answer")
    if turn.policy == "allow":
        return Verdict("allow", "policy allow")
    if turn.policy == "deny":
        return Verdict(
            "deny", "policy deny", "the session's permission policy is deny", ask_first=True
        )
    return _ask(can_ask, "policy ask", "", question)


def _notebook_question(question: Question, match: RuleMatch | None, turn: Turn) -> Verdict:
    tool = question.call.notebook_tool
    if question.read_only:
        return Verdict("allow", "a read-only notebook tool", note=f"`{tool}` only reads")
    if match is None and turn.policy == "deny":
        return Verdict("deny", "policy deny", "the session's permission policy is deny")
    return Verdict(
        "allow",
        "the notebook tool's own approval",
        note=f"`{tool}` asks when it runs, with what it runs",
        rule=match,
    )


def _ask(
    can_ask: bool, by: str, note: str, question: Question, *, rule: RuleMatch | None = None
) -> Verdict:
    if can_ask:
        return Verdict("ask", by, note, note=note or None, rule=rule)
    why = "no one can be asked to allow it in this run"
    if question.protected is not None:
        why = f"it is {question.protected}, and {why}"
    label = "policy ask without a UI" if by == "policy ask" else f"{by}: no UI to ask"
    return Verdict("deny", label, why, note=note or None, rule=rule, ask_first=True)


def _match(rules: PermissionRules, call: ToolCallState, cwd: str) -> RuleMatch | None:
    try:
        return rules.match(call, cwd)
    except Exception:  # a rule must never break a request: decided as if none matched
        log.exception("permission rules failed on %s", call.tool_call_id)
        return None


def _latest(question: Question, turn: Turn, grants: Sequence[Grant]) -> Grant | None:
    """The latest grant of this turn naming the action."""
    latest = None
    for grant in grants:
        if grant.turn == turn.index and grant.names & question.names:
            latest = grant
    return latest


def _standing(question: Question, grants: Sequence[Grant]) -> Grant | None:
    """The latest "always" answer about a call of this kind that covers this risk."""
    latest = None
    for grant in grants:
        if not grant.always or grant.kind != question.call.kind:
            continue
        if grant.allowed and grant.risk < question.risk:
            continue  # a grant never widens to a riskier call
        latest = grant
    return latest
