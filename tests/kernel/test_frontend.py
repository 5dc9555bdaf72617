"""The kernel's live-notebook endpoint in a real kernel, with no browser: the test client
plays the extension (:class:`FakeFrontend` speaks the comm protocol of
``acp_notebook.notebook.frontend.protocol``), and cells call the API the way the notebook
tools do — awaited in the cell, or on an agent loop thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from acp_notebook.notebook.frontend.protocol import FRONTEND_TARGET, PROTOCOL_VERSION

from .conftest import Execution, Kernel
from .fake_frontend import FUNCTION, RENAMED, FakeFrontend

pytestmark = pytest.mark.kernel


IMPORT = "from acp_notebook.notebook.frontend import frontends\n"
#: Runs a call on an agent loop thread of its own, as the notebook tools will.
AGENT_LOOP = (
    IMPORT
    + "import asyncio\nfrom acp_notebook.notebook.runtime.loop import AgentLoop\n"
    + "agent_loop = AgentLoop()\n"
    + "def on_agent_loop(call):\n    return asyncio.wrap_future(agent_loop.submit(call))\n"
)


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
        + "from acp_notebook.notebook.frontend.protocol import CellEdit\n"
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
        + "outcome = await frontends.current().run_cell('c-func', source='x', wait=False)\n"
        + "print(outcome.status, outcome.cell.execution_count, repr(outcome.cell.outputs_text))",
        until=None,
    )
    assert printed(frontend.serve(execution, run)) == "started 7 'ran\\n'"
    assert frontend.requests[0]["cell_id"] == "c-func"
    assert frontend.requests[0]["source"] == "x"
