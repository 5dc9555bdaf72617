"""A long reply in a real JupyterLab: its frozen segments are Markdown the frontend renders
(Output widgets in the live view), and the finished turn is saved as Markdown only, which
JupyterLab renders too (issue 15: live view and saved transcript at most 3× the reply)."""

from __future__ import annotations

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

#: About 240 KB (the quick benchmark's size): it streams for seconds, so the live view is
#: seen before the saved transcript replaces it.
CHUNKS = 6_000


def test_a_long_reply_streams_as_rendered_markdown_and_is_saved_as_markdown(
    notebook: NotebookPage,
) -> None:
    notebook.write(["%load_ext acp_notebook", f"%acp /long {CHUNKS}", "%acp /plan"])
    notebook.open()
    notebook.run_cell(0)
    notebook.wait_done(0)
    notebook.run_cell(1)
    # The live view: frozen segments rendered by JupyterLab's Markdown renderer inside the
    # turn's widget, code fences highlighted by it.
    live = notebook.output(1).locator(".widget-vbox .widget-output")
    expect(live.locator(".jp-RenderedMarkdown h2").first).to_contain_text(
        "Section 1", timeout=TURN_TIMEOUT_MS
    )
    notebook.shot("streaming")
    notebook.wait_done(1)
    # Saved: one Markdown output, no widget left, the whole reply and how it ended.
    saved = notebook.output(1).locator(".jp-RenderedMarkdown").last
    expect(saved).to_contain_text(f"Quote {CHUNKS // 13}:", timeout=TURN_TIMEOUT_MS)
    expect(saved).to_contain_text("Stop reason: end_turn")
    expect(notebook.output(1).locator(".widget-vbox")).to_have_count(0)
    expect(saved.locator("pre code").first).to_contain_text("def section_1")
    notebook.shot("saved-long")
    # A short turn with a plan keeps the live view's looks (HTML) when saved.
    notebook.run_cell(2)
    notebook.wait_done(2)
    expect(notebook.output(2).locator(".acp-transcript")).to_have_count(1)
    notebook.shot("saved-short")
