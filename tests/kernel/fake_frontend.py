"""A notebook's ``acp-notebook`` extension played from the kernel client: the test side of
the live-notebook comm protocol (``acp_notebook.notebook.frontend.protocol``), over a
document of cells it keeps, answering the kernel's requests as the extension does."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from acp_notebook.notebook.frontend.protocol import KERNEL_TARGET, PROTOCOL_VERSION

from .conftest import Execution, Kernel, Msg

FUNCTION = "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result"
RENAMED = FUNCTION.replace("result", "acc")

Answer = Callable[[dict[str, Any]], "dict[str, Any] | None"]


class FakeFrontend:
    """One notebook's extension, played from the kernel client: a document of cells, a
    comm it opens to the kernel, and answers to the kernel's requests."""

    def __init__(self, kernel: Kernel, path: str = "work/analysis.ipynb") -> None:
        self.kernel = kernel
        self.path = path
        self.comm_id = uuid.uuid4().hex
        self.cells: list[dict[str, Any]] = [
            self.cell("c-load", "code", "%load_ext acp_notebook", 1),
            self.cell("c-func", "code", FUNCTION, 2),
            self.cell("c-note", "markdown", "Sums."),
        ]
        self._read = len(kernel.log)
        #: Every request the kernel sent, in order.
        self.requests: list[dict[str, Any]] = []

    @staticmethod
    def cell(cell_id: str, cell_type: str, source: str, count: int | None = None) -> dict[str, Any]:
        return {
            "id": cell_id,
            "cell_type": cell_type,
            "source": source,
            "execution_count": count,
            "outputs_text": "",
            "truncated": False,
        }

    # -- the comm ---------------------------------------------------------------------

    def _shell(self, msg_type: str, content: dict[str, Any]) -> None:
        self.kernel.kc.shell_channel.send(self.kernel.kc.session.msg(msg_type, content))

    def open(self, version: int = PROTOCOL_VERSION) -> None:
        hello = {
            "v": version,
            "type": "hello",
            "path": self.path,
            "extension_version": "0.1.0",
            "app": "FakeLab",
        }
        self._shell(
            "comm_open", {"comm_id": self.comm_id, "target_name": KERNEL_TARGET, "data": hello}
        )

    def send(self, type_: str, **fields: Any) -> None:
        data = {"v": PROTOCOL_VERSION, "type": type_, **fields}
        self._shell("comm_msg", {"comm_id": self.comm_id, "data": data})

    def close(self) -> None:
        self._shell("comm_close", {"comm_id": self.comm_id, "data": {}})

    def received(self, msg_type: str = "comm_msg") -> list[Msg]:
        """Messages of ``msg_type`` the kernel sent on this comm so far."""
        return [
            m
            for m in self.kernel.log
            if m.msg_type == msg_type and m.content.get("comm_id") == self.comm_id
        ]

    def sent(self, type_: str) -> list[dict[str, Any]]:
        """The data of every message of protocol type ``type_`` the kernel sent us."""
        datas = [m.content["data"] for m in self.received()]
        return [d for d in datas if d.get("type") == type_]

    def connect(self) -> None:
        """Open the comm and wait for the kernel's welcome."""
        self.open()
        self.kernel.wait_for(lambda: self.sent("welcome"), "the kernel's welcome")

    # -- serving requests -------------------------------------------------------------

    def serve(self, execution: Execution, answer: Answer | None = None) -> Execution:
        """Answer the kernel's requests until ``execution`` is idle. ``answer`` returns a
        reply (``{"result": …}`` or ``{"error": …}``), or None to leave one unanswered;
        it defaults to :meth:`document`, which accepts every proposal."""
        self.serve_until(
            lambda: execution.idle is not None,
            f"{execution.code!r} to finish, served by the fake frontend",
            answer,
        )
        return execution

    def serve_until(
        self, done: Callable[[], object], what: str, answer: Answer | None = None
    ) -> None:
        """Answer the kernel's requests (as :meth:`serve`) until ``done()`` is truthy."""
        answer = answer or self.document

        def step() -> bool:
            new = self.kernel.log[self._read :]
            self._read = len(self.kernel.log)
            for m in new:
                data = m.content.get("data", {})
                if m.msg_type != "comm_msg" or m.content.get("comm_id") != self.comm_id:
                    continue
                if data.get("type") in ("welcome", "cancel", "review", "agents"):  # not requests
                    continue
                self.requests.append(data)
                reply = answer(data)
                if reply is not None:
                    self.send("reply", id=data["id"], **reply)
            return bool(done())

        self.kernel.wait_for(step, what)

    def find(self, cell_id: str) -> int:
        return next((i for i, c in enumerate(self.cells) if c["id"] == cell_id), -1)

    def live(self, index: int) -> dict[str, Any]:
        return {**self.cells[index], "index": index}

    def document(self, request: dict[str, Any], decision: str = "accept") -> dict[str, Any]:
        """The extension's answers over this fake's cells (staleness included)."""
        kind = request["type"]
        if kind == "list_cells":
            return {"result": {"cells": [self.live(i) for i in range(len(self.cells))]}}
        if kind == "read_cell":
            index = self.find(request["cell_id"])
            if index < 0:
                return {"error": {"code": "not_found", "message": "No cell has that id."}}
            return {"result": {"cell": self.live(index)}}
        if kind == "run_cell":
            index = self.find(request["cell_id"])
            if index < 0:
                return {"error": {"code": "not_found", "message": "No cell has that id."}}
            # As the page: only the source that was approved runs.
            if self.cells[index]["source"] != request.get("source"):
                return {"result": {"status": "stale", "cell": self.live(index)}}
            status = "ok" if request.get("wait", True) else "started"
            return {"result": {"status": status, "cell": self.live(index)}}
        assert kind in ("propose", "apply"), request
        change = request["change"]
        index = self.find(change.get("cell_id") or change.get("after_id"))
        if change["op"] != "insert" and self.cells[index]["source"] != change["expected_source"]:
            return {"result": {"status": "stale", "cell": self.live(index)}}
        if kind == "propose" and decision == "reject":
            return {"result": {"status": "rejected", "cell": None}}
        status = "accepted" if kind == "propose" else "applied"
        if change["op"] == "edit":
            self.cells[index]["source"] = change["source"]
        elif change["op"] == "insert":
            index += 1
            self.cells.insert(index, self.cell("c-new", change["cell_type"], change["source"]))
        else:
            del self.cells[index]
            return {"result": {"status": status, "cell": None}}
        return {"result": {"status": status, "cell": self.live(index)}}
