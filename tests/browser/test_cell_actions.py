"""The notebook's own ways to ask the agent, in a real chromium with the demo agent: the
**Fix** button under an error output writes and runs ``%acp --fix`` below the cell, and the
agent's fix is proposed in the cell that raised; **Ask about this cell** (Accel K, a prompt
box) on selected lines writes ``%acp PROMPT`` below, and the agent's edit is proposed in
that cell. Also: a per-hunk Revert after the user typed elsewhere in the cell, and a
proposal the user's typing made stale, which says why and offers to ask again.

JupyterLab 4 and Notebook 7, on the suite's shared plain server. Screenshots go to
``test-artifacts/browser/``.
"""

from __future__ import annotations

import re

import pytest

from .conftest import TURN_TIMEOUT_MS, NotebookPage
from .live_helpers import (
    FUNCTION,
    RENAMED,
    LiveNotebookPage,
    expect,
    propose_rename,
)

pytestmark = pytest.mark.browser

#: What the demo agent's --fix makes of ``1/0``: the division guarded.
DIVISION_FIXED = '1/0 if 0 != 0 else float("nan")'
#: A cell whose function (lines 2–6) the Ask test selects: a loop that only adds up,
#: which the demo's refactoring makes a sum().
SUMS = FUNCTION.replace("def total", "x = 1\ndef total", 1)


@pytest.fixture(scope="module", params=["lab", "notebook7"])
def ui(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def live(notebook: NotebookPage, ui: str) -> LiveNotebookPage:
    return LiveNotebookPage(notebook, ui, collaborative=False)


def loaded(live: LiveNotebookPage, *cells: str) -> None:
    """The notebook ``%load_ext acp_notebook`` then ``cells``, opened, loaded, connected."""
    live.nb.write(["%load_ext acp_notebook", *cells])
    live.open()
    live.nb.run_cell(0)
    live.nb.wait_done(0)
    live.wait_connected()


def test_the_fix_button_on_an_error_leads_to_an_accepted_fix_in_the_cell(
    live: LiveNotebookPage,
) -> None:
    loaded(live, "1/0")
    live.nb.run_cell(1)
    live.nb.wait_done(1)
    fix = live.nb.cell(1).locator(".acp-live-fix")
    expect(fix).to_be_visible()
    live.nb.shot("fix-button")

    fix.get_by_role("button", name="Fix with the agent").click()
    expect(live.nb.cells).to_have_count(3)
    live.expect_source(2, "%acp --fix")
    shown = live.proposal(1)
    expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
    expect(shown.locator(".acp-live-line-removed")).to_have_text(["- 1/0"])
    expect(shown.locator(".acp-live-line-added")).to_have_text([f"+ {DIVISION_FIXED}"])
    expect(live.nb.output(2)).to_contain_text("error ZeroDivisionError in cell [2]")
    live.nb.shot("fix-proposed")

    shown.get_by_role("button", name="Accept").click()
    live.expect_source(1, DIVISION_FIXED)
    live.nb.wait_done(2)
    expect(shown).to_have_count(0)
    live.nb.shot("fix-accepted")


def test_ask_about_selected_lines_proposes_the_edit_in_that_cell(
    live: LiveNotebookPage,
) -> None:
    loaded(live, SUMS)
    editor = live.nb.cell(1).locator(".jp-InputArea-editor .cm-content")
    editor.click()
    keyboard = live.nb.page.keyboard
    keyboard.press("Control+Home")
    keyboard.press("ArrowDown")
    keyboard.press("Home")
    keyboard.press("Shift+Control+End")
    keyboard.press("Control+k")

    dialog = live.nb.page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Ask the agent about lines 2–6 of cell 2")
    dialog.locator("input").fill("refactor this")
    live.nb.shot("ask-box")
    dialog.get_by_role("button", name="Ask").click()

    expect(live.nb.cells).to_have_count(3)
    live.expect_source(2, "%acp refactor this")
    shown = live.proposal(1)
    expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
    # Only the selected lines change: the line above them is context.
    expect(shown.locator(".acp-live-line-context").first).to_have_text("  x = 1")
    expect(shown.locator(".acp-live-line-removed").first).to_be_visible()
    expect(live.nb.output(2)).to_contain_text("lines 2–6 of cell 2 (selected)")
    live.nb.shot("ask-proposed")

    shown.get_by_role("button", name="Accept").click()
    live.nb.wait_done(2)
    # Whatever the demo's refactoring made of the function, it is in this cell.
    edited = live.editor_text(1)
    assert edited.startswith("x = 1\ndef total(values") and edited != SUMS


def test_a_hunk_reverts_after_the_user_typed_elsewhere_in_the_cell(
    live: LiveNotebookPage,
) -> None:
    live.rename_in_cell_and_file()
    bar = live.nb.cell(2).locator(".acp-live-review")
    expect(bar).to_be_visible(timeout=TURN_TIMEOUT_MS)
    # The user's edit is on a line of the cell's other hunk.
    live.type_in_cell(1, "  # checked")
    live.expect_source(1, RENAMED + "  # checked")

    cell = bar.locator(".acp-live-review-change").first
    cell.locator(".acp-live-review-hunk").first.get_by_role("button", name="Revert").click()
    expect(bar.locator(".acp-live-review-message")).to_have_text("Reverted cell 2.")
    reverted = RENAMED.replace("acc = 0", "result = 0", 1)
    live.expect_source(1, reverted + "  # checked")
    bar.scroll_into_view_if_needed()
    live.nb.shot("hunk-reverted-around-the-users-line")

    # Revert all stays refused: the cell is not as the turn left it.
    bar.get_by_role("button", name="Revert all").click()
    expect(bar.locator(".acp-live-review-message")).to_have_text(
        re.compile(r"^Nothing was reverted: cell 2 was changed after the turn\.$")
    )
    live.expect_source(1, reverted + "  # checked")


def test_a_proposal_the_users_typing_made_stale_says_why_and_offers_to_ask_again(
    live: LiveNotebookPage,
) -> None:
    live.start(propose_rename())
    live.nb.run_cell(3)
    expect(live.proposal(1)).to_be_visible()

    live.type_in_cell(1, "  # mine")
    live.outcome(3, "stale")
    expect(live.proposal(1)).to_have_count(0)
    note = live.nb.cell(1).locator(".acp-live-stale")
    expect(note).to_have_text(
        re.compile(
            r"^The agent's proposed edit \(Rename result to acc\) was withdrawn: you changed "
            r"this cell while it waited"
        )
    )
    live.expect_source(1, FUNCTION + "  # mine")
    live.nb.shot("stale-note")

    note.get_by_role("button", name="Ask again").click()
    dialog = live.nb.page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Ask the agent about cell 2")
    expect(dialog.locator("input")).to_have_value("Rename result to acc")
    live.nb.shot("stale-ask-again")
    dialog.get_by_role("button", name="Cancel").click()
    expect(note).to_have_count(0)
    expect(live.nb.cells).to_have_count(4)  # cancelled: no %acp cell written
