"""The agent's requests in a lab: answered by hand, or handed to the normal handlers.

The :class:`Desk` is the ``handlers`` object of the lab's connection
(:class:`~acp_notebook.client.handlers.AgentRequests`): every request the agent sends
(permission, files, terminals, elicitation) becomes an :class:`AgentRequest` the learner
takes with ``await lab.next_request()`` and answers with ``req.answer(...)`` or
``req.reject(...)`` — unless its method was handed to the normal handlers with
``lab.auto(...)``, which serve it as ``%acp`` would (the session's files, terminals and
permission policy).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..client.handlers import SESSION_REQUESTS, ElicitationParams, ElicitationResponse, Route
from ..protocol import conformance
from ..protocol import models as m
from ..protocol.errors import INTERNAL_ERROR, RpcError
from ..protocol.modelbase import AcpModel
from .explain import StepError, explain

__all__ = ["GROUPS", "AgentRequest", "Desk"]

#: What ``lab.auto(...)`` accepts: a group name, or one method.
GROUPS: dict[str, tuple[str, ...]] = {
    "permission": ("session/request_permission",),
    "fs": ("fs/read_text_file", "fs/write_text_file"),
    "terminal": (
        "terminal/create",
        "terminal/output",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/release",
    ),
    "elicitation": ("elicitation/create",),
}

#: How to answer each method by hand (shown by ``req`` and in the errors of ``answer``).
_SHAPES: dict[str, str] = {
    "session/request_permission": "req.answer(option_id=ONE_OF_THE_OPTIONS) or req.answer(cancelled=True)",
    "fs/read_text_file": 'req.answer(content="the file\'s text")',
    "fs/write_text_file": "req.answer() once written (an empty result)",
    "terminal/create": 'req.answer(terminalId="term-1")',
    "terminal/output": 'req.answer(output="…", truncated=False, exitStatus={"exitCode": 0})',
    "terminal/wait_for_exit": "req.answer(exitCode=0)",
    "terminal/kill": "req.answer()",
    "terminal/release": "req.answer()",
    "elicitation/create": 'req.answer(action="accept", content={...}), or action="decline" / "cancel"',
}

_RESPONSES: dict[str, type[AcpModel]] = {
    "session/request_permission": m.RequestPermissionResponse,
    "fs/read_text_file": m.ReadTextFileResponse,
    "fs/write_text_file": m.WriteTextFileResponse,
    "terminal/create": m.CreateTerminalResponse,
    "terminal/output": m.TerminalOutputResponse,
    "terminal/wait_for_exit": m.WaitForTerminalExitResponse,
    "terminal/kill": m.KillTerminalResponse,
    "terminal/release": m.ReleaseTerminalResponse,
}


class AgentRequest:
    """One request of the agent waiting for the learner's answer."""

    def __init__(self, method: str, params: dict[str, Any]) -> None:
        self.method = method
        self.params = params
        #: The answer once given: a result, or the error it was rejected with.
        self.answered: dict[str, Any] | RpcError | None = None
        self._answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

    @property
    def session_id(self) -> str | None:
        value = self.params.get("sessionId")
        return str(value) if value is not None else None

    @property
    def options(self) -> list[str]:
        """A permission request's option ids, in the agent's order (else empty)."""
        options = self.params.get("options")
        return [
            str(option.get("optionId"))
            for option in (options if isinstance(options, list) else [])
            if isinstance(option, dict)
        ]

    @property
    def shape(self) -> str:
        """How to answer this request by hand."""
        return _SHAPES.get(self.method, "req.answer(**result_fields) or req.reject(message)")

    def __repr__(self) -> str:
        extra = f" options {', '.join(self.options)};" if self.options else ""
        return f"<AgentRequest {self.method}:{extra} answer with {self.shape}>"

    def answer(
        self,
        result: Mapping[str, Any] | None = None,
        /,
        *,
        option_id: str | None = None,
        cancelled: bool = False,
        **fields: Any,
    ) -> None:
        """Answer with ``result`` (or its fields as keywords); a permission request with
        ``option_id=`` (one of :attr:`options`) or ``cancelled=True``. The answer is checked
        against the schema first: a wrong shape raises :class:`StepError` and sends nothing."""
        self._check_open()
        answer = dict(result or {}, **fields)
        if option_id is not None or cancelled:
            if self.method != "session/request_permission":
                raise StepError(
                    f"option_id and cancelled answer a permission request; answer {self.method} with {self.shape}."
                )
            if option_id is not None and option_id not in self.options:
                raise StepError(
                    f"{option_id!r} is not one of the options the agent offered "
                    f"({', '.join(self.options)}); pick one of them or answer cancelled=True."
                )
            outcome = (
                {"outcome": "cancelled"}
                if cancelled
                else {"outcome": "selected", "optionId": option_id}
            )
            answer["outcome"] = outcome
        self._check_shape(answer)
        self.answered = answer
        self._answer.set_result(answer)

    def reject(self, message: str, code: int = INTERNAL_ERROR) -> None:
        """Answer with a JSON-RPC error (the agent sees ``code`` and ``message``)."""
        self._check_open()
        error = RpcError(code, message)
        self.answered = error
        self._answer.set_exception(error)

    @property
    def done(self) -> bool:
        return self._answer.done()

    async def wait(self) -> dict[str, Any]:
        """The answer, once given (raises the :class:`RpcError` it was rejected with)."""
        return await asyncio.shield(self._answer)

    def _check_open(self) -> None:
        if self._answer.done():
            raise StepError(
                f"This {self.method} request was already answered: a request gets one answer."
            )

    def _check_shape(self, answer: dict[str, Any]) -> None:
        if not conformance.validator_available():
            return
        envelope = {"jsonrpc": "2.0", "id": 0, "result": answer}
        errors = conformance.schema_errors(envelope, sender="client", request_method=self.method)
        if errors:
            raise StepError(
                " ".join(explain(self.method, error) for error in errors)
                + f" Answer {self.method} with {self.shape}."
            )


