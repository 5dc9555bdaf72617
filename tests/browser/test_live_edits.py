"""The live notebook in a real chromium: the acp-notebook extension connects each notebook
to its kernel, and a change the kernel proposes is reviewed in the cell it changes.

Every test runs in JupyterLab and in Notebook 7 on a plain server, and in JupyterLab on a
server with real-time collaboration (jupyter-collaboration). The notebook's own cells
call the kernel endpoint the way the notebook tools do, on an agent loop thread.
Screenshots of every step go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import re

import pytest

from .conftest import NotebookPage
from .live_helpers import (
    FUNCTION,
    RENAMED,
    LiveNotebookPage,
    call,
    expect,
    printed,
    propose_rename,
)

pytestmark = pytest.mark.browser

#: (user interface, real-time collaboration): JupyterLab and Notebook 7 on a plain server,
#: and JupyterLab on a server with jupyter-collaboration.
FLAVOURS = {
    "lab": ("lab", False),
    "notebook7": ("notebook7", False),
    "lab-collaboration": ("lab", True),
}


@pytest.fixture(scope="module", params=list(FLAVOURS))
def flavour(request: pytest.FixtureRequest) -> tuple[str, bool]:
    ui, collaborative = FLAVOURS[request.param]
    if collaborative:
        pytest.importorskip("jupyter_server_ydoc", reason="jupyter-collaboration is not installed")
    return ui, collaborative


@pytest.fixture(scope="module")
def lab_args(flavour: tuple[str, bool]) -> list[str]:
    """A server of its own per flavour, with or without real-time collaboration."""
    return [f"--YDocExtension.disable_rtc={not flavour[1]}"]


@pytest.fixture
def live(notebook: NotebookPage, flavour: tuple[str, bool]) -> LiveNotebookPage:
    return LiveNotebookPage(notebook, *flavour)


def test_reject_leaves_the_cell_and_the_file_and_accept_changes_both(
    live: LiveNotebookPage,
) -> None:
    live.start(propose_rename(), propose_rename())

    live.nb.run_cell(3)
    shown = live.proposal(1)
    expect(shown).to_be_visible()
    # The diff: the renamed lines removed and added, the unchanged ones as context.
    expect(shown.locator(".acp-live-proposal-title")).to_have_text("Proposed edit")
    expect(shown.locator(".acp-live-proposal-label")).to_have_text("Rename result to acc")
    expect(shown.locator(".acp-live-line-removed")).to_have_text(
        ["-     result = 0", "-         result += v", "-     return result"]
    )
    expect(shown.locator(".acp-live-line-added")).to_have_text(
        ["+     acc = 0", "+         acc += v", "+     return acc"]
    )
    expect(shown.locator(".acp-live-line-context")).to_have_text(
        ["  def total(values):", "      for v in values:"]
    )
    expect(shown.locator(".acp-live-count-added")).to_have_text("+3")
    expect(shown.locator(".acp-live-count-removed")).to_have_text("−3")
    expect(live.nb.prompt(3)).to_have_text("[*]:")  # the caller waits for the review
    # Shown without taking the user's place: the running cell is still the active one.
    expect(live.nb.cell(3)).to_have_class(re.compile(r"\bjp-mod-active\b"))
    live.expect_source(1, FUNCTION)  # nothing changed yet
    live.nb.shot("proposed-edit")

    shown.get_by_role("button", name="Reject").click()
    live.outcome(3, "rejected")
    expect(shown).to_have_count(0)
    live.expect_source(1, FUNCTION)
    saved = live.saved_when(lambda nb: "rejected" in printed(nb, 3), "the rejection")
    assert saved.cells[1].source == FUNCTION
    live.nb.shot("rejected")

    live.nb.run_cell(4)
    live.proposal(1).get_by_role("button", name="Accept").click()
    live.outcome(4, "accepted")
    expect(live.proposal(1)).to_have_count(0)
    live.expect_source(1, RENAMED)
    live.nb.shot("accepted")
    saved = live.saved_when(lambda nb: "accepted" in printed(nb, 4), "the accepted edit")
    assert saved.cells[1].source == RENAMED


def test_an_accepted_insert_adds_a_cell_below_and_a_delete_removes_it(
    live: LiveNotebookPage,
) -> None:
    insert = call("live.propose_insert(function.id, 'total([1, 2, 3])', label='Try it')")
    insert += "\nnew_cell = outcome.cell"
    delete = call(
        "live.propose_delete(new_cell.id, expected_source=new_cell.source, label='Not needed')"
    )
    live.start(insert, delete)

    live.nb.run_cell(3)
    shown = live.proposal(1)
    expect(shown.locator(".acp-live-proposal-title")).to_have_text("Proposed new cell below")
    expect(shown.locator(".acp-live-line-added")).to_have_text(["+ total([1, 2, 3])"])
    expect(shown.locator(".acp-live-line-removed")).to_have_count(0)
    live.nb.shot("proposed-insert")
    shown.get_by_role("button", name="Accept").click()
    live.outcome(4, "accepted")  # the new cell pushed this driver cell down by one
    expect(live.nb.cells).to_have_count(6)
    live.expect_source(2, "total([1, 2, 3])")
    live.expect_source(1, FUNCTION)
    live.nb.shot("inserted")
    saved = live.saved_when(lambda nb: "accepted" in printed(nb, 4), "the insert")
    assert [c.source for c in saved.cells[1:3]] == [FUNCTION, "total([1, 2, 3])"]

    live.nb.run_cell(5)
    shown = live.proposal(2)
    expect(shown.locator(".acp-live-proposal-title")).to_have_text("Proposed deletion of this cell")
    expect(shown.locator(".acp-live-line-removed")).to_have_text(["- total([1, 2, 3])"])
    expect(live.nb.cell(2)).to_have_class(re.compile(r"\bacp-live-delete-target\b"))
    live.nb.shot("proposed-delete")
    shown.get_by_role("button", name="Accept").click()
    # The new cell is gone: this driver cell moved back up by one.
    live.outcome(4, "accepted")
    expect(live.nb.cells).to_have_count(5)
    expect(live.nb.cell(2)).to_contain_text("frontends.current()")
    live.nb.shot("deleted")
    saved = live.saved_when(lambda nb: len(nb.cells) == 5, "the deletion")
    assert "total([1, 2, 3])" not in [c.source for c in saved.cells]


def test_a_proposal_against_a_changed_cell_comes_back_stale(live: LiveNotebookPage) -> None:
    live.start(propose_rename(), propose_rename())

    # Shown, then the user edits the cell: the proposal goes, the answer is stale.
    live.nb.run_cell(3)
    shown = live.proposal(1)
    expect(shown).to_be_visible()
    live.type_in_cell(1, "  # mine")
    live.outcome(3, "stale")
    expect(shown).to_have_count(0)
    edited = FUNCTION + "  # mine"
    live.expect_source(1, edited)
    live.nb.shot("stale-while-shown")

    # Proposed against the source read before the user's edit: stale at once, never shown.
    live.nb.run_cell(4)
    live.outcome(4, "stale")
    expect(live.proposal(1)).to_have_count(0)
    live.expect_source(1, edited)
