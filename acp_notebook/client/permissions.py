"""The permission broker: every `session/request_permission` of a session waits here
until the decision, a person or a cancellation answers it.

What is decided, and in which order, is :func:`~.decision.decide` (rules, the turn's
policy, who can answer); the broker gathers the request's facts (its merged tool call, its
risk rating from ``danger.py``, computed once when :meth:`PermissionBroker.receive`
attaches the call; the notebook tool it is about, ``notebook_names.py``) and turns the
verdict into an answer:

* allow — the first ``allow_once`` option, else ``allow_always``;
* deny  — the first ``reject_once`` option, else ``reject_always``;
* ask   — a UI decides (the notebook's buttons, the CLI's terminal prompt); the decision
  denies instead when there is none, never silently allowing.

With no option of the kind, the request is answered `cancelled`. Each decision keeps the
chosen option and who chose it, for the transcript.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import anyio

from ..protocol import models as m
from .decision import Origin, Question, Turn, Verdict, decide, risk_rank
from .notebook_names import IN_KERNEL, RUNS_IN_KERNEL, NotebookServer, notebook_tool_named
from .pending import Broker
from .policy import POLICIES as POLICIES  # the policies were defined here first
from .policy import Policy as Policy
from .rules import PermissionRules
from .toolcall import EDIT_KINDS, ToolCallState

if TYPE_CHECKING:
    from .danger import Danger
    from .rules import RuleMatch
    from .transcript import Transcript

log = logging.getLogger(__name__)

_PREFERENCES: dict[str, tuple[str, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "deny": ("reject_once", "reject_always"),
}


@dataclass
class PermissionOption:
    option_id: str
    name: str
    kind: str

    @classmethod
    def from_wire(cls, raw: Any) -> PermissionOption | None:
        if not isinstance(raw, dict) or not isinstance(raw.get("optionId"), str):
            return None
        name = raw.get("name")
        kind = raw.get("kind")
        return cls(
            raw["optionId"],
            name if isinstance(name, str) else raw["optionId"],
            kind if isinstance(kind, str) else "",
        )

    @property
    def allows(self) -> bool:
        return self.kind.startswith("allow")


@dataclass
class PermissionRequest:
    """One pending (or decided) `session/request_permission`."""

    key: str
    tool_call_id: str
    tool_call: dict[str, Any]
    options: list[PermissionOption]
    state: Literal["pending", "selected", "cancelled"] = "pending"
    chosen: PermissionOption | None = None
    decided_by: str | None = None  # "user", "policy allow", "rule `allow read`", "cancel"…
    #: Why the decision is not what a rule or the policy would say alone (for the transcript).
    note: str | None = None
    #: The merged tool call and the session's directory (see :meth:`attach`).
    call: ToolCallState | None = field(default=None, repr=False, compare=False)
    cwd: str | None = None
    #: The tool call's risk rating, computed once by :meth:`attach` (None: nothing found).
    danger: Danger | None = None
    #: How the session's agent runs, in its turn header's words (``Session.sandbox``:
    #: "🔒 confined to `project/` · network on"); empty when the client did not start it.
    confinement: str = ""
    #: The rule that decided (or forced asking), if one matched.
    rule: RuleMatch | None = None
    #: The client asks this itself, about a write or command the agent did not ask for
    #: (``guard.py`` applied the rules and the policy already): only a person decides.
    unasked: bool = False
    #: ``tool``: the client's own question about its notebook tool (``receive`` with
    #: ``notebook_tool``); ``request``: the agent's.
    origin: Origin = "request"
    _decided: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    def option(self, option_id: str) -> PermissionOption | None:
        return next((o for o in self.options if o.option_id == option_id), None)

    @property
    def sandbox(self) -> str:
        """Whether what it asks for would run confined, for its card: for a command or a
        write, how the agent runs (:attr:`confinement`: commands run, and files are
        written, by the agent's confined processes or inside the session's folders); for
        a notebook tool that runs code, that the kernel is not confined; else empty."""
        call = self.call
        if call is None:
            return ""
        if call.notebook_tool is not None:
            return IN_KERNEL if call.notebook_tool in RUNS_IN_KERNEL else ""
        if call.command is not None or call.kind in EDIT_KINDS or call.diffs:
            return self.confinement
        return ""

    def attach(
        self, call: ToolCallState, cwd: str, roots: Sequence[str] = (), confinement: str = ""
    ) -> None:
        """Give the request its merged tool call (rules match it) and rate its risk:
        the command it runs, and its paths against the session's ``roots``;
        ``confinement``: how the session's agent runs (``Session.sandbox``)."""
        from .danger import assess_call  # imported here: rules.py (PermissionRules.match) says why

        self.call = call
        self.cwd = cwd
        self.confinement = confinement
        try:
            self.danger = assess_call(call, list(roots) or [cwd])
        except Exception:  # a rating must never break a request: it is only a hint
            log.exception("could not rate the risk of %s", self.tool_call_id)
            self.danger = None

    def outcome(self) -> dict[str, Any]:
        if self.state == "selected" and self.chosen is not None:
            return {"outcome": {"outcome": "selected", "optionId": self.chosen.option_id}}
        return {"outcome": {"outcome": "cancelled"}}

    def describe(self) -> str:
        """How the decision reads in a transcript: 'Allow once (chosen by user)'."""
        if self.state == "pending":
            return "waiting for permission"
        if self.state == "cancelled" or self.chosen is None:
            reason = _CANCEL_REASONS.get(self.decided_by or "cancel", self.decided_by)
            text = f"Cancelled ({reason})"
        else:
            text = f"{self.chosen.name} (chosen by {self.decided_by})"
        return f"{text} — {self.note}" if self.note else text


