"""JupyterLab whose kernels run on a Jupyter Kernel Gateway (``--gateway-url``), in a real
chromium: a turn whose write is allowed on its card, Cancel, a live cell edit accepted and
undone, and the notebook tools' ``run_code`` clicked through (what a kernel's end leaves:
``test_gateway_lifecycle.py``).

The gateway starts its kernels in a directory of its own, not the server's notebook folder,
and passes no ``JPY_SESSION_NAME`` (its default): the kernel cannot tell which notebook it
runs, says so once, and sends no link to a notebook it cannot see. The agent works in the
kernel's directory, so the file it edits is the gateway's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest

from ..browser.conftest import TURN_TIMEOUT_MS, NotebookPage
from ..browser.live_helpers import FUNCTION, LiveNotebookPage, expect, printed
from ..browser.test_lab import REFACTORED_UTILS, UTILS
from .servers import Gateway, start_gateway, stop

GATEWAY_NOTE = "acp_notebook: This kernel runs through a gateway that did not pass JPY_SESSION_NAME"
STDERR = '[data-mime-type="application/vnd.jupyter.stderr"]'


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    started = start_gateway(tmp_path_factory.mktemp("kernel-gateway"))
    yield started
    stop(started.process)


@pytest.fixture(autouse=True)
def _gateway_kernels_start_on_another_server(notebook: NotebookPage) -> None:
    notebook.kernel_start_ms = TURN_TIMEOUT_MS
    notebook.through_gateway = True


@pytest.fixture(scope="module")
def lab_args(gateway: Gateway) -> list[str]:
    return ["--YDocExtension.disable_rtc=True", *gateway.lab_args()]


def _load_extension(notebook: NotebookPage) -> None:
    notebook.open()
    notebook.run_cell(0)
    notebook.wait_done(0)


def test_a_gateway_kernels_turn_writes_the_file_its_card_allows_and_says_once_it_has_no_notebook(
    notebook: NotebookPage, gateway: Gateway
) -> None:
    utils = gateway.cwd / "utils.py"
    utils.write_text(UTILS)
    notebook.write(["%load_ext acp_notebook", "%acp /edit utils.py", "%acp /plan"])
    _load_extension(notebook)

    notebook.run_cell(1)
    card = notebook.output(1).locator(".acp-permission-card")
    expect(card).to_contain_text("utils.py", timeout=TURN_TIMEOUT_MS)
    assert utils.read_text() == UTILS
    card.get_by_role("button", name="Allow once", exact=True).click()
    notebook.wait_done(1)
    expect(notebook.output(1)).to_contain_text("I wrote utils.py", timeout=TURN_TIMEOUT_MS)
    assert utils.read_text() == REFACTORED_UTILS
    notebook.shot("allowed")

    notebook.run_cell(2)
    notebook.wait_done(2)
    expect(notebook.output(2)).to_contain_text("Stop reason: end_turn", timeout=TURN_TIMEOUT_MS)
    # Said once, in the first turn's cell; no turn claims a notebook link.
    expect(notebook.output(1).locator(STDERR)).to_contain_text(GATEWAY_NOTE)
    expect(notebook.output(2).locator(STDERR)).to_have_count(0)
    for index in (1, 2):
        expect(notebook.output(index)).not_to_contain_text("link to notebook.ipynb")


def test_cancel_stops_a_gateway_kernels_turn(notebook: NotebookPage) -> None:
    notebook.write(["%load_ext acp_notebook", "%acp /slow"])
    _load_extension(notebook)

    notebook.run_cell(1)
    output = notebook.output(1)
    expect(output).to_contain_text("This reply streams", timeout=TURN_TIMEOUT_MS)
    output.get_by_role("button", name=re.compile(r"(^|\W)Cancel$")).click()
    expect(output).to_contain_text("Stop reason: cancelled", timeout=TURN_TIMEOUT_MS)
    notebook.wait_done(1)
    assert "Finished without being cancelled" not in output.inner_text()


def test_a_live_cell_edit_through_a_gateway_is_accepted_in_the_cell_and_undone(
    notebook: NotebookPage,
) -> None:
    live = LiveNotebookPage(notebook, "lab", collaborative=False)
    notebook.write(
        ["%load_ext acp_notebook", FUNCTION, "%acp refactor this function", "%acp --undo"]
    )
    live.open()
    notebook.run_cell(0)
    notebook.wait_done(0)
    live.wait_connected()
    notebook.run_cell(1)
    notebook.wait_done(1)

    notebook.run_cell(2)
    shown = live.proposal(1)
    expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
    shown.get_by_role("button", name="Accept").click()
    notebook.wait_done(2)
    expect(notebook.output(2)).to_contain_text("accepted by you", timeout=TURN_TIMEOUT_MS)
    expect(notebook.cell(1).locator(".jp-InputArea-editor")).to_contain_text("return sum(values)")
    notebook.shot("accepted")

    notebook.run_cell(3)
    notebook.wait_done(3)
    expect(live.stdout(3)).to_have_text("Reverted cell 2.\n")
    live.expect_source(1, FUNCTION)
    saved = live.saved_when(lambda nb: "Reverted" in printed(nb, 3), "the undo")
    assert saved.cells[1].source == FUNCTION


def test_run_code_through_a_gateway_runs_in_its_kernel_once_clicked(
    notebook: NotebookPage,
) -> None:
    notebook.write(
        ["%load_ext acp_notebook", "%acp /tools made_by_agent = 6 * 7", "print(made_by_agent)"]
    )
    _load_extension(notebook)

    notebook.run_cell(1)
    card = notebook.output(1).locator(".acp-permission-card")
    expect(card).to_contain_text("made_by_agent = 6 * 7", timeout=TURN_TIMEOUT_MS)
    card.get_by_role("button", name="Allow", exact=True).click()
    notebook.wait_done(1)
    expect(notebook.output(1)).to_contain_text("run_code answered", timeout=TURN_TIMEOUT_MS)

    notebook.run_cell(2)
    notebook.wait_done(2)
    expect(notebook.output(2)).to_have_text("42\n")
