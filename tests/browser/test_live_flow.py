"""The agent edits the live notebook, in a real chromium. Through ``%acp`` as a user types
it: "refactor this function" in the cell after the function is proposed in the function's
cell, Accept changes it in the page and on disk, ``%acp --undo`` in a new cell restores it;
``/rename OLD NEW FILE`` changes the cell (accepted in it) and a file (allowed on its card)
in one turn, and ``%acp --undo`` restores both.
Through the client API with the notebook tools server (as ``%acp`` gives it): the demo
agent renames a name in the function's cell through ``edit_cell``; the edit is reviewed in
that cell; Reject leaves the page and the file as they were and the agent's transcript
says so; Accept changes both; reverting the turn restores the cell; ``insert_cell`` adds a
cell below (called as the server calls it).

Every test runs in JupyterLab and in Notebook 7 on a plain server, and in JupyterLab on a
server with real-time collaboration (jupyter-collaboration), like test_live_edits.py.
The notebook's own cells start the tools server and run the demo agent's turns through
the client API on an agent loop (awaited, so the page's answers reach the kernel).
"""

from __future__ import annotations

import re

import pytest

from acp_notebook.agents.demo.refactors import refactor

from . import test_live_edits
from .conftest import TURN_TIMEOUT_MS
from .live_helpers import FUNCTION, HELPER_PY, RENAMED, LiveNotebookPage, expect, printed

# The same three flavours, their servers and pages as the live edits' tests.
flavour = test_live_edits.flavour
lab_args = test_live_edits.lab_args
live = test_live_edits.live

pytestmark = pytest.mark.browser

#: Cell 3: the notebook tools server of one session, with the live cell tools following
#: the page, every change reviewed in the cell, and what each turn changed kept.
TOOLS = """\
import sys
from acp_notebook.client import ClientConnection
from acp_notebook.notebook.changes.revert import record_cell_change, revert
from acp_notebook.notebook.tools import MainThreadRunner, NotebookToolsServer, kernel_tools
from acp_notebook.notebook.tools.approval import Review
from acp_notebook.notebook.tools.live_tools import LiveTools

async def review(request):
    return Review()

sessions = []
registry = kernel_tools()
LiveTools(registry, frontends, get_ipython()).install()
server = NotebookToolsServer(
    agent_loop, MainThreadRunner(), get_ipython(), "default", review, registry=registry,
    report=lambda change: record_cell_change(sessions[-1], change),
)
spec = server.start()

async def demo_turn(prompt):
    async with ClientConnection.spawn([sys.executable, "-m", "acp_notebook.agents.demo"]) as conn:
        await conn.initialize()
        session = await conn.new_session(".", mcp_servers=[spec], policy="allow")
        sessions.append(session)
        return (await session.prompt(prompt)).bundle()["text/plain"]

async def insert_below(cell_id, source):
    # The insert_cell tool as the server calls it for an agent.
    tool = registry.get("insert_cell")
    return await tool.call(server.context, {"after_id": cell_id, "source": source})

print(sorted(tool.name for tool in registry.tools()))"""

RENAME = "print(await on_agent_loop(lambda: demo_turn('/rename result acc')))"
UNDO = "print((await on_agent_loop(lambda: revert(sessions[-1].checkpoints.last()))).sentence())"
INSERT = "answer = await on_agent_loop(lambda: insert_below(function.id, 'total([1, 2, 3])'))\nprint(answer.is_error)"


def start(live: LiveNotebookPage, *calls: str) -> None:
    """The notebook with the tools cell (3) and ``calls`` after it, connected."""
    live.start(TOOLS, *calls)
    live.nb.run_cell(3)
    live.nb.wait_done(3)
    expect(live.stdout(3)).to_contain_text("'edit_cell'")


def test_the_agents_edit_is_reviewed_in_the_cell_rejected_accepted_and_undone(
    live: LiveNotebookPage,
) -> None:
    start(live, RENAME, RENAME, UNDO)

    live.nb.run_cell(4)
    shown = live.proposal(1)
    # A turn: the demo agent starts, then its MCP client and the relay (safety net).
    expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
    expect(shown.locator(".acp-live-proposal-label")).to_have_text("Rename result to acc")
    expect(shown.locator(".acp-live-line-removed")).to_have_text(
        ["-     result = 0", "-         result += v", "-     return result"]
    )
    expect(shown.locator(".acp-live-line-added")).to_have_text(
        ["+     acc = 0", "+         acc += v", "+     return acc"]
    )
    live.nb.shot("agent-proposes")
    shown.get_by_role("button", name="Reject").click()
    live.nb.wait_done(4)
    expect(live.stdout(4)).to_contain_text("The rename did not happen: The user rejected")
    expect(live.stdout(4)).to_contain_text("rejected by you; the notebook is unchanged")
    # The tool call reads as the user's decision, not as a failure of the agent's tool;
    # the function's cell never ran here, so it is named by its place, not a count.
    expect(live.stdout(4)).to_contain_text("in cell 2 · edit · 🚫 rejected by you")
    live.expect_source(1, FUNCTION)
    saved = live.saved_when(lambda nb: "did not happen" in printed(nb, 4), "the rejection")
    assert saved.cells[1].source == FUNCTION
    live.nb.shot("agent-rejected")

    live.nb.run_cell(5)
    shown = live.proposal(1)
    expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
    shown.get_by_role("button", name="Accept").click()
    live.nb.wait_done(5)
    expect(live.stdout(5)).to_contain_text("Renamed `result` to `acc` in cell 2.")
    expect(live.stdout(5)).to_contain_text("Changed in this turn: cell 2 (+3 −3).")
    live.expect_source(1, RENAMED)
    saved = live.saved_when(lambda nb: "Renamed" in printed(nb, 5), "the accepted edit")
    assert saved.cells[1].source == RENAMED
    live.nb.shot("agent-accepted")

    live.nb.run_cell(6)
    live.nb.wait_done(6)
    expect(live.stdout(6)).to_have_text("Reverted cell 2.\n")
    live.expect_source(1, FUNCTION)
    saved = live.saved_when(lambda nb: "Reverted" in printed(nb, 6), "the undo")
    assert saved.cells[1].source == FUNCTION
    live.nb.shot("agent-undone")


