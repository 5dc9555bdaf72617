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

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..protocol import models as m
from .decision import Question, Turn, Verdict, decide, risk_rank
from .notebook_names import NotebookServer, notebook_tool_named
from .pending import Broker
from .permission_request import PermissionOption, PermissionRequest
from .policy import POLICIES as POLICIES  # the policies were defined here first
from .policy import Policy as Policy
from .rules import PermissionRules
from .toolcall import ToolCallState

if TYPE_CHECKING:
    from .transcript import Transcript

__all__ = [
    "POLICIES",
    "Asker",
    "PermissionBroker",
    "PermissionOption",
    "PermissionRequest",
    "Policy",
    "pick_by_policy",
]

_PREFERENCES: dict[str, tuple[str, ...]] = {
    "allow": ("allow_once", "allow_always"),
    "deny": ("reject_once", "reject_always"),
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
