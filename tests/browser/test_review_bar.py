"""The turn's review bar in a real chromium: after ``%acp /rename result acc helper.py``
(the cell edit accepted in its cell, the file allowed on its card), the ``%acp`` cell shows
what the turn changed — the cell and the file, their hunks, a Revert per hunk and Revert
all. A hunk's Revert restores that hunk in the page; Revert all restores the rest, the
cell in the page and the file on disk. The bar is not part of the notebook: saved and
reopened, the page shows the turn's transcript and no dead widget or error.

JupyterLab and Notebook 7 on a plain server, and JupyterLab with real-time collaboration
(the flavours of test_live_edits.py). Screenshots go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import pytest

from . import test_live_edits
from .conftest import TURN_TIMEOUT_MS
from .live_helpers import FUNCTION, HELPER_PY, RENAMED, LiveNotebookPage, expect

flavour = test_live_edits.flavour
lab_args = test_live_edits.lab_args
live = test_live_edits.live

pytestmark = pytest.mark.browser

#: Cell 2 once its first hunk ("result = 0") is reverted.
FIRST_HUNK_REVERTED = RENAMED.replace("acc = 0", "result = 0", 1)


def test_the_review_bar_reverts_a_hunk_then_everything_and_is_not_saved(
    live: LiveNotebookPage,
) -> None:
    helper = live.rename_in_cell_and_file()

    bar = live.nb.cell(2).locator(".acp-live-review")
    expect(bar).to_be_visible(timeout=TURN_TIMEOUT_MS)
    changes = bar.locator(".acp-live-review-change")
    expect(changes).to_have_count(2)
    cell, file = changes.nth(0), changes.nth(1)
    expect(cell.locator(".acp-live-review-label")).to_have_text("cell 2")
    expect(file.locator(".acp-live-review-label")).to_have_text("helper.py")
    expect(cell.locator(".acp-live-review-hunk")).to_have_count(2)
    expect(cell.locator(".acp-live-line-added").first).to_have_text("+     acc = 0")
    bar.scroll_into_view_if_needed()
    live.nb.shot("review-bar")

    cell.locator(".acp-live-review-hunk").first.get_by_role("button", name="Revert").click()
    expect(bar.locator(".acp-live-review-message")).to_have_text("Reverted cell 2.")
    live.expect_source(1, FIRST_HUNK_REVERTED)
    expect(cell.locator(".acp-live-review-hunk")).to_have_count(1)
    assert helper.read_text() == HELPER_PY.replace("result", "acc")
    live.nb.shot("review-bar-hunk-reverted")

    bar.get_by_role("button", name="Revert all").click()
    expect(bar.locator(".acp-live-review-message")).to_have_text("Reverted cell 2, helper.py.")
    live.expect_source(1, FUNCTION)
    assert helper.read_text() == HELPER_PY
    expect(bar.locator(".acp-live-review-status")).to_have_text(["reverted", "reverted"])
    expect(bar.get_by_role("button", name="Revert all")).to_have_count(0)
    live.nb.shot("review-bar-all-reverted")

    # The turn's saved form replaces its live view in the cell's outputs: wait for that
    # too (with real-time collaboration the server's save of it can come later).
    saved = live.saved_when(
        lambda nb: (
            nb.cells[1].source == FUNCTION
            and nb.cells[2].outputs
            and "widget-view" not in str(nb.cells[2].outputs)
        ),
        "the turn, reverted, as its saved transcript",
    )
    assert "acp-live-review" not in str(saved), "the bar is not part of the notebook"
    assert "Changed in this turn: cell 2 (+3 −3), helper.py" in str(saved.cells[2].outputs)

    live.reload()
    live.wait_connected()
    page_text = live.nb.page.locator(".jp-NotebookPanel").first.inner_text()
    assert "model not found" not in page_text.lower()
    expect(live.nb.output(2)).to_contain_text("Changed in this turn: cell 2 (+3 −3), helper.py")
    expect(
        live.nb.output(2).locator('[data-mime-type="application/vnd.jupyter.stderr"]')
    ).to_have_count(0)
    expect(live.nb.page.locator(".jp-RenderedText[data-mime-type*='error']")).to_have_count(0)
    expect(live.nb.cell(2).locator(".acp-live-review")).to_have_count(0)
    live.nb.shot("review-bar-reopened")
