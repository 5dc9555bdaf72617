"""A preset that cannot start leaves a readable Markdown error, never a dead widget: no
blank output, no "Error displaying widget: model not found", and the saved notebook holds
the error bundle, no widget view."""

from __future__ import annotations

import time

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
MARKDOWN = '.jp-OutputArea-output.jp-RenderedMarkdown[data-mime-type="text/markdown"]'
TRIES = 6


def test_an_agent_that_cannot_start_leaves_its_error_each_time(notebook: NotebookPage) -> None:
    cells = ["%load_ext acp_notebook"] + ["%acp -a some-missing-agent hi"] * TRIES
    notebook.write(cells)
    notebook.open()
    notebook.run_all()
    for index in range(1, TRIES + 1):
        notebook.wait_done(index)
    for index in range(1, TRIES + 1):
        output = notebook.output(index)
        expect(output.locator(MARKDOWN)).to_contain_text(
            "some-missing-agent", timeout=TURN_TIMEOUT_MS
        )
        expect(output.locator(".jp-OutputArea-output")).to_have_count(1)
        expect(output.locator(".widget-vbox")).to_have_count(0)
    notebook.shot("errors")
    assert "Error displaying widget" not in notebook.page.locator("body").inner_text()

    notebook.save()
    deadline = time.monotonic() + 30
    while not all(c.get("outputs") for c in notebook.saved().cells[1:]):
        assert time.monotonic() < deadline, "the saved notebook never got the outputs"
        notebook.page.wait_for_timeout(200)
    for index, cell in enumerate(notebook.saved().cells[1:], start=1):
        assert len(cell.outputs) == 1, (index, cell.outputs)
        data = cell.outputs[0].data
        assert WIDGET_MIME not in data, (index, data)
        assert "some-missing-agent" in data["text/markdown"], (index, data)


def test_rerunning_a_cell_whose_agent_exits_at_once(notebook: NotebookPage) -> None:
    """The agent process starts, then exits before answering ``initialize``."""
    notebook.write(["%load_ext acp_notebook", "%acp -a /bin/false hi"])
    notebook.open()
    notebook.run_cell(0)
    notebook.wait_done(0)
    for attempt in range(TRIES):
        notebook.run_cell(1)
        notebook.wait_done(1)
        output = notebook.output(1)
        expect(output.locator(MARKDOWN)).to_contain_text("Error:", timeout=TURN_TIMEOUT_MS)
        expect(output.locator(".jp-OutputArea-output")).to_have_count(1)
        expect(output.locator(".widget-vbox")).to_have_count(0)
        if attempt == 0:
            notebook.shot("exited")
    assert "Error displaying widget" not in notebook.page.locator("body").inner_text()
