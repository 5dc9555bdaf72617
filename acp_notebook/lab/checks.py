"""The report card's run and its checks: what is sent to the agent, what is observed, and
how each observation is graded.

:class:`Run` drives one agent through a fixed sequence — initialize, an unknown extension
method, a session, a plain turn, an edit, a cancelled turn, a prompt with an embedded
resource and one with an image (each only when claimed), a load and a list (only when
claimed) — and keeps what it saw. Each :class:`CheckSpec` of :data:`CHECKS` then reads the
run and gives a verdict with one sentence of evidence. Everything the agent is allowed to do
is answered by the normal handlers with the ``allow`` policy, in a scratch directory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from ..protocol import conformance
from ..protocol.errors import METHOD_NOT_FOUND, ConnectionClosed, RpcError
from .explain import StepError
from .messages import LabMessage

if TYPE_CHECKING:
    from .report import Prompts
    from .stepper import Stepper

__all__ = ["CANCEL_LIMIT", "CHECKS", "CheckSpec", "Run", "Verdict"]

Verdict = Literal["pass", "fail", "not-applicable", "inconclusive"]
Grade = tuple[Verdict, str]
T = TypeVar("T")

#: Seconds an agent has to answer a prompt `cancelled` once `session/cancel` was sent.
CANCEL_LIMIT = 10.0
#: The smallest PNG (1×1, transparent): what the image check sends.
_PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
_PROBE = "_acp_notebook/report_card_probe"


@dataclass
class Turn:
    """One prompt of the run: its answer's stop reason, or why there was none, and the
    messages from its request to its answer."""

    stop_reason: str | None = None
    problem: str | None = None
    messages: list[LabMessage] = field(default_factory=list)


@dataclass
class Run:
    prompts: Prompts
    timeout: float
    cwd: str
    lab: Stepper | None = None
    #: Why the run stopped early (the checks that needed the rest are inconclusive).
    stopped: str | None = None
    initialized: dict[str, Any] | None = None
    unknown_method: RpcError | dict[str, Any] | None = None
    session_id: str | None = None
    turns: dict[str, Turn] = field(default_factory=dict)
    #: ("early" | "answered" | "late" | "error", detail)
    cancel: tuple[str, str] | None = None
    load_replayed: list[str] | None = None
    listed: list[str] | None = None

    @property
    def capabilities(self) -> dict[str, Any]:
        caps = (self.initialized or {}).get("agentCapabilities")
        return caps if isinstance(caps, dict) else {}

    def claims(self, *path: str) -> bool:
        node: Any = self.capabilities
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        return node is not None and node is not False

    # ------------------------------------------------------------------ driving

    async def _bounded(self, step: Awaitable[T]) -> T:
        return await asyncio.wait_for(step, self.timeout)

    async def drive(self) -> None:
        """The whole sequence; stops early (``stopped``) when the agent cannot go on."""
        try:
            await self._drive()
        except (ConnectionClosed, StepError) as exc:
            self.stopped = str(exc)
        except TimeoutError:
            self.stopped = f"a step got no answer within {self.timeout:g} s"

    async def _drive(self) -> None:
        lab = self.lab
        assert lab is not None
        try:
            self.initialized = await self._bounded(lab.initialize())
        except RpcError as exc:
            self.stopped = f"initialize was answered with an error: {exc.message}"
            return
        try:
            self.unknown_method = await self._bounded(lab.request(_PROBE, {}, check=False))
        except RpcError as exc:
            self.unknown_method = exc
        try:
            opened = await self._bounded(lab.new_session())
        except RpcError as exc:
            self.stopped = f"session/new was answered with an error: {exc.message}"
            return
        self.session_id = str(opened.get("sessionId"))
        lab.auto(policy="allow")
        await self._turn("hello", self.prompts.hello)
        await self._turn("edit", self.prompts.edit)
        await self._cancelled_turn()
        if self.claims("promptCapabilities", "embeddedContext"):
            resource = {
                "type": "resource",
                "resource": {
                    "uri": f"file://{self.cwd}/notes.txt",
                    "mimeType": "text/plain",
                    "text": "ok\n",
                },
            }
            await self._turn("embedded", [{"type": "text", "text": self.prompts.hello}, resource])
        if self.claims("promptCapabilities", "image"):
            image = {"type": "image", "mimeType": "image/png", "data": _PNG}
            await self._turn("image", [{"type": "text", "text": self.prompts.hello}, image])
        if self.claims("loadSession"):
            await self._load()
        if self.claims("sessionCapabilities", "list"):
            await self._list()

    async def _turn(self, name: str, prompt: Any) -> Turn:
        lab = self.lab
        assert lab is not None
        turn = self.turns[name] = Turn()
        start = len(lab.messages)
        try:
            result = await self._bounded(lab.prompt(prompt))
            turn.stop_reason = str(result.get("stopReason"))
        except RpcError as exc:
            turn.problem = f"answered with error {exc.code}: {exc.message}"
        except TimeoutError:
            turn.problem = f"no answer within {self.timeout:g} s"
            await self._abandon()
        turn.messages = lab.messages[start:]
        return turn

    async def _abandon(self) -> None:
        """A turn that did not end: cancel it, and stop waiting for it."""
        lab = self.lab
        assert lab is not None
        if lab.turn is not None and not lab.turn.done():
            await lab.cancel()
            lab.turn.cancel()

    async def _cancelled_turn(self) -> None:
        lab = self.lab
        assert lab is not None
        since = len(lab.messages)
        turn = lab.start_prompt(self.prompts.slow)
        started = asyncio.ensure_future(lab.until("session/update", since=since))
        try:
            await asyncio.wait(
                {turn.task, started}, timeout=self.timeout, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            started.cancel()
        if turn.done():
            self.cancel = ("early", _outcome(turn.task))
            return
        await lab.cancel()
        try:
            result = await asyncio.wait_for(asyncio.shield(turn.task), CANCEL_LIMIT)
            self.cancel = ("answered", str(result.get("stopReason")))
        except RpcError as exc:
            self.cancel = ("error", f"{exc.code}: {exc.message}")
        except TimeoutError:
            self.cancel = ("late", "")
            turn.cancel()

    async def _load(self) -> None:
        lab = self.lab
        assert lab is not None and self.session_id is not None
        start = len(lab.messages)
        try:
            await self._bounded(lab.load_session(self.session_id))
        except RpcError as exc:
            self.load_replayed = [f"error {exc.code}: {exc.message}"]
            return
        self.load_replayed = [
            str(e.update_kind) for e in lab.messages[start:] if e.update_kind is not None
        ]

    async def _list(self) -> None:
        lab = self.lab
        assert lab is not None
        listed: list[str] = []
        cursor: str | None = None
        for _page in range(20):
            params = {"cwd": self.cwd, **({"cursor": cursor} if cursor else {})}
            try:
                page = await self._bounded(lab.request("session/list", params))
            except RpcError as exc:
                self.listed = None
                self.stopped = self.stopped or f"session/list was answered with error {exc.code}"
                return
            sessions = page.get("sessions")
            listed += [str(s.get("sessionId")) for s in sessions or [] if isinstance(s, dict)]
            cursor = page.get("nextCursor")
            if not cursor:
                break
        self.listed = listed


def _outcome(task: asyncio.Task[dict[str, Any]]) -> str:
    if task.cancelled():
        return "cancelled by the card"
    error = task.exception()
    if error is not None:
        return f"error: {error}"
    return str(task.result().get("stopReason"))


# ---------------------------------------------------------------------------- grading


@dataclass(frozen=True)
class CheckSpec:
    id: str
    title: str
    grade: Callable[[Run], Grade]


def _needs(run: Run, what: Any) -> Grade | None:
    """Inconclusive when the run stopped before it observed ``what``."""
    if what is None:
        return ("inconclusive", f"the run stopped first: {run.stopped or 'no observation'}")
    return None


def _version(run: Run) -> Grade:
    if run.initialized is None:
        return ("inconclusive", f"no initialize answer: {run.stopped or 'unknown'}")
    answered = run.initialized.get("protocolVersion")
    if answered == 1:
        return ("pass", "asked for version 1 and was answered 1")
    return (
        "fail",
        f"asked for version 1, which every v1 agent supports, and was answered {answered!r}",
    )


def _schema(run: Run) -> Grade:
    if not conformance.validator_available():
        return ("inconclusive", "jsonschema is not installed here, so nothing could be checked")
    lab = run.lab
    received = [e for e in (lab.messages if lab else []) if e.direction == "recv"]
    broken = [e for e in received if e.schema_errors or e.kind == "invalid"]
    if not received:
        return ("inconclusive", "the agent sent nothing")
    if not broken:
        return ("pass", "every message the agent sent conforms to the v1 schema")
    first = broken[0]
    reason = first.schema_errors[0] if first.schema_errors else "a line that is not JSON-RPC"
    return (
        "fail",
        f"{len(broken)} message(s) break the schema; the first, {first.method}: {reason}",
    )


def _unclaimed(run: Run, *path: str) -> Grade | None:
    """Why a check of a claimed capability cannot grade: no handshake, or not claimed."""
    if run.initialized is None:
        return ("inconclusive", "no initialize answer")
    if not run.claims(*path):
        return ("not-applicable", f"the agent does not claim {'.'.join(path)}")
    return None


def _claimed_turn(run: Run, capability: str, turn_name: str, what: str) -> Grade:
    turn = run.turns.get(turn_name)
    if (
        missing := _unclaimed(run, "promptCapabilities", capability) or _needs(run, turn)
    ) is not None:
        return missing
    assert turn is not None
    if turn.problem is not None:
        return ("fail", f"it claims {capability} but a prompt with {what} was {turn.problem}")
    return ("pass", f"a prompt with {what} was accepted (stopReason {turn.stop_reason})")


def _embedded(run: Run) -> Grade:
    return _claimed_turn(run, "embeddedContext", "embedded", "an embedded resource block")


def _image(run: Run) -> Grade:
    return _claimed_turn(run, "image", "image", "an image block")


def _load(run: Run) -> Grade:
    if (missing := _unclaimed(run, "loadSession") or _needs(run, run.load_replayed)) is not None:
        return missing
    replayed = run.load_replayed or []
    if replayed and replayed[0].startswith("error"):
        return ("fail", f"it claims loadSession but session/load was answered with {replayed[0]}")
    chunks = [k for k in replayed if k in ("user_message_chunk", "agent_message_chunk")]
    if chunks:
        return (
            "pass",
            "session/load replayed the conversation's messages before answering",
        )
    return (
        "fail",
        "it claims loadSession but session/load replayed no message of the session's history",
    )


def _cancel(run: Run) -> Grade:
    if (missing := _needs(run, run.cancel)) is not None:
        return missing
    assert run.cancel is not None
    state, detail = run.cancel
    if state == "early":
        return ("inconclusive", f"the long turn ended ({detail}) before it could be cancelled")
    if state == "late":
        return ("fail", f"no answer to the prompt within {CANCEL_LIMIT:g} s of session/cancel")
    if state == "error":
        return (
            "fail",
            f"the cancelled prompt was answered with an error ({detail}), not stopReason cancelled",
        )
    if detail == "cancelled":
        return ("pass", "the prompt was answered with stopReason cancelled after session/cancel")
    return (
        "fail",
        f"after session/cancel the prompt was answered with stopReason {detail}, not cancelled",
    )


def _no_turn(run: Run) -> Grade | None:
    if run.lab is None or not run.turns:
        return ("inconclusive", f"no turn ran: {run.stopped or 'unknown'}")
    return None


def _permission(run: Run) -> Grade:
    if (missing := _no_turn(run)) is not None:
        return missing
    writes = unasked = 0
    for turn in run.turns.values():
        asked = False
        for entry in turn.messages:
            if entry.direction != "recv" or entry.kind != "request":
                continue
            if entry.method == "session/request_permission":
                asked = True
            elif entry.method == "fs/write_text_file":
                writes += 1
                unasked += not asked
    if writes == 0:
        return ("inconclusive", "the agent wrote no file through the client (fs/write_text_file)")
    if unasked:
        return (
            "fail",
            f"{unasked} of {writes} fs/write_text_file requests came with no permission request before them in their turn",
        )
    return (
        "pass",
        f"each of the {writes} fs/write_text_file requests followed a session/request_permission",
    )


def _usage(run: Run) -> Grade:
    if (missing := _no_turn(run)) is not None:
        return missing
    assert run.lab is not None  # _no_turn checked it
    sent = sum(1 for e in run.lab.messages if e.update_kind == "usage_update")
    if sent:
        return ("pass", "the agent sent usage_update")
    # spec: usage_update is optional; nothing announces it, so its absence breaks nothing.
    return ("not-applicable", "the agent sent no usage_update (optional in ACP: no context gauge)")


def _unknown(run: Run) -> Grade:
    answer = run.unknown_method
    if (missing := _needs(run, answer)) is not None:
        return missing
    if isinstance(answer, RpcError):
        if answer.code == METHOD_NOT_FOUND:
            return ("pass", f"an unknown extension method ({_PROBE}) was answered -32601")
        return (
            "fail",
            f"an unknown extension method was answered {answer.code}, not -32601 (method not found)",
        )
    return ("fail", "an unknown extension method was answered with a result, not error -32601")


def _list(run: Run) -> Grade:
    missing = _unclaimed(run, "sessionCapabilities", "list") or _needs(run, run.listed)
    if missing is not None:
        return missing
    if run.session_id in (run.listed or []):
        return ("pass", "session/list for the card's directory lists the session the card created")
    return (
        "fail",
        f"session/list for the card's directory lists {len(run.listed or [])} sessions, not the one the card created",
    )


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("protocol-version", "Protocol version negotiation", _version),
    CheckSpec("schema", "Everything the agent sent conforms to the schema", _schema),
    CheckSpec("load-session", "loadSession claimed → loading replays the history", _load),
    CheckSpec(
        "embedded-context", "embeddedContext claimed → a resource block is accepted", _embedded
    ),
    CheckSpec("image", "image claimed → an image block is accepted", _image),
    CheckSpec("cancel", "A cancelled prompt ends with stopReason cancelled in time", _cancel),
    CheckSpec(
        "permission-before-edit",
        "Edits through the client come after a permission request",
        _permission,
    ),
    CheckSpec("usage-update", "usage_update sent", _usage),
    CheckSpec("unknown-method", "Unknown methods are answered -32601", _unknown),
    CheckSpec("session-list", "listSessions claimed → the list has the sessions created", _list),
)
