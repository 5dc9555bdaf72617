"""The live view's streamed Markdown carries no inline styles: the turn's one stylesheet
(``ui/markdown.py`` ``MARKDOWN_SHEET``, in a hidden widget) styles it in a real JupyterLab,
over JupyterLab's own Markdown CSS, as the inline styles did (issue 15, wire cost)."""

from __future__ import annotations

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

#: The live view's streamed paragraph (the sheet's class), not the saved transcript's.
LIVE_PARAGRAPH = ".jp-OutputArea-output .widget-vbox .acp-md p"


def test_the_streamed_reply_is_styled_by_the_turns_stylesheet(notebook: NotebookPage) -> None:
    notebook.write(["%load_ext acp_notebook", "%acp /slow"])
    notebook.open()
    notebook.run_cell(0)
    notebook.wait_done(0)
    notebook.run_cell(1)
    paragraph = notebook.output(1).locator(LIVE_PARAGRAPH).first
    expect(paragraph).to_contain_text("This reply streams", timeout=TURN_TIMEOUT_MS)
    notebook.shot("streaming")
    # The live tail is re-rendered as words arrive: read it in one synchronous evaluation.
    style, top, gap, size, line = notebook.output(1).evaluate(
        "out => { const p = out.querySelector('.widget-vbox .acp-md p');"
        " const s = getComputedStyle(p), b = getComputedStyle(p.closest('.acp-md'));"
        " return [p.getAttribute('style'), s.marginTop, s.marginBottom, s.fontSize,"
        " b.lineHeight]; }"
    )
    assert style is None
    # The sheet's look, which JupyterLab's Markdown CSS alone does not give: no top margin,
    # a 0.6em gap below, a 1.55 line height on the block.
    em = float(size.removesuffix("px"))
    assert top == "0px", top
    assert abs(float(gap.removesuffix("px")) / em - 0.6) < 0.02, (gap, size)
    assert abs(float(line.removesuffix("px")) / em - 1.55) < 0.05, (line, size)
    notebook.wait_done(1)