def test_insert_cell_adds_a_cell_below_once_accepted(live: LiveNotebookPage) -> None:
    start(live, INSERT)

    live.nb.run_cell(4)
    shown = live.proposal(1)
    expect(shown).to_be_visible()
    expect(shown.locator(".acp-live-proposal-title")).to_have_text("Proposed new cell below")
    shown.get_by_role("button", name="Accept").click()
    live.nb.wait_done(5)  # the new cell pushed this driver cell down by one
    expect(live.stdout(5)).to_have_text("False\n")
    live.expect_source(2, "total([1, 2, 3])")
    saved = live.saved_when(
        lambda nb: len(nb.cells) == 6 and "False" in printed(nb, 5), "the insert"
    )
    assert [c.source for c in saved.cells[1:3]] == [FUNCTION, "total([1, 2, 3])"]
    live.nb.shot("agent-inserted")


#: What the demo agent's refactoring makes of the function: the loop becomes sum(values).
REFACTORED = refactor(FUNCTION).text


def test_acp_refactor_this_function_is_accepted_in_the_cell_and_undone(
    live: LiveNotebookPage,
) -> None:
    live.nb.write(
        ["%load_ext acp_notebook", FUNCTION, "%acp refactor this function", "%acp --undo"]
    )
    live.open()
    live.nb.run_cell(0)
    live.nb.wait_done(0)
    live.wait_connected()
    live.nb.run_cell(1)  # the user defines the function: the prompt's context sends it
    live.nb.wait_done(1)

    live.nb.run_cell(2)
    shown = live.proposal(1)
    expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
    expect(shown.locator(".acp-live-proposal-label")).to_have_text(
        "Use `sum(…)` for the loop that builds `result`"
    )
    expect(shown.locator(".acp-live-line-added").first).to_have_text("+     return sum(values)")
    expect(live.nb.prompt(2)).to_have_text("[*]:")  # the turn waits for the review
    live.expect_source(1, FUNCTION)
    live.nb.shot("acp-proposes")

    shown.get_by_role("button", name="Accept").click()
    live.nb.wait_done(2)
    expect(shown).to_have_count(0)
    # The editor shows the new source (its empty line aside, which the editor's text
    # doubles); the saved file below holds it exactly.
    editor = live.nb.cell(1).locator(".jp-InputArea-editor")
    expect(editor).to_contain_text("return sum(values)")
    expect(editor).not_to_contain_text("result = 0")
    transcript = live.nb.output(2)
    expect(transcript).to_contain_text(
        re.compile(r"Cell \[\d+\] now has the change"), timeout=TURN_TIMEOUT_MS
    )
    expect(transcript).to_contain_text("accepted by you")
    live.nb.shot("acp-accepted")
    saved = live.saved_when(lambda nb: nb.cells[1].source == REFACTORED, "the accepted edit")
    assert saved.cells[2].outputs, "the turn's transcript is saved with the cell"

    live.nb.run_cell(3)
    live.nb.wait_done(3)
    expect(live.stdout(3)).to_have_text("Reverted cell 2.\n")
    live.expect_source(1, FUNCTION)
    live.nb.shot("acp-undone")
    saved = live.saved_when(lambda nb: "Reverted" in printed(nb, 3), "the undo")
    assert saved.cells[1].source == FUNCTION


def test_acp_undo_restores_the_cell_and_the_file_one_turn_changed(
    live: LiveNotebookPage,
) -> None:
    helper = live.rename_in_cell_and_file("%acp --undo")
    expect(live.nb.output(2)).to_contain_text("Changed in this turn: cell 2 (+3 −3), helper.py")
    assert helper.read_text() == HELPER_PY.replace("result", "acc")
    live.nb.shot("acp-cell-and-file-changed")

    live.nb.run_cell(3)
    live.nb.wait_done(3)
    expect(live.stdout(3)).to_have_text("Reverted cell 2, helper.py.\n")
    live.expect_source(1, FUNCTION)
    assert helper.read_text() == HELPER_PY
    live.nb.shot("acp-both-undone")
    saved = live.saved_when(lambda nb: "Reverted" in printed(nb, 3), "the undo")
    assert saved.cells[1].source == FUNCTION
