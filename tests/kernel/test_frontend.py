"""The kernel's live-notebook endpoint in a real kernel, with no browser: the test client
plays the extension (:class:`FakeFrontend` speaks the comm protocol of
``acp_notebook.notebook.frontend.protocol``), and cells call the API the way the notebook
tools do — awaited in the cell, or on an agent loop thread.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from acp_notebook.notebook.frontend.protocol import (
    FRONTEND_TARGET,
    KERNEL_TARGET,
    PROTOCOL_VERSION,
)

from .conftest import Execution, Kernel, Msg

pytestmark = pytest.mark.kernel

FUNCTION = "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result"
RENAMED = FUNCTION.replace("result", "acc")

IMPORT = "from acp_notebook.notebook.frontend import frontends\n"
#: Runs a call on an agent loop thread of its own, as the notebook tools will.
AGENT_LOOP = (
    IMPORT
    + "import asyncio\nfrom acp_notebook.notebook.loop import AgentLoop\n"
    + "agent_loop = AgentLoop()\n"
    + "def on_agent_loop(call):\n    return asyncio.wrap_future(agent_loop.submit(call))\n"
)

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
        answer = answer or self.document

        def step() -> bool:
            new = self.kernel.log[self._read :]
            self._read = len(self.kernel.log)
            for m in new:
                data = m.content.get("data", {})
                if m.msg_type != "comm_msg" or m.content.get("comm_id") != self.comm_id:
                    continue
                if data.get("type") in ("welcome", "cancel"):
                    continue
                self.requests.append(data)
                reply = answer(data)
                if reply is not None:
                    self.send("reply", id=data["id"], **reply)
            return execution.idle is not None

        self.kernel.wait_for(step, f"{execution.code!r} to finish, served by the fake frontend")
        return execution

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


@pytest.fixture
def frontend(kernel: Kernel) -> Iterator[FakeFrontend]:
    fake = FakeFrontend(kernel)
    fake.connect()
    yield fake
    fake.close()
    kernel.text(
        IMPORT + f"assert all(n.comm_id != {fake.comm_id!r} for n in frontends.connected())"
    )


def printed(execution: Execution) -> str:
    assert not execution.errors, execution.describe()
    return execution.stdout.strip()


# ---------------------------------------------------------------------------------- connecting


def test_with_no_extension_connected_there_is_no_live_notebook(fresh_kernel: Kernel) -> None:
    assert fresh_kernel.text(IMPORT + "print(frontends.current())").strip() == "None"
    # %load_ext announced the kernel to any extension listening: the beacon comm.
    beacons = [
        m
        for m in fresh_kernel.log
        if m.msg_type == "comm_open" and m.content["target_name"] == FRONTEND_TARGET
    ]
    assert len(beacons) == 1
    assert beacons[0].content["data"]["type"] == "announce"


def test_a_frontend_that_says_hello_is_welcomed_and_is_the_current_notebook(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    (welcome,) = frontend.sent("welcome")
    assert welcome["v"] == PROTOCOL_VERSION and welcome["version"]
    out = kernel.text(
        IMPORT + "live = frontends.current()\nprint(live.path, live.app, live.connected)"
    )
    assert out.split() == ["work/analysis.ipynb", "FakeLab", "True"]

    frontend.send("path", path="work/renamed.ipynb")
    assert kernel.text(IMPORT + "print(frontends.current().path)").strip() == "work/renamed.ipynb"


def test_a_frontend_speaking_another_protocol_version_is_refused(kernel: Kernel) -> None:
    fake = FakeFrontend(kernel)
    fake.open(version=PROTOCOL_VERSION + 1)
    kernel.wait_for(lambda: fake.received("comm_close"), "the kernel to close the comm")
    (refusal,) = fake.sent("unsupported")
    assert "install the same acp-notebook" in refusal["message"]
    assert kernel.text(IMPORT + "print(frontends.current())").strip() == "None"


def test_closing_the_comm_fails_pending_calls_and_forgets_the_notebook(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    execution = kernel.execute(
        IMPORT + "try:\n    await frontends.current().propose_edit('c-func', 'x = 1', "
        "expected_source='', label='never answered')\n"
        "except Exception as exc:\n    print(type(exc).__name__, exc)",
        until=None,
    )
    kernel.wait_for(lambda: frontend.sent("propose"), "the proposal")
    frontend.close()
    execution.wait("idle")
    out = printed(execution)
    assert out.startswith("NotebookDisconnected The notebook work/analysis.ipynb disconnected")
    assert kernel.text(IMPORT + "print(frontends.current())").strip() == "None"


def test_unloading_closes_every_connection_and_loading_announces_again(
    fresh_kernel: Kernel,
) -> None:
    fake = FakeFrontend(fresh_kernel)
    fake.connect()
    fresh_kernel.text("%unload_ext acp_notebook")
    fresh_kernel.wait_for(lambda: fake.received("comm_close"), "the kernel to close our comm")
    assert fresh_kernel.text(IMPORT + "print(frontends.current())").strip() == "None"
    fresh_kernel.text("%load_ext acp_notebook")
    beacons = [
        m
        for m in fresh_kernel.log
        if m.msg_type == "comm_open" and m.content["target_name"] == FRONTEND_TARGET
    ]
    closed = {m.content["comm_id"] for m in fresh_kernel.log if m.msg_type == "comm_close"}
    assert len(beacons) == 2 and beacons[0].content["comm_id"] in closed


# ---------------------------------------------------------------------------------- reading


def test_cells_are_listed_and_read_from_the_live_document(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    execution = kernel.execute(
        IMPORT
        + "live = frontends.current()\n"
        + "cells = await live.list_cells(max_output_chars=100)\n"
        + "print([(c.id, c.index, c.cell_type, c.execution_count) for c in cells])\n"
        + "cell = await live.read_cell('c-func')\n"
        + f"print(cell.source == {FUNCTION!r}, cell.truncated)",
        until=None,
    )
    out = printed(frontend.serve(execution)).splitlines()
    assert out == [
        "[('c-load', 0, 'code', 1), ('c-func', 1, 'code', 2), ('c-note', 2, 'markdown', None)]",
        "True False",
    ]
    assert [r["type"] for r in frontend.requests] == ["list_cells", "read_cell"]
    assert frontend.requests[0]["max_output_chars"] == 100
    assert frontend.requests[1]["cell_id"] == "c-func"


def test_reading_an_unknown_cell_raises_cell_not_found(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    execution = kernel.execute(
        IMPORT
        + "try:\n    await frontends.current().read_cell('nope')\n"
        + "except Exception as exc:\n    print(type(exc).__name__, exc)",
        until=None,
    )
    assert printed(frontend.serve(execution)) == "CellNotFound No cell has that id."


def test_a_malformed_reply_is_one_clear_error(kernel: Kernel, frontend: FakeFrontend) -> None:
    execution = kernel.execute(
        IMPORT
        + "try:\n    await frontends.current().list_cells()\n"
        + "except Exception as exc:\n    print(type(exc).__name__, exc)",
        until=None,
    )
    out = printed(frontend.serve(execution, lambda _: {"result": {"cells": [{"id": 3}]}}))
    assert out.startswith("LiveNotebookError The notebook work/analysis.ipynb sent a malformed")


# ---------------------------------------------------------------------------------- changing


@pytest.mark.parametrize(("decision", "status"), [("accept", "accepted"), ("reject", "rejected")])
def test_a_proposed_edit_resolves_on_the_agent_loop_with_the_users_answer(
    kernel: Kernel, frontend: FakeFrontend, decision: str, status: str
) -> None:
    execution = kernel.execute(
        AGENT_LOOP
        + "live = frontends.current()\n"
        + "outcome = await on_agent_loop(lambda: live.propose_edit("
        + f"'c-func', {RENAMED!r}, expected_source={FUNCTION!r}, label='Rename'))\n"
        + f"print(outcome.status, outcome.cell is not None and outcome.cell.source == {RENAMED!r})",
        until=None,
    )
    out = printed(frontend.serve(execution, lambda r: frontend.document(r, decision)))
    assert out == f"{status} {decision == 'accept'}"
    (request,) = frontend.requests
    assert request["type"] == "propose" and request["label"] == "Rename"
    edit = {"op": "edit", "cell_id": "c-func", "source": RENAMED, "expected_source": FUNCTION}
    assert request["change"] == edit
    assert frontend.cells[1]["source"] == (RENAMED if decision == "accept" else FUNCTION)


def test_a_proposal_against_a_changed_cell_is_stale_and_carries_the_cell_as_it_is(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    frontend.cells[1]["source"] = FUNCTION + "  # the user's edit"
    execution = kernel.execute(
        IMPORT
        + "outcome = await frontends.current().propose_edit("
        + f"'c-func', {RENAMED!r}, expected_source={FUNCTION!r}, label='Rename')\n"
        + 'print(outcome.status, outcome.cell.source.endswith("# the user\'s edit"))',
        until=None,
    )
    assert printed(frontend.serve(execution)) == "stale True"
    assert frontend.cells[1]["source"].endswith("# the user's edit")


def test_insert_delete_and_apply_send_their_changes(kernel: Kernel, frontend: FakeFrontend) -> None:
    execution = kernel.execute(
        IMPORT
        + "from acp_notebook.notebook.frontend import CellEdit\n"
        + "live = frontends.current()\n"
        + "added = await live.propose_insert('c-func', 'total([1])', 'code', label='Try')\n"
        + "gone = await live.propose_delete('c-note', expected_source='Sums.', label='Drop')\n"
        + f"done = await live.apply(CellEdit('c-func', {RENAMED!r}, {FUNCTION!r}))\n"
        + "print(added.status, added.cell.id, added.cell.index, gone.status, gone.cell, "
        + "done.status)",
        until=None,
    )
    assert printed(frontend.serve(execution)) == "accepted c-new 2 accepted None applied"
    assert [c["source"] for c in frontend.cells] == [
        "%load_ext acp_notebook",
        RENAMED,
        "total([1])",
    ]
    assert [r["change"]["op"] for r in frontend.requests] == ["insert", "delete", "edit"]
    assert [r["type"] for r in frontend.requests] == ["propose", "propose", "apply"]


def test_a_proposal_nobody_answers_times_out_and_is_withdrawn(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    execution = kernel.execute(
        AGENT_LOOP
        + "live = frontends.current()\n"
        + "try:\n    await on_agent_loop(lambda: live.propose_delete("
        + "'c-note', expected_source='Sums.', label='Drop', timeout=0.5))\n"
        + "except Exception as exc:\n    print(type(exc).__name__, exc)",
        until=None,
    )
    out = printed(frontend.serve(execution, lambda _: None))
    assert out.startswith(
        "LiveTimeout The notebook work/analysis.ipynb did not answer propose within 0.5 s"
    )
    (proposal,) = frontend.sent("propose")
    kernel.wait_for(lambda: frontend.sent("cancel"), "the withdrawal")
    assert [c["id"] for c in frontend.sent("cancel")] == [proposal["id"]]
    assert frontend.cells[2]["source"] == "Sums."  # nothing was deleted


def test_run_cell_asks_the_notebook_to_run_it(kernel: Kernel, frontend: FakeFrontend) -> None:
    def run(request: dict[str, Any]) -> dict[str, Any]:
        assert request["type"] == "run_cell"
        cell = {**frontend.live(1), "execution_count": 7, "outputs_text": "ran\n"}
        return {"result": {"status": "started" if not request["wait"] else "ok", "cell": cell}}

    execution = kernel.execute(
        IMPORT
        + "outcome = await frontends.current().run_cell('c-func', wait=False)\n"
        + "print(outcome.status, outcome.cell.execution_count, repr(outcome.cell.outputs_text))",
        until=None,
    )
    assert printed(frontend.serve(execution, run)) == "started 7 'ran\\n'"
    assert frontend.requests[0]["cell_id"] == "c-func"
