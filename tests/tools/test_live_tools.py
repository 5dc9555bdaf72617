"""The live-notebook tools in a real kernel, called by the official MCP client through the
relay, with the test client playing the notebook's extension (:class:`FakeFrontend`).

Without a connected notebook the kernel's tools are all there is; while one is connected
list_cells and read_cell read the live document and edit_cell, insert_cell, delete_cell
and run_cell appear. Each change is approved first: a rule may apply it without asking or
deny it, otherwise it is proposed in the cell and the user's Accept or Reject is the
answer. A cell changed since the agent read it is refused as stale.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import mcp_types
import pytest

from tests.kernel.conftest import Kernel
from tests.kernel.fake_frontend import FUNCTION, RENAMED, Answer, FakeFrontend
from tests.tools.helpers import McpAgent, kernel_value, text_of, wait_until

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

#: The tools server of session "s1" with the live tools following the notebooks; the
#: approval answer is set by the test: "review" (no rule decided), "allow" (a rule), "deny".
SETUP = """
import json
from acp_notebook.notebook.frontend import frontends as _frontends
from acp_notebook.notebook.runtime.loop import AgentLoop as _AgentLoop
from acp_notebook.notebook.tools import (
    Approved as _Approved,
    Denied as _Denied,
    MainThreadRunner as _MainThreadRunner,
    NotebookToolsServer as _NotebookToolsServer,
    kernel_tools as _kernel_tools,
)
from acp_notebook.notebook.tools.approval import Review as _Review
from acp_notebook.notebook.tools.live_tools import LiveTools as _LiveTools
_tools_policy = {"answer": "review"}
_live_asked = []
_live_reported = []

async def _live_approve(request):
    _live_asked.append(request)
    answer = _tools_policy["answer"]
    if answer == "allow":
        return _Approved(by="rule `allow edit_cell`")
    if answer == "deny":
        return _Denied("denied by rule `deny edit_cell`")
    return _Review()

_live_session = []

def _live_report(report):
    _live_reported.append(report)
    if _live_session:  # the demo agent's turn: its session keeps the change
        from acp_notebook.notebook.changes.revert import record_cell_change
        record_cell_change(_live_session[0], report)

_live_registry = _kernel_tools()
_live_tools = _LiveTools(_live_registry, _frontends, get_ipython())
_live_tools.install()
_live_server = _NotebookToolsServer(
    _AgentLoop("live-tools-test"), _MainThreadRunner(), get_ipython(), "s1", _live_approve,
    registry=_live_registry, report=_live_report,
)
print(json.dumps(_live_server.start()))
"""

LIVE_ONLY = ["edit_cell", "insert_cell", "delete_cell", "run_cell"]
#: What the approval answers when a test sets nothing (the ``policy`` fixture).
DEFAULT_ANSWER = "review"


#: A turn of the demo agent given the tools server (as %acp gives it), on an agent loop,
#: awaited by the cell so the fake frontend's answers reach the kernel meanwhile.
DEMO_TURN = """
import asyncio, os, sys
from acp_notebook.client import ClientConnection
from acp_notebook.notebook.runtime.loop import AgentLoop

async def _demo_turn(prompt):
    async with ClientConnection.spawn([sys.executable, "-m", "acp_notebook.agents.demo"]) as conn:
        await conn.initialize()
        session = await conn.new_session(os.getcwd(), mcp_servers=[_live_spec], policy="allow")
        _live_session[:] = [session]
        try:
            return await session.prompt(prompt)
        finally:
            _live_session.clear()

_turn = await asyncio.wrap_future(AgentLoop().submit(_demo_turn, {prompt!r}))
print(_turn.bundle()["text/markdown"])
"""


@pytest.fixture(scope="module")
def spec(kernel: Kernel) -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(kernel.text(SETUP).strip().splitlines()[-1])
    kernel.text(f"_live_spec = {spec!r}")
    return spec


@pytest.fixture
def frontend(kernel: Kernel, agent: McpAgent) -> Iterator[FakeFrontend]:
    kernel.text("_live_reported.clear(); _live_asked.clear()")
    fake = FakeFrontend(kernel)
    fake.connect()
    wait_until(lambda: "edit_cell" in agent.tool_names(), "the live tools to be offered")
    yield fake
    fake.close()
    wait_until(lambda: "edit_cell" not in agent.tool_names(), "the live tools to be withdrawn")


def call(
    agent: McpAgent,
    frontend: FakeFrontend,
    name: str,
    arguments: dict[str, Any],
    answer: Answer | None = None,
) -> mcp_types.CallToolResult:
    """Call a tool while the fake frontend answers the kernel's requests."""
    future = agent.call_async(name, arguments)
    frontend.serve_until(future.done, f"{name} to answer", answer)
    return future.result()