SessionFor = Callable[[str], Awaitable[Any]]


class Desk:
    """Serves the agent's requests of a lab connection (an ``AgentRequests`` object: the
    session-scoped methods are added below, one per route of ``SESSION_REQUESTS``)."""

    def __init__(self, session_for: SessionFor) -> None:
        self._session_for = session_for
        #: Methods handed to the normal handlers (``lab.auto``).
        self.automatic: set[str] = set()
        #: Requests waiting for an answer, oldest first.
        self.pending: list[AgentRequest] = []
        self._queue: asyncio.Queue[AgentRequest] = asyncio.Queue()
        #: Set whenever a request is queued for the learner (``lab.prompt`` stops waiting).
        self.arrived = asyncio.Event()

    async def next_request(self) -> AgentRequest:
        request = await self._queue.get()
        if self._queue.empty():
            self.arrived.clear()
        return request

    async def _serve(self, method: str, handler: str, request: Any) -> Any:
        if method in self.automatic:
            session = await self._session_for(request.session_id)
            return await getattr(session, handler)(request)
        params = request.to_wire() if isinstance(request, AcpModel) else dict(request)
        waiting = AgentRequest(method, json.loads(json.dumps(params)))
        self.pending.append(waiting)
        self._queue.put_nowait(waiting)
        self.arrived.set()
        try:
            answer = await waiting.wait()
        finally:
            self.pending.remove(waiting)
        model = _RESPONSES.get(method)
        return model.parse(answer) if model is not None else answer

    def permissions_waiting(self) -> list[AgentRequest]:
        """The permission requests still waiting for an answer."""
        return [r for r in self.pending if r.method == "session/request_permission" and not r.done]

    async def create_elicitation(self, request: ElicitationParams) -> ElicitationResponse:
        if "elicitation/create" in self.automatic:
            session_id = getattr(request, "session_id", None)
            if session_id is None:
                return m.DeclineElicitationResponse()
            session = await self._session_for(session_id)
            served: ElicitationResponse = await session.create_elicitation(request)
            return served
        answer: ElicitationResponse = await self._serve(
            "elicitation/create", "create_elicitation", request
        )
        return answer


def _by_hand(route: Route) -> Callable[[Desk, Any], Awaitable[Any]]:
    async def serve(self: Desk, request: Any) -> Any:
        return await self._serve(route.method, route.handler, request)

    serve.__name__ = serve.__qualname__ = route.handler
    serve.__doc__ = f"`{route.method}`: waits for the learner, or the normal handlers serve it."
    return serve


# The AgentRequests methods of the session-scoped requests, one per route (the router calls
# them by name): each waits for the learner's answer unless handed to the normal handlers.
for _route in SESSION_REQUESTS:
    setattr(Desk, _route.handler, _by_hand(_route))
