"""A permission asked by a cell above the one in view (Run All) is brought into sight,
and keys answer it while its card has the focus."""

from __future__ import annotations

import re

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

TRANSCRIPT = '.jp-OutputArea-output[data-mime-type="text/html"]'
#: Cells after the waiting one: enough to put the page's end far below it.
FILLER = ["# a later cell\n" + "\n".join(f"x{i} = {i}" for i in range(12))] * 20


@pytest.mark.parametrize(
    ("key", "answer"),
    [
        ("1", "Allow once (chosen by user)"),
        ("Escape", "Reject (chosen by user)"),
        ("c", "Cancelled (the turn was cancelled)"),  # the turn's Cancel
    ],
)
def test_run_all_brings_the_pending_permission_into_view_and_a_key_answers_it(
    notebook: NotebookPage, key: str, answer: str
) -> None:
    (notebook.dir / "utils.py").write_text("def add(a, b):\n    return a + b\n")
    notebook.write(["%load_ext acp_notebook", "%acp /edit utils.py", *FILLER])
    notebook.open()
    notebook.run_all()

    out = notebook.output(1)
    card = out.locator(".acp-permission-card")
    expect(card).to_be_visible(timeout=TURN_TIMEOUT_MS)
    expect(card.get_by_role("button", name="Allow once", exact=True)).to_be_in_viewport()
    expect(card).to_contain_text("Esc rejects · C cancels the turn")
    # The status bar says what the kernel does: it runs the waiting cell (not "Idle").
    status = notebook.page.locator(".jp-StatusBar-Widget", has_text="(ipykernel) |")
    expect(status.first).to_contain_text("Busy")
    notebook.shot(f"pending-{key}")
    # The card has the keyboard focus, so the key goes to it (not to a notebook shortcut).
    assert notebook.page.evaluate(
        "document.activeElement && document.activeElement.closest('.acp-permission-card') !== null"
    )

    notebook.page.keyboard.press(key)
    transcript = out.locator(TRANSCRIPT)
    expect(transcript).to_contain_text(f"Permission: {answer}", timeout=TURN_TIMEOUT_MS)
    notebook.wait_done(len(FILLER) + 1)
    notebook.shot(f"answered-{key}")
    # The key stayed in the card: the cell is still a code cell, still there (no copy).
    expect(notebook.cell(1)).to_have_class(re.compile(r"\bjp-CodeCell\b"))
    expect(notebook.cells).to_have_count(len(FILLER) + 2)


#: Holds Run All until the test has put the focus in an editor (it creates ``go``).
WAIT_FOR_GO = "import os, time\nwhile not os.path.exists('go'):\n    time.sleep(0.05)"


def test_while_the_user_types_a_banner_names_the_waiting_cell(notebook: NotebookPage) -> None:
    (notebook.dir / "utils.py").write_text("def add(a, b):\n    return a + b\n")
    notebook.write(
        ["%load_ext acp_notebook", WAIT_FOR_GO, "%acp /edit utils.py", "notes = ''", *FILLER]
    )
    notebook.open()
    notebook.run_all()
    # The user types in another cell while the turn starts.
    editor = notebook.cell(3).locator(".jp-InputArea-editor")
    editor.click()
    (notebook.dir / "go").touch()

    banner = notebook.page.locator(".acp-permission-banner")
    expect(banner).to_be_visible(timeout=TURN_TIMEOUT_MS)
    expect(banner).to_contain_text("Cell 3 waits for your permission")
    notebook.page.keyboard.type("1")  # goes to the editor, not to the card
    expect(editor).to_contain_text("notes = ''1")
    notebook.shot("banner")

    banner.get_by_role("button", name="Show it").click()
    card = notebook.output(2).locator(".acp-permission-card")
    expect(card.get_by_role("button", name="Allow once", exact=True)).to_be_in_viewport()
    notebook.page.keyboard.press("1")
    expect(notebook.output(2).locator(TRANSCRIPT)).to_contain_text(
        "Permission: Allow once (chosen by user)", timeout=TURN_TIMEOUT_MS
    )
    expect(banner).to_have_count(0)