def reported(kernel: Kernel) -> list[str]:
    return list(kernel_value(kernel, "[r.sentence() for r in _live_reported]"))


def rejecting(frontend: FakeFrontend) -> Answer:
    return lambda request: frontend.document(request, "reject")


# ------------------------------------------------------------------------------- offering


def test_without_a_connected_notebook_only_the_kernel_tools_are_offered_and_work(
    kernel: Kernel, agent: McpAgent
) -> None:
    names = agent.tool_names()
    assert "list_cells" in names and not set(LIVE_ONLY) & set(names)
    kernel.text("kernel_side = 41 + 1")
    assert "kernel_side = 41 + 1" in text_of(agent.call("list_cells"))
    assert "`kernel_side`: int" in text_of(agent.call("list_variables"))


def test_a_connected_notebook_adds_the_live_tools_and_tells_the_agent(
    agent: McpAgent, frontend: FakeFrontend
) -> None:
    names = agent.tool_names()
    assert set(LIVE_ONLY) <= set(names)
    assert names.count("list_cells") == 1 and names.count("read_cell") == 1
    assert any(isinstance(n, mcp_types.ToolListChangedNotification) for n in agent.notifications)


def test_list_cells_reads_the_live_document(agent: McpAgent, frontend: FakeFrontend) -> None:
    frontend.cells[1]["source"] = FUNCTION + "\n# unsaved"
    text = text_of(call(agent, frontend, "list_cells", {}))
    assert text.startswith("The notebook work/analysis.ipynb (FakeLab), 3 cells:")
    assert "cell 2 · id `c-func` · code · [2]" in text
    assert "# unsaved" in text


# ------------------------------------------------------------------------------- editing


def test_an_edit_is_proposed_in_the_cell_and_accepting_it_changes_the_cell(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend
) -> None:
    call(agent, frontend, "read_cell", {"id": "c-func"})
    arguments = {"id": "c-func", "source": RENAMED, "description": "Rename result to acc"}
    result = call(agent, frontend, "edit_cell", arguments)

    assert not result.is_error, text_of(result)
    assert text_of(result).startswith("Done (the user accepted it). The cell now:")
    (proposal,) = [r for r in frontend.requests if r["type"] == "propose"]
    assert proposal["label"] == "Rename result to acc"
    assert proposal["change"] == {
        "op": "edit",
        "cell_id": "c-func",
        "source": RENAMED,
        "expected_source": FUNCTION,
    }
    assert frontend.cells[1]["source"] == RENAMED
    assert reported(kernel) == ["Edit of cell 2 of work/analysis.ipynb: accepted by you."]
    asked = kernel_value(
        kernel, "[(a.tool, a.kind, a.review_in_place, a.cell_id) for a in _live_asked]"
    )
    assert asked == [["edit_cell", "edit", True, "c-func"]]


def test_a_rejected_edit_leaves_the_cell_and_tells_the_agent(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend
) -> None:
    call(agent, frontend, "read_cell", {"id": "c-func"})
    result = call(
        agent, frontend, "edit_cell", {"id": "c-func", "source": RENAMED}, rejecting(frontend)
    )
    assert result.is_error
    assert text_of(result).startswith("The user rejected the change to cell 2")
    assert frontend.cells[1]["source"] == FUNCTION
    assert reported(kernel) == [
        "Edit of cell 2 of work/analysis.ipynb: rejected by you; the notebook is unchanged."
    ]


def test_a_rule_that_allows_edits_applies_them_without_a_proposal(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend, policy: Callable[[str], None]
) -> None:
    policy("allow")
    call(agent, frontend, "read_cell", {"id": "c-func"})
    result = call(agent, frontend, "edit_cell", {"id": "c-func", "source": RENAMED})
    assert not result.is_error, text_of(result)
    assert [r["type"] for r in frontend.requests] == ["read_cell", "apply"]
    assert frontend.cells[1]["source"] == RENAMED
    assert reported(kernel) == [
        "Edit of cell 2 of work/analysis.ipynb: applied without asking (rule `allow edit_cell`)."
    ]


