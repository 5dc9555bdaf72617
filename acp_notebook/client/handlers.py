"""The requests an agent sends to its client: their typed signatures, and how their params
are read.

:class:`AgentRequests` is the client side of ACP in the shape of the official SDK's
``Client`` protocol: one snake_case method per agent request, taking the parsed params
model and returning the response model. :class:`~acp_notebook.client.session.Session`
implements all of it (its files, terminals, permission and elicitation brokers); a user of
the client library may pass an object with any of these methods to
:func:`~acp_notebook.client.connection.connect`, and each method it defines replaces the
session's own for every session of that connection.

Params are read once, by the connection's router (:mod:`~acp_notebook.client.routing`),
before anything acts on them (:func:`read_params`):

* requests whose values the client *acts on* (paths, line windows, commands, arguments,
  environment, terminal ids) are read strictly: a value of the wrong type is never
  coerced, dropped or defaulted — not even where the schema's hints would allow it
  (``line``, ``limit``, ``args``, ``env``) — since running a command without one of its
  arguments or reading a whole file instead of a window would do something the agent did
  not ask. The answer is ``-32602`` with one sentence naming the parameter;
* requests that are *shown* (a permission request's tool call, an elicitation) are read
  leniently, as the schema's ``x-deserialize-*`` hints and unknown-variant rules allow;
* ``_meta`` is never acted on, so a malformed one is ignored (spec: default on error).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast, runtime_checkable

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from ..protocol import models as m
from ..protocol.errors import INVALID_PARAMS, RpcError
from ..protocol.modelbase import AcpModel

__all__ = [
    "HANDLER_NAMES",
    "SESSION_REQUESTS",
    "AgentRequests",
    "ElicitationParams",
    "ElicitationResponse",
    "Params",
    "Route",
    "SessionRequest",
    "invalid_params",
    "read_elicitation",
    "read_params",
]

#: Params as they arrive on the wire: a decoded JSON object.
Params = Mapping[str, Any]
if TYPE_CHECKING:
    #: `elicitation/create` params once read: a known mode, or an unknown one kept raw (spec).
    ElicitationParams = (
        m.CreateElicitationFormRequest
        | m.CreateElicitationUrlRequest
        | m.UnknownCreateElicitationRequest
    )
    #: What the client answers to `elicitation/create`.
    ElicitationResponse = (
        m.AcceptElicitationResponse | m.DeclineElicitationResponse | m.CancelElicitationResponse
    )


def __getattr__(name: str) -> Any:
    # The two unions above, as values, are made on first use (PEP 562): the models are made
    # when first looked up (protocol/lazy_names.py), and a turn without an elicitation
    # should not pay for the elicitation models by importing this module.
    if name == "ElicitationParams":
        return (
            m.CreateElicitationFormRequest
            | m.CreateElicitationUrlRequest
            | m.UnknownCreateElicitationRequest
        )
    if name == "ElicitationResponse":
        return (
            m.AcceptElicitationResponse | m.DeclineElicitationResponse | m.CancelElicitationResponse
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


M = TypeVar("M", bound=AcpModel)


@runtime_checkable
class AgentRequests(Protocol):
    """Everything an agent may ask of its client, typed (the SDK's ``Client`` shape).

    Raise :class:`~acp_notebook.protocol.errors.RpcError` to answer with an error.
    """

    async def request_permission(
        self, request: m.RequestPermissionRequest
    ) -> m.RequestPermissionResponse:
        """`session/request_permission`: answer with the chosen option, or cancelled."""
        ...

    async def read_text_file(self, request: m.ReadTextFileRequest) -> m.ReadTextFileResponse:
        """`fs/read_text_file`: the file's text, or a window of its lines."""
        ...

    async def write_text_file(self, request: m.WriteTextFileRequest) -> m.WriteTextFileResponse:
        """`fs/write_text_file`: create or replace the file."""
        ...

    async def create_terminal(self, request: m.CreateTerminalRequest) -> m.CreateTerminalResponse:
        """`terminal/create`: start the command; answer with its terminal id at once."""
        ...

    async def terminal_output(self, request: m.TerminalOutputRequest) -> m.TerminalOutputResponse:
        """`terminal/output`: the output so far, and the exit status once it exited."""
        ...

    async def wait_for_terminal_exit(
        self, request: m.WaitForTerminalExitRequest
    ) -> m.WaitForTerminalExitResponse:
        """`terminal/wait_for_exit`: answer once the command exited."""
        ...

    async def kill_terminal(self, request: m.KillTerminalRequest) -> m.KillTerminalResponse:
        """`terminal/kill`: kill the command; the terminal stays readable."""
        ...

    async def release_terminal(
        self, request: m.ReleaseTerminalRequest
    ) -> m.ReleaseTerminalResponse:
        """`terminal/release`: kill the command if it runs; the id becomes invalid."""
        ...

    async def create_elicitation(self, request: ElicitationParams) -> ElicitationResponse:
        """`elicitation/create`: ask the user for input (a form, or consent to open a URL)."""
        ...

    def complete_elicitation(self, notification: m.CompleteElicitationNotification) -> None:
        """`elicitation/complete` (a notification): a URL flow the agent started is done.

        Synchronous: notifications are applied inline, in arrival order, so it must not block.
        """
        ...


class SessionRequest(Protocol):
    """Params that name their session (every request in :data:`SESSION_REQUESTS`)."""

    session_id: str


@dataclass(frozen=True)
class Route:
    """One request an agent sends about a session: its wire method, the
    :class:`AgentRequests` method that serves it, and how its params are read."""

    method: str
    handler: str
    #: The params model's name in :mod:`~acp_notebook.protocol.models`: looked up on first
    #: use, so importing the routes makes no model (a model is made when first looked up).
    model: str
    #: Read as leniently as the schema allows (the request is shown, not acted on).
    lenient: bool = False

    @property
    def params(self) -> type[AcpModel]:
        """The params model."""
        params: type[AcpModel] = getattr(m, self.model)
        return params

    def read(self, params: Any) -> SessionRequest:
        # Every params model in SESSION_REQUESTS has a required `sessionId`.
        return cast(SessionRequest, read_params(self.params, params, lenient=self.lenient))


#: The session-scoped agent requests (each names its session with ``sessionId``).
#: `elicitation/create` may be scoped to a session or to a request, and
#: `elicitation/complete` names neither: the connection routes those two itself.
SESSION_REQUESTS: tuple[Route, ...] = (
    Route(
        "session/request_permission",
        "request_permission",
        "RequestPermissionRequest",
        lenient=True,
    ),
    Route("fs/read_text_file", "read_text_file", "ReadTextFileRequest"),
    Route("fs/write_text_file", "write_text_file", "WriteTextFileRequest"),
    Route("terminal/create", "create_terminal", "CreateTerminalRequest"),
    Route("terminal/output", "terminal_output", "TerminalOutputRequest"),
    Route("terminal/wait_for_exit", "wait_for_terminal_exit", "WaitForTerminalExitRequest"),
    Route("terminal/kill", "kill_terminal", "KillTerminalRequest"),
    Route("terminal/release", "release_terminal", "ReleaseTerminalRequest"),
)

#: The :class:`AgentRequests` methods, by name (what a ``handlers`` object may define).
HANDLER_NAMES: tuple[str, ...] = (
    *(route.handler for route in SESSION_REQUESTS),
    "create_elicitation",
    "complete_elicitation",
)


# ---------------------------------------------------------------------------- reading


def read_params(model: type[M], params: M | Params | Any, *, lenient: bool = False) -> M:
    """``params`` as a ``model``: returned as is when it is one already, else read from
    the wire dict (strictly unless ``lenient``; see the module docstring). Raises
    ``RpcError(-32602)`` with one sentence when the params do not fit."""
    if isinstance(params, model):
        return params
    if not isinstance(params, Mapping):
        raise RpcError(INVALID_PARAMS, f"The params must be an object, not {_shown(params)}.")
    data = dict(params)
    if "_meta" in data and not isinstance(data["_meta"], dict):
        del data["_meta"]  # spec: `_meta` is default-on-error, and nothing here reads it
    try:
        if lenient:
            return model.parse(data)
        return model.__pydantic_validator__.validate_python(data, strict=True)
    except ValidationError as exc:
        raise invalid_params(exc) from None


def read_elicitation(params: ElicitationParams | Params | Any) -> ElicitationParams:
    """`elicitation/create` params, read leniently: an unknown mode is kept raw (spec:
    preserve it), but a known mode without what it needs is ``RpcError(-32602)``."""
    if isinstance(
        params,
        (
            m.CreateElicitationFormRequest,
            m.CreateElicitationUrlRequest,
            m.UnknownCreateElicitationRequest,
        ),
    ):
        return params
    if not isinstance(params, Mapping):
        raise RpcError(INVALID_PARAMS, f"The params must be an object, not {_shown(params)}.")
    request: ElicitationParams = m.parse(m.CreateElicitationRequest, dict(params))
    if isinstance(request, m.UnknownCreateElicitationRequest) and request.mode in ("form", "url"):
        # The union kept a known mode raw because it could not be read: say what is missing.
        if request.mode == "form":
            return read_params(m.CreateElicitationFormRequest, params, lenient=True)
        return read_params(m.CreateElicitationUrlRequest, params, lenient=True)
    return request


def invalid_params(error: ValidationError) -> RpcError:
    """``-32602`` with one sentence about the first problem in ``error``."""
    return RpcError(INVALID_PARAMS, _sentence(error.errors(include_url=False)[0]))


_EXPECTED = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "string_type": "a string",
    "bool_type": "true or false",
    "list_type": "a list",
    "dict_type": "an object",
    "model_type": "an object",
    "model_attributes_type": "an object",
}


def _sentence(error: ErrorDetails) -> str:
    where = _wire_path(error["loc"])
    if error["type"] == "missing":
        return f"The request has no `{where}`."
    expected = _EXPECTED.get(error["type"])
    if expected is None:
        return f"The `{where}` parameter is invalid: {error['msg'][0].lower()}{error['msg'][1:]}."
    return f"The `{where}` parameter must be {expected}, not {_shown(error.get('input'))}."


def _wire_path(loc: tuple[int | str, ...]) -> str:
    """``("env", 0, "name")`` → ``env[0].name``."""
    text = ""
    for key in loc:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else key)
    return text or "params"


def _shown(value: Any) -> str:
    """A value as an agent would write it: JSON scalars in full (long strings cut), else
    what kind of value it is."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "a list"
    if value is None or isinstance(value, (bool, int, float, str)):
        text = json.dumps(value, ensure_ascii=False)
        return text if len(text) <= 60 else text[:59] + "…"
    return type(value).__name__
