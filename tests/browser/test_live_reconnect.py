"""The live notebook connects whichever side starts first: the page opened after
``%load_ext`` (a reload) finds the kernel's beacon, and a restarted kernel connects again
when the extension is loaded again. In JupyterLab and Notebook 7."""

from __future__ import annotations

import pytest

from .conftest import NotebookPage
from .live_helpers import LiveNotebookPage, expect

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("ui", ["lab", "notebook7"])
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