def test_a_rule_that_denies_edits_changes_nothing_and_shows_nothing(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend, policy: Callable[[str], None]
) -> None:
    policy("deny")
    call(agent, frontend, "read_cell", {"id": "c-func"})
    result = call(agent, frontend, "edit_cell", {"id": "c-func", "source": RENAMED})
    assert result.is_error
    assert text_of(result) == (
        "The change to cell 2 was not made: denied by rule `deny edit_cell`."
    )
    assert [r["type"] for r in frontend.requests] == ["read_cell"]
    assert frontend.cells[1]["source"] == FUNCTION


def test_an_edit_of_a_cell_not_read_first_is_refused(
    agent: McpAgent, frontend: FakeFrontend
) -> None:
    result = call(agent, frontend, "edit_cell", {"id": "c-note", "source": "Totals."})
    assert result.is_error
    assert "Read the cell first" in text_of(result)
    assert frontend.requests == []


def test_an_edit_of_a_cell_the_user_changed_since_it_was_read_is_refused_as_stale(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend
) -> None:
    call(agent, frontend, "read_cell", {"id": "c-func"})
    frontend.cells[1]["source"] = FUNCTION + "  # the user's edit"
    result = call(agent, frontend, "edit_cell", {"id": "c-func", "source": RENAMED})
    assert result.is_error
    assert "changed since you read it" in text_of(result)
    assert frontend.cells[1]["source"].endswith("# the user's edit")
    assert reported(kernel) == [
        "Edit of cell 2 of work/analysis.ipynb: refused: the cell changed after the agent read it."
    ]
    # Stale means "read it again": the next edit without a read is refused too.
    again = call(agent, frontend, "edit_cell", {"id": "c-func", "source": RENAMED})
    assert "Read the cell first" in text_of(again)


def test_insert_cell_adds_a_cell_below_once_accepted(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend
) -> None:
    arguments = {"after_id": "c-func", "source": "total([1, 2])", "cell_type": "code"}
    result = call(agent, frontend, "insert_cell", arguments)
    assert not result.is_error, text_of(result)
    assert [c["source"] for c in frontend.cells][1:3] == [FUNCTION, "total([1, 2])"]
    (proposal,) = [r for r in frontend.requests if r["type"] == "propose"]
    assert proposal["change"] == {
        "op": "insert",
        "after_id": "c-func",
        "source": "total([1, 2])",
        "cell_type": "code",
    }
    assert reported(kernel) == ["New cell at cell 3 of work/analysis.ipynb: accepted by you."]


def test_delete_cell_removes_the_cell_once_accepted(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend
) -> None:
    call(agent, frontend, "read_cell", {"id": "c-note"})
    result = call(agent, frontend, "delete_cell", {"id": "c-note"})
    assert not result.is_error, text_of(result)
    assert [c["id"] for c in frontend.cells] == ["c-load", "c-func"]
    assert reported(kernel) == ["Deletion of cell 3 of work/analysis.ipynb: accepted by you."]


# ------------------------------------------------------------------------------- running


def test_run_cell_is_approved_like_run_code_and_a_denial_runs_nothing(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend, policy: Callable[[str], None]
) -> None:
    def run(request: dict[str, Any]) -> dict[str, Any]:
        if request["type"] != "run_cell":
            return frontend.document(request)
        cell = {**frontend.live(1), "execution_count": 3, "outputs_text": "ran\n"}
        return {"result": {"status": "ok", "cell": cell}}

    policy("deny")
    denied = call(agent, frontend, "run_cell", {"id": "c-func"}, run)
    assert denied.is_error and text_of(denied).startswith("The cell did not run: denied")
    assert "run_cell" not in [r["type"] for r in frontend.requests]

    policy("allow")
    ran = call(agent, frontend, "run_cell", {"id": "c-func"}, run)
    assert not ran.is_error, text_of(ran)
    assert text_of(ran).startswith("It ran.") and "ran" in text_of(ran)
    asked = kernel_value(kernel, "[(a.tool, a.kind, a.code is not None) for a in _live_asked]")
    assert asked == [["run_cell", "execute", True]] * 2


