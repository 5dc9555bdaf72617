"""A symmetric JSON-RPC 2.0 peer over newline-delimited byte streams.

Both ends of ACP use it: the client talking to an agent subprocess, and the built-in
demo agent talking to its client. It knows nothing of ACP methods except
``$/cancel_request``; everything else is registered by the layer above.

Ordering rules (the reason this is not the official SDK, see docs/jupyter-notes.md):

* notifications are handled **inline, in arrival order**: their handlers are plain
  functions that must not block (they update state and return). A notification that
  arrives before a response is therefore applied before the awaiting
  :meth:`Peer.request` resumes.
* incoming requests each run in their own task, so a slow permission prompt never
  stalls the stream of updates. A handler that returns a :class:`Reply` gets work done
  right after its answer is written (an agent's ``available_commands_update`` after the
  ``session/new`` answer), in the same task, so nothing else it sends can overtake it.
* when the incoming stream ends, request handlers still running are cancelled, unless
  ``drain`` gives them time to finish and answer (an agent fed by a piped script).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio
import anyio.abc
from pydantic import ValidationError

from .bounds import decode_line, encode_message
from .errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    ConnectionClosed,
    RpcError,
)
from .framing import read_lines
from .trace_event import Observer, TraceEvent

__all__ = [
    "CANCEL_REQUEST",
    "ConnectionClosed",
    "NotificationHandler",
    "Observer",
    "Peer",
    "Reply",
    "RequestHandler",
    "RpcError",
    "TraceEvent",
]

log = logging.getLogger(__name__)

CANCEL_REQUEST = "$/cancel_request"

RequestHandler = Callable[[Any], Awaitable[Any]]
NotificationHandler = Callable[[Any], None]

#: How long a failed write waits for the reader to learn why the other side went away.
_CLOSE_REPORT_WAIT = 3.0


class _Pending:
    __slots__ = ("done", "error", "method", "result")

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = anyio.Event()
        self.result: Any = None
        self.error: BaseException | None = None


#: A handler's result type.
R = TypeVar("R")


@dataclass(frozen=True)
class Reply(Generic[R]):
    """A request handler's result, and what to do once it has been written.

    ``then`` runs in the request's task right after the answer went out: messages it
    sends come after the answer, never before it (the Peer writes one message at a time,
    in order). Nothing runs when the request was cancelled or the answer could not be
    written.
    """

    result: R
    then: Callable[[], Awaitable[None]]


def _id_key(request_id: Any) -> Any:
    # Ids may be any JSON value a peer chooses; only hashable ones can key a dict.
    return (
        request_id if isinstance(request_id, (int, str)) or request_id is None else repr(request_id)
    )


def _to_wire(value: Any) -> Any:
    to_wire = getattr(value, "to_wire", None)
    return to_wire() if to_wire is not None else value


class Peer:
    """One end of a JSON-RPC connection.

    ``receive`` and ``send`` are anyio byte streams (a subprocess's stdout/stdin, a
    pair of memory streams in tests). Call :meth:`run` in a task; it returns when
    the incoming stream ends, after failing every pending request.

    ``close_reason`` is awaited once when the incoming stream ends; it returns the
    sentence used in the :class:`ConnectionClosed` errors (the agent subprocess
    layer uses it to report the exit code and the stderr tail).

    ``drain`` (seconds) is for a peer whose other side may close its output right after
    its last request (``printf '...' | agent``): when the incoming stream ends, the
    requests already received are still answered, and their handlers may still send
    notifications, for up to ``drain`` seconds; our own requests fail at once (no answer
    can arrive any more) and :attr:`closed` is true. With 0 (the default), handlers still
    running are cancelled at once.
    """

    def __init__(
        self,
        receive: anyio.abc.ByteReceiveStream,
        send: anyio.abc.ByteSendStream,
        *,
        name: str = "peer",
        max_line_bytes: int = 256 << 20,
        close_reason: Callable[[], Awaitable[str]] | None = None,
        drain: float = 0.0,
    ) -> None:
        self.name = name
        self._receive = receive
        self._send_stream = send
        self._max_line_bytes = max_line_bytes
        self._close_reason = close_reason
        self._drain = drain
        self._request_handlers: dict[str, RequestHandler] = {}
        self._notification_handlers: dict[str, NotificationHandler] = {}
        self._observers: list[Observer] = []
        self._pending: dict[Any, _Pending] = {}
        self._inflight: dict[Any, anyio.CancelScope] = {}
        self._next_id = 0
        self._send_lock = anyio.Lock()
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed_message: str | None = None
        self._finished = anyio.Event()
        #: Requests read and not answered yet (counted from the moment they are read,
        #: before their task starts), and an event set whenever one is done.
        self._serving = 0
        self._served = anyio.Event()
        self._draining = False

    # ------------------------------------------------------------------ registry

    def handle_request(self, method: str, handler: RequestHandler) -> None:
        """Serve ``method``: ``await handler(params)`` gives the result; raising
        :class:`RpcError` answers with that error."""
        self._request_handlers[method] = handler

    def handle_notification(self, method: str, handler: NotificationHandler) -> None:
        """Apply ``method`` notifications with ``handler(params)``, inline and in order."""
        self._notification_handlers[method] = handler

    def add_observer(self, observer: Observer) -> None:
        """See every message in both directions (trace files, the inspector, tests)."""
        self._observers.append(observer)

    def remove_observer(self, observer: Observer) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    # ------------------------------------------------------------------ state

    @property
    def closed(self) -> bool:
        """No answer can arrive any more: the incoming stream ended (or :meth:`run` was
        cancelled). While draining, answers and notifications still go out."""
        return self._closed_message is not None

    @property
    def closed_message(self) -> str | None:
        return self._closed_message

    async def wait_finished(self) -> None:
        """Wait until :meth:`run` has returned (the incoming stream ended)."""
        await self._finished.wait()

    # ------------------------------------------------------------------ outgoing

    async def request(
        self,
        method: str,
        params: Any = None,
        *,
        meanwhile: Callable[[anyio.Event], Awaitable[None]] | None = None,
    ) -> Any:
        """Send a request and wait for its result.

        Raises :class:`RpcError` when the other side answers with an error and
        :class:`ConnectionClosed` when the connection ends first. Cancelling the
        calling task sends ``$/cancel_request`` for it. ``meanwhile`` (given the event
        set when the answer is in) runs once the request is sent, in the calling task:
        work the caller will need after the answer, done while the other side works; it
        should return soon after the event is set, and must not raise.
        """
        if self._closed_message is not None:
            raise ConnectionClosed(self._closed_message)
        request_id = self._next_id
        self._next_id += 1
        pending = _Pending(method)
        self._pending[request_id] = pending
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = _to_wire(params)
        try:
            await self._write(message)
            if meanwhile is not None:
                await meanwhile(pending.done)
            await pending.done.wait()
        except anyio.get_cancelled_exc_class():
            if self._pending.pop(request_id, None) is not None and self._closed_message is None:
                with anyio.CancelScope(shield=True):
                    await self._write_quietly(
                        {
                            "jsonrpc": "2.0",
                            "method": CANCEL_REQUEST,
                            "params": {"requestId": request_id},
                        }
                    )
            raise
        finally:
            self._pending.pop(request_id, None)
        if pending.error is not None:
            raise pending.error
        return pending.result

    async def notify(self, method: str, params: Any = None) -> None:
        """Send a notification (no answer comes back)."""
        if self._closed_message is not None and not self._draining:
            raise ConnectionClosed(self._closed_message)
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = _to_wire(params)
        await self._write(message)

    async def aclose(self) -> None:
        """Close our sending side (for a subprocess: its stdin)."""
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                await self._send_stream.aclose()

    async def _write(self, message: dict[str, Any]) -> None:
        data = encode_message(message)
        if self._observers:
            self._emit(TraceEvent("send", time.time(), message, size=len(data) - 1))
        try:
            async with self._send_lock:
                await self._send_stream.send(data)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError) as exc:
            if self._closed_message is None and not isinstance(exc, anyio.ClosedResourceError):
                # The other side went away before reading this (an agent that exits at
                # once): let the reader report why — exit code, stderr tail — rather than
                # a bare "connection is closed". Not when we closed the stream ourselves.
                with anyio.move_on_after(_CLOSE_REPORT_WAIT):
                    await self._finished.wait()
            raise ConnectionClosed(
                self._closed_message
                or f"cannot send {message.get('method', 'a response')}: the connection is closed"
            ) from exc

    async def _write_quietly(self, message: dict[str, Any]) -> bool:
        """Write ``message`` unless the connection is closed; whether it was written."""
        try:
            await self._write(message)
        except ConnectionClosed:
            log.debug("%s: dropped %s, connection closed", self.name, message.get("method"))
            return False
        return True

    # ------------------------------------------------------------------ incoming

    async def run(self) -> None:
        """Read and dispatch messages until the incoming stream ends."""
        stream_ended = False
        try:
            async with anyio.create_task_group() as task_group:
                self._task_group = task_group
                try:
                    try:
                        await self._read_loop()
                    except Exception as exc:
                        # A reader bug must not hide why the connection ended: every
                        # pending request fails with this cause instead of an exit report.
                        log.exception("%s: reading failed", self.name)
                        self._closed_message = (
                            f"reading the other side's messages failed "
                            f"({type(exc).__name__}: {exc}); the connection is closed"
                        )
                        return
                    stream_ended = True
                    if self._drain > 0:
                        await self._answer_what_was_received()
                finally:
                    # Nobody can answer the in-flight handlers' requests any more.
                    task_group.cancel_scope.cancel()
        finally:
            self._task_group = None
            self._draining = False
            with anyio.CancelScope(shield=True):
                await self._fail_pending(stream_ended)
            self._finished.set()

    async def _answer_what_was_received(self) -> None:
        """The incoming stream ended: fail our own requests (nobody can answer them now),
        then give the handlers still running ``drain`` seconds to answer theirs."""
        self._draining = True
        await self._fail_pending(stream_ended=True)
        with anyio.move_on_after(self._drain):
            while self._serving:
                self._served = anyio.Event()
                await self._served.wait()

    async def _fail_pending(self, stream_ended: bool) -> None:
        if self._closed_message is None:
            reason = "the connection closed"
            # Only an ended stream has a reason to report: when run() is cancelled the
            # other side is still there (an agent's describe_exit would wait for an exit
            # that is not coming, shielded from the cancellation).
            if self._close_reason is not None and stream_ended:
                try:
                    reason = await self._close_reason()
                except Exception:  # a failing reporter must not hide the close itself
                    log.exception("%s: close_reason failed", self.name)
            self._closed_message = reason
        for pending in list(self._pending.values()):
            pending.error = ConnectionClosed(
                f"{self._closed_message} (while waiting for the answer to {pending.method})"
            )
            pending.done.set()
        self._pending.clear()

    async def _read_loop(self) -> None:
        await read_lines(
            self._receive,
            max_line_bytes=self._max_line_bytes,
            on_line=self._handle_line,
            on_too_long=self._skip_long_line,
        )

    def _skip_long_line(self, start: bytes) -> None:
        log.warning("%s: skipped a line longer than %d bytes", self.name, self._max_line_bytes)
        self._emit_invalid(start)

    def _handle_line(self, line: bytes) -> None:
        try:
            message = decode_line(line)
        except ValueError:
            if line.strip():
                log.warning("%s: skipped a line that is not JSON: %.200r", self.name, line)
                self._emit_invalid(line)
            return
        try:
            self._dispatch(line, message)
        except Exception:
            # A message no handler expected (a list as method, ...) is skipped; the reader
            # and the connection go on.
            log.exception("%s: skipped a message it could not handle: %.200r", self.name, line)

    def _dispatch(self, line: bytes, message: Any) -> None:
        if type(message) is not dict:
            self._emit_invalid(line)
            if isinstance(message, list):
                # spec: ACP v1 does not use JSON-RPC batches.
                log.warning("%s: rejected a JSON-RPC batch (not part of ACP v1)", self.name)
                self._spawn(
                    self._write_quietly,
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": INVALID_REQUEST,
                            "message": "JSON-RPC batches are not supported by ACP v1",
                        },
                    },
                )
            else:
                log.warning(
                    "%s: skipped a JSON value that is not an object: %.200r", self.name, line
                )
            return
        if self._observers:
            self._emit(TraceEvent("recv", time.time(), message, size=len(line)))
        method = message.get("method")
        if method is None:
            self._handle_response(message)
        elif "id" in message:
            if self._task_group is not None:
                self._serving += 1
                self._task_group.start_soon(self._serve_request, message)
        elif method == CANCEL_REQUEST:
            self._handle_cancel_request(message.get("params"))
        else:
            handler = self._notification_handlers.get(method) if isinstance(method, str) else None
            if handler is None:
                log.debug("%s: ignored notification %s", self.name, method)
                return
            try:
                handler(message.get("params"))
            except Exception:
                log.exception("%s: handler for %s failed", self.name, method)

    def _handle_response(self, message: dict[str, Any]) -> None:
        if "id" not in message:
            log.warning("%s: skipped a message with neither method nor id", self.name)
            return
        pending = self._pending.pop(_id_key(message["id"]), None)
        if pending is None:
            log.debug("%s: ignored a response to unknown request %r", self.name, message["id"])
            return
        if "error" in message:
            pending.error = RpcError.from_wire(message["error"])
        else:
            pending.result = message.get("result")
        pending.done.set()

    def _handle_cancel_request(self, params: Any) -> None:
        request_id = params.get("requestId") if isinstance(params, dict) else None
        scope = self._inflight.get(_id_key(request_id))
        if scope is None:
            log.debug("%s: $/cancel_request for %r, which is not running", self.name, request_id)
        else:
            scope.cancel()

    def _spawn(self, func: Callable[..., Coroutine[Any, Any, Any]], *args: Any) -> None:
        if self._task_group is not None:
            self._task_group.start_soon(func, *args)

    async def _serve_request(self, message: dict[str, Any]) -> None:
        try:
            then = await self._answer(message)
            if then is not None:
                await then()
        except ConnectionClosed:
            log.debug(
                "%s: the follow-up of %s stopped: connection closed", self.name, message["method"]
            )
        except Exception:
            log.exception("%s: the follow-up of %s failed", self.name, message["method"])
        finally:
            self._serving -= 1
            self._served.set()

    async def _answer(self, message: dict[str, Any]) -> Callable[[], Awaitable[None]] | None:
        """Run the handler and write its answer; returns the :class:`Reply` follow-up."""
        request_id = message["id"]
        method = message["method"]
        error: RpcError | None = None
        result: Any = None
        then: Callable[[], Awaitable[None]] | None = None
        handler = self._request_handlers.get(method) if isinstance(method, str) else None
        if handler is None:
            error = RpcError(METHOD_NOT_FOUND, f"Method not found: {method}", {"method": method})
        else:
            key = _id_key(request_id)
            with anyio.CancelScope() as scope:
                self._inflight[key] = scope
                try:
                    result = await handler(message.get("params"))
                    if isinstance(result, Reply):
                        result, then = result.result, result.then
                    result = _to_wire(result)
                except RpcError as exc:
                    error = exc
                except ValidationError as exc:
                    details = exc.errors(
                        include_url=False, include_context=False, include_input=False
                    )
                    error = RpcError(INVALID_PARAMS, f"Invalid params for {method}: {exc}", details)
                except Exception as exc:
                    log.exception("%s: handler for %s failed", self.name, method)
                    error = RpcError(INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
                finally:
                    self._inflight.pop(key, None)
            if scope.cancelled_caught:
                # spec: a cancelled request is still answered, with -32800.
                error = RpcError(REQUEST_CANCELLED, "Request cancelled")
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id}
        if error is not None:
            reply["error"] = error.to_wire()
        else:
            reply["result"] = {} if result is None else result
        written = await self._write_quietly(reply)
        return then if written and error is None else None

    # ------------------------------------------------------------------ observers

    def _emit(self, event: TraceEvent) -> None:
        for observer in self._observers:
            try:
                observer(event)
            except Exception:
                log.exception("%s: observer failed", self.name)

    def _emit_invalid(self, line: bytes) -> None:
        if self._observers:
            self._emit(TraceEvent.received_invalid(line))
