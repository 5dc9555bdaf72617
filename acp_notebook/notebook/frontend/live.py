"""One connected live notebook and the typed async API the notebook tools call.

Threads: the methods are coroutines awaited on any asyncio loop (the agent loop thread,
or the kernel's own loop in a top-level ``await``). Comm messages arrive on the kernel's
main thread (or a subshell thread); a reply only resolves the caller's future with
``call_soon_threadsafe`` on the caller's loop. Comm sends are thread-safe (they go
through the IOPub thread). A synchronous busy cell holds the main shell, so replies wait
for it: call these from an awaiting cell or from the agent loop, never block on them.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import Callable
from typing import Any

from comm.base_comm import BaseComm

from .protocol import (
    CellChange,
    CellDelete,
    CellEdit,
    CellInsert,
    CellList,
    CellRead,
    CellType,
    EditOutcome,
    Hello,
    LiveCell,
    LiveTimeout,
    NotebookDisconnected,
    Reply,
    RunOutcome,
    message,
    parse,
    reply_error,
)

#: Safety nets, in seconds. Reading is quick; a review waits for a person.
READ_TIMEOUT = 30.0
REVIEW_TIMEOUT = 900.0
RUN_TIMEOUT = 600.0
#: Outputs of one cell are cut to this many characters (``truncated`` says so).
MAX_OUTPUT_CHARS = 4000

_Pending = tuple[asyncio.AbstractEventLoop, "asyncio.Future[Any]"]
#: A message the page sent on its own (a click), with the notebook it came from.
Handler = Callable[["LiveNotebook", dict[str, Any]], None]


class LiveNotebook:
    """A notebook document open in JupyterLab or Notebook 7, connected to this kernel."""

    def __init__(
        self,
        comm: BaseComm,
        hello: Hello,
        on_closed: Callable[[LiveNotebook], None],
        on_message: Handler | None = None,
    ) -> None:
        self.comm_id = comm.comm_id
        #: The notebook's path relative to the server's root (follows renames).
        self.path = hello.path
        self.app = hello.app
        self.extension_version = hello.extension_version
        self._comm = comm
        self._on_closed = on_closed
        self._on_message = on_message
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._closed: str | None = None
        comm.on_msg(self._on_msg)
        comm.on_close(self._on_close)

    def __repr__(self) -> str:
        state = "connected" if self.connected else "closed"
        return f"<LiveNotebook {self.path!r} ({self.app}, {state})>"

    @property
    def connected(self) -> bool:
        return self._closed is None

    # ------------------------------------------------------------------ reading

    async def list_cells(
        self, *, max_output_chars: int = MAX_OUTPUT_CHARS, timeout: float = READ_TIMEOUT
    ) -> list[LiveCell]:
        """Every cell of the live document, in order."""
        reply = await self._call(CellList, "list_cells", timeout, max_output_chars=max_output_chars)
        return reply.cells

    async def read_cell(
        self,
        cell_id: str,
        *,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        timeout: float = READ_TIMEOUT,
    ) -> LiveCell:
        """One cell by its nbformat id; :class:`CellNotFound` if there is none."""
        reply = await self._call(
            CellRead, "read_cell", timeout, cell_id=cell_id, max_output_chars=max_output_chars
        )
        return reply.cell

    # ------------------------------------------------------------------ changing

    async def propose(
        self, change: CellChange, *, label: str, timeout: float = REVIEW_TIMEOUT
    ) -> EditOutcome:
        """Show ``change`` in the notebook with Accept and Reject; the user's answer.

        On timeout or cancellation the proposal is withdrawn from the page.
        """
        return await self._call(EditOutcome, "propose", timeout, change=change.wire(), label=label)

    async def propose_edit(
        self,
        cell_id: str,
        new_source: str,
        *,
        expected_source: str,
        label: str,
        timeout: float = REVIEW_TIMEOUT,
    ) -> EditOutcome:
        return await self.propose(
            CellEdit(cell_id, new_source, expected_source), label=label, timeout=timeout
        )

    async def propose_insert(
        self,
        after_id: str | None,
        source: str,
        cell_type: CellType = "code",
        *,
        label: str,
        timeout: float = REVIEW_TIMEOUT,
    ) -> EditOutcome:
        return await self.propose(
            CellInsert(after_id, source, cell_type), label=label, timeout=timeout
        )

    async def propose_delete(
        self, cell_id: str, *, expected_source: str, label: str, timeout: float = REVIEW_TIMEOUT
    ) -> EditOutcome:
        return await self.propose(
            CellDelete(cell_id, expected_source), label=label, timeout=timeout
        )

    async def apply(self, change: CellChange, *, timeout: float = READ_TIMEOUT) -> EditOutcome:
        """Apply ``change`` without asking (a rule allows it, or an undo); ``applied`` or
        ``stale``. It lands on the notebook's own undo stack like a user's edit."""
        return await self._call(EditOutcome, "apply", timeout, change=change.wire())

    async def run_cell(
        self,
        cell_id: str,
        *,
        source: str,
        wait: bool = True,
        max_output_chars: int = MAX_OUTPUT_CHARS,
        timeout: float = RUN_TIMEOUT,
    ) -> RunOutcome:
        """Run a cell as the user would (outputs and execution count land in the cell),
        only while it holds ``source`` (the code that was approved): if the cell changed
        since, nothing runs and the answer is ``stale``.

        The kernel runs it after the cell it is running now: awaited from inside a
        running cell, pass ``wait=False`` (the answer is ``started``) or it times out.
        """
        return await self._call(
            RunOutcome,
            "run_cell",
            timeout,
            cell_id=cell_id,
            source=source,
            wait=wait,
            max_output_chars=max_output_chars,
        )

    # ------------------------------------------------------------------ lifecycle

    def close(self, reason: str) -> None:
        """Close from the kernel side; pending calls fail with ``reason``."""
        if self._fail_all(reason):
            with contextlib.suppress(Exception):
                self._comm.close()

    def send(self, type_: str, **fields: Any) -> None:
        self._comm.send(message(type_, **fields))

    # ------------------------------------------------------------------ plumbing

    async def _call(self, reply: type[Reply], type_: str, timeout: float, **fields: Any) -> Reply:
        """Send request ``type_``; its reply's result, validated as ``reply``."""
        return parse(reply, await self._request(type_, timeout, **fields), self.path)

    async def _request(self, type_: str, timeout: float, **fields: Any) -> Any:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        with self._lock:
            if self._closed is not None:
                raise NotebookDisconnected(self._closed)
            request_id = next(self._ids)
            self._pending[request_id] = (loop, future)
        try:
            self.send(type_, id=request_id, **fields)
            return await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            raise LiveTimeout(
                f"The notebook {self.path} did not answer {type_} within {timeout:g} s; "
                "check that its page is open and its kernel is not busy with another cell."
            ) from None
        finally:
            with self._lock:
                unanswered = self._pending.pop(request_id, None) is not None
                withdraw = unanswered and self._closed is None
            if withdraw:  # timed out or cancelled: take a proposal off the page
                with contextlib.suppress(Exception):
                    self.send("cancel", id=request_id)

    def _on_msg(self, msg: dict[str, Any]) -> None:
        data = msg.get("content", {}).get("data")
        if not isinstance(data, dict):
            return
        if data.get("type") == "path" and isinstance(data.get("path"), str):
            self.path = data["path"]
        elif data.get("type") == "reply" and isinstance(data.get("id"), int):
            with self._lock:
                pending = self._pending.pop(data["id"], None)
            if pending is not None:
                loop, future = pending
                if "error" in data:
                    _resolve(loop, future, error=reply_error(data, self.path))
                else:
                    _resolve(loop, future, result=data.get("result"))
        elif self._on_message is not None:
            self._on_message(self, data)

    def _on_close(self, _msg: dict[str, Any]) -> None:
        self._fail_all(
            f"The notebook {self.path} disconnected (its page was closed or reloaded); "
            "open it again and retry."
        )

    def _fail_all(self, reason: str) -> bool:
        """Mark closed and fail every pending call; False if it was closed already."""
        with self._lock:
            if self._closed is not None:
                return False
            self._closed = reason
            pending = list(self._pending.values())
            self._pending.clear()
        for loop, future in pending:
            _resolve(loop, future, error=NotebookDisconnected(reason))
        self._on_closed(self)
        return True


def _resolve(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[Any],
    *,
    result: Any = None,
    error: BaseException | None = None,
) -> None:
    """Settle ``future`` on its own loop, from any thread; a no-op if the loop is gone."""

    def settle() -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)

    with contextlib.suppress(RuntimeError):  # the caller's loop closed meanwhile
        loop.call_soon_threadsafe(settle)
