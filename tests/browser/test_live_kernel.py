"""The live notebook from the kernel's side, in JupyterLab and Notebook 7: it connects
whichever side starts first (a page opened after ``%load_ext`` finds the kernel's beacon;
a restarted kernel connects again once the extension is loaded again), and a cell the
kernel asks to run runs in the page."""

from __future__ import annotations

import re

import pytest

from .conftest import PROMPT_DONE, NotebookPage
from .live_helpers import LiveNotebookPage, call, expect

pytestmark = pytest.mark.browser

UIS = pytest.mark.parametrize("ui", ["lab", "notebook7"])


@UIS
def test_the_notebook_reconnects_after_a_reload_and_after_a_kernel_restart(
    notebook: NotebookPage, ui: str
) -> None:
    live = LiveNotebookPage(notebook, ui, collaborative=False)
    live.start()

    # A new page on the same kernel: the extension finds the kernel's beacon.
    live.reload()
    live.wait_connected()
    live.nb.run_cell(2)
    live.nb.wait_done(2)
    expect(live.stdout(2)).to_contain_text(live.nb.rel)

    # A restarted kernel has no acp_notebook until it is loaded again.
    live.restart_kernel()
    expect(live.panel).not_to_have_attribute("data-acp-live", "connected")
    live.nb.wait_kernel_idle()
    live.nb.run_cell(0)
    live.nb.wait_done(0)
    live.wait_connected()
    live.nb.shot("reconnected")


@UIS
def test_a_cell_the_kernel_runs_runs_in_the_page_and_its_output_reads_back(
    notebook: NotebookPage, ui: str
) -> None:
    live = LiveNotebookPage(notebook, ui, collaborative=False)
    read = (
        "me = await on_agent_loop(lambda: live.read_cell(cells[2].id))\n"
        "print(me.execution_count, me.outputs_text.startswith(live.path), me.truncated)"
    )
    live.start(call("live.run_cell(function.id, source=function.source, wait=False)"), read)
    expect(live.nb.prompt(1)).to_have_text("[ ]:")

    # Asked from a running cell, the run starts once that cell is done.
    live.nb.run_cell(3)
    live.outcome(3, "started")
    expect(live.nb.prompt(1)).to_have_text(PROMPT_DONE)
    live.nb.shot("ran")

    live.nb.run_cell(4)
    live.nb.wait_done(4)
    count = re.search(r"\d+", live.nb.prompt(2).inner_text())
    assert count is not None
    expect(live.stdout(4)).to_have_text(f"{count.group()} True False\n")


@UIS
def test_a_cell_changed_since_its_run_was_approved_does_not_run(
    notebook: NotebookPage, ui: str
) -> None:
    # An agent rewrote a cell while its run_cell card waited, and the page ran the new
    # source: the request now carries the approved source, and the page runs only that.
    live = LiveNotebookPage(notebook, ui, collaborative=False)
    approved = "function.source + '\\n# what the card showed'"
    live.start(call(f"live.run_cell(function.id, source={approved}, wait=False)"))
    live.nb.run_cell(3)
    live.outcome(3, "stale")
    expect(live.nb.prompt(1)).to_have_text("[ ]:")