_CANCEL_REASONS = {
    "cancel": "the turn was cancelled",
    "timeout": "the turn timed out",
    "withdrawn": "the agent withdrew the request",
    "session closed": "the session closed",
    "user": "by user",
}


def pick_by_policy(options: list[PermissionOption], policy: str) -> PermissionOption | None:
    """The option a non-interactive policy picks, or None when no option fits."""
    for kind in _PREFERENCES.get(policy, ()):
        for option in options:
            if option.kind == kind:
                return option
    return None


Asker = Callable[[PermissionRequest], Awaitable[None]]


class PermissionBroker(Broker[PermissionRequest]):
    """Pending permission requests of one session, keyed by a request key.

    With policy ``ask`` an ``asker`` coroutine is awaited (the CLI's terminal prompt) —
    or, when none is set but ``interactive`` is true, the request simply waits for
    :meth:`choose` (the notebook's buttons call it).
    """

    prefix = "perm"

    def __init__(
        self,
        policy: Policy = "ask",
        *,
        interactive: bool = False,
        asker: Asker | None = None,
        on_change: Callable[[PermissionRequest], None] | None = None,
        rules: PermissionRules | None = None,
    ) -> None:
        super().__init__(asker=asker, on_change=on_change)
        self.policy: Policy = policy
        self.interactive = interactive
        self._rules = rules if rules is not None else PermissionRules()
        #: The running turn, or None between turns (a session sets it: ``Session.turn_now``).
        #: A broker without a session is always in a turn under its own policy.
        self.turn: Callable[[], Turn | None] = lambda: Turn(0, self.policy)
        #: The session's notebook server, when it has one: the agent's own requests about
        #: its tools are recognised (``notebook_names.py``).
        self.notebook_server: NotebookServer | None = None

    @property
    def rules(self) -> PermissionRules:
        """Tried before the policy, on requests whose tool call was attached. A shared
        object: change it with :meth:`PermissionRules.replace`, and every broker holding
        it follows."""
        return self._rules

    @rules.setter
    def rules(self, rules: PermissionRules | None) -> None:
        # Assigning holds another object from now on; None means no rules (matches nothing).
        self._rules = rules if rules is not None else PermissionRules()

    def receive(
        self,
        params: m.RequestPermissionRequest,
        transcript: Transcript,
        *,
        cwd: str,
        roots: Sequence[str] = (),
        notebook_tool: str | None = None,
        sandbox: str = "",
    ) -> PermissionRequest:
        """A `session/request_permission` arrives: register it (pending), merge its
        `toolCall` into the transcript (spec: into the call with that id, created if
        unseen), give it the merged call (rules match it; its risk is rated against
        ``roots``), and only then tell the views, so no prompt shows without its rating.
        ``notebook_tool``: the request is the client's own, for that notebook tool (Python
        in the kernel, not a shell command): rules name it so, and the prompt says so.
        ``sandbox``: how the session's agent runs (``Session.sandbox``), for the card.
        :meth:`decide` then waits for the answer."""
        wire = params.to_wire()
        request = self.open(wire["toolCall"], wire.get("options"))
        call = transcript.merge_permission_tool_call(params.tool_call, request)
        if notebook_tool is not None:
            call.notebook_tool = notebook_tool
            request.origin = "tool"
        elif call.notebook_tool is None and self.notebook_server is not None:
            server = self.notebook_server
            call.notebook_tool = notebook_tool_named(call, server.name, server.tools())
        request.attach(call, cwd, roots, sandbox)
        transcript.changed()
        return request

    def open(self, tool_call: dict[str, Any], raw_options: Any) -> PermissionRequest:
        """Register a request (pending); :meth:`decide` then waits for its answer."""
        options = [o for o in map(PermissionOption.from_wire, raw_options or []) if o is not None]
        tool_call_id = str(tool_call.get("toolCallId", ""))
        request = PermissionRequest(self._next_key(), tool_call_id, tool_call, options)
        self.requests[request.key] = request
        return request

    async def _decide(self, request: PermissionRequest) -> None:
        if not request.pending:  # cancelled before it was decided (a turn cancel)
            return
        if request.unasked:
            # The client's own question (``guard.ask_itself``): asking was decided already.
            await self._ask(request, without_ui="no one to ask")
            return
        verdict = self.verdict(request)
        rule = verdict.rule
        if (
            verdict.allowed
            and rule is not None
            and rule.action == "allow"
            and (pick_by_policy(request.options, "allow") is None)
        ):
            # An allow rule, but nothing to allow with: the policy decides.
            verdict = replace(
                self.verdict(request, rules=PermissionRules()),
                rule=rule,
                note=f"rule `{rule.rule}` matched, but the agent offered no allow option",
            )
        request.rule = verdict.rule
        if verdict.note:
            request.note = verdict.note
        if verdict.action == "ask":  # someone can answer (``decide`` denies otherwise)
            await self._ask(request, without_ui=verdict.by)
            return
        kind = "allow" if verdict.allowed else "deny"
        option = pick_by_policy(request.options, kind)
        if option is not None:
            self._select(request, option, verdict.by)
        elif kind == "deny" and verdict.rule is not None and verdict.by == verdict.rule.by:
            self.cancel(request.key, by=f"{verdict.by}: the agent offered no reject option")
        else:
            self.cancel(request.key, by=f"{verdict.by}: no matching option")

    def verdict(
        self, request: PermissionRequest, *, rules: PermissionRules | None = None
    ) -> Verdict:
        """What :func:`~.decision.decide` says about the agent's ``request`` now."""
        call = request.call
        if call is None:  # not attached: no rule can read it; the policy or a person decides
            call, rules = ToolCallState(request.tool_call_id, None), PermissionRules()
        tool, server = call.notebook_tool, self.notebook_server
        question = Question(
            call,
            request.origin,
            risk=risk_rank(request.danger),
            read_only=tool is not None and server is not None and server.tools().get(tool, False),
        )
        return decide(
            question,
            turn=self.turn(),
            rules=self._rules if rules is None else rules,
            cwd=request.cwd or "",
            can_ask=self.can_ask,
        )

    @property
    def can_ask(self) -> bool:
        """Someone can answer: an asker (the CLI's prompt) or a UI (the notebook's buttons)."""
        return self.asker is not None or self.interactive

    async def _ask(self, request: PermissionRequest, *, without_ui: str) -> None:
        """A person decides (the asker, or the UI's :meth:`choose`); with neither, the
        request is rejected, never silently allowed (``decided_by`` = ``without_ui``)."""
        if self.asker is not None:
            await self._run_asker(request)
        elif not self.interactive:
            option = pick_by_policy(request.options, "deny")
            if option is not None:
                self._select(request, option, without_ui)
            else:
                self.cancel(request.key, by=without_ui)

    def choose(self, key: str, option_id: str, *, by: str = "user") -> bool:
        """Decide a pending request; False if it is unknown, decided or the option is not offered."""
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        option = request.option(option_id)
        if option is None:
            return False
        self._select(request, option, by)
        return True

    def cancel(self, key: str, *, by: str = "cancel") -> bool:
        """Answer one pending request `cancelled`."""
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        request.state = "cancelled"
        request.decided_by = by
        request._decided.set()
        self._changed(request)
        return True

    def _select(self, request: PermissionRequest, option: PermissionOption, by: str) -> None:
        request.state = "selected"
        request.chosen = option
        request.decided_by = by
        request._decided.set()
        self._changed(request)