def test_a_cell_changed_after_its_run_was_approved_does_not_run(
    kernel: Kernel, agent: McpAgent, frontend: FakeFrontend, policy: Callable[[str], None]
) -> None:
    # An agent rewrote the cell (an `allow notebook edit_cell` rule) while the card showing
    # its code waited, and the page ran the new source.
    planted = "import shutil; shutil.rmtree('data')"

    def edited_meanwhile(request: dict[str, Any]) -> dict[str, Any]:
        answer = frontend.document(request)
        if request["type"] == "read_cell":  # what the approval shows: FUNCTION
            frontend.cells[1]["source"] = planted
        return answer

    policy("allow")
    result = call(agent, frontend, "run_cell", {"id": "c-func"}, edited_meanwhile)

    (run,) = [r for r in frontend.requests if r["type"] == "run_cell"]
    assert run["source"] == FUNCTION  # the approved code, not the cell's new one
    assert result.is_error
    assert text_of(result) == (
        "The cell did not run: cell 2 changed after its code was approved; read it again "
        "and ask to run it again."
    )
    asked = kernel_value(kernel, "[a.code for a in _live_asked]")
    assert asked == [FUNCTION]


# ------------------------------------------------------------------------------- leaving


def test_when_the_notebook_goes_the_kernel_tools_answer_again(
    kernel: Kernel, agent: McpAgent
) -> None:
    fake = FakeFrontend(kernel)
    fake.connect()
    wait_until(lambda: "edit_cell" in agent.tool_names(), "the live tools to be offered")
    fake.close()
    wait_until(lambda: "edit_cell" not in agent.tool_names(), "the live tools to be withdrawn")
    kernel.text("after_the_notebook = 1")
    assert "after_the_notebook = 1" in text_of(agent.call("list_cells"))


# ------------------------------------------------------------------------------- the demo agent


def demo_turn(
    kernel: Kernel, frontend: FakeFrontend, prompt: str, answer: Answer | None = None
) -> str:
    """The demo agent's turn given the tools server; its transcript as Markdown."""
    execution = kernel.execute(DEMO_TURN.format(prompt=prompt), until=None)
    frontend.serve(execution, answer)
    assert not execution.errors, execution.describe()
    return execution.stdout


def test_the_demo_agents_rename_is_an_edit_the_user_accepts_in_the_cell(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    transcript = demo_turn(kernel, frontend, "/rename result acc")
    assert frontend.cells[1]["source"] == RENAMED
    (proposal,) = [r for r in frontend.requests if r["type"] == "propose"]
    assert proposal["label"] == "Rename result to acc"
    assert "Renamed `result` to `acc` in cell [2]." in transcript
    assert "Edit of cell 2 of work/analysis.ipynb: accepted by you." in transcript
    assert "Changed in this turn: cell 2 (+3 −3)." in transcript


def test_a_rename_the_user_rejects_is_reported_by_the_agent_and_changes_nothing(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    transcript = demo_turn(kernel, frontend, "/rename result acc", rejecting(frontend))
    assert frontend.cells[1]["source"] == FUNCTION
    assert "The rename did not happen: The user rejected the change to cell 2" in transcript
    assert "rejected by you; the notebook is unchanged." in transcript
    assert "Changed in this turn" not in transcript


def test_refactor_with_the_functions_code_attached_edits_the_cell_holding_it(
    kernel: Kernel, frontend: FakeFrontend
) -> None:
    prompt = f"refactor this function\n```python\n{FUNCTION}\n```"
    transcript = demo_turn(kernel, frontend, prompt)
    # It inserted `from typing import Any` and a TODO docstring, and left the loop alone.
    assert frontend.cells[1]["source"] == "def total(values):\n    return sum(values)"
    done = "Cell [2] now has the change (use `sum(…)` for the loop that builds `result`)."
    assert done in transcript


def test_status_says_whether_the_live_cell_tools_are_offered(
    kernel: Kernel, agent: McpAgent
) -> None:
    without = kernel.text("%acp --status")
    assert "Notebook tools: the kernel's tools only;" in without
    fake = FakeFrontend(kernel)
    fake.connect()
    try:
        with_page = kernel.text("%acp --status")
        assert "the live cell tools are offered (FakeLab, work/analysis.ipynb)" in with_page
    finally:
        fake.close()
