"""``%acp`` in a real JupyterLab + chromium: streaming, permission buttons, cancel, the
static transcript that replaces the live view, and what a saved notebook holds.

The agent is the demo agent (the default ``%acp`` agent). Each test works in its own
directory under the server's root dir (the kernel's, so the agent's, working directory).
Screenshots of every step go to ``test-artifacts/browser/``.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

WIDGET_VIEW = ".jp-OutputArea-output .widget-vbox"
#: The static transcript: JupyterLab shows the bundle's HTML (it ranks before Markdown).
TRANSCRIPT = '.jp-OutputArea-output.jp-RenderedHTML[data-mime-type="text/html"]'
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"

UTILS = "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result\n\n\ndef scale(values, factor):\n    return [v * factor for v in values]\n"
#: What the demo agent's refactoring makes of UTILS: the loop says what it adds up.
REFACTORED_UTILS = UTILS.replace(
    "    result = 0\n    for v in values:\n        result += v\n    return result\n",
    "    return sum(values)\n",
)

#: Watches one cell and keeps every distinct (widget text, markdown text, prompt) state
#: it shows, so streaming is checked on what the page displayed, whatever the timing.
RECORDER = """
(index) => {
  const cell = document.querySelectorAll(
    '.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell')[index];
  const seen = [];
  window.__acpSeen = seen;
  const record = () => {
    const widget = cell.querySelector('.jp-OutputArea-output .widget-vbox');
    const md = cell.querySelector('.jp-OutputArea-output[data-mime-type="text/html"]');
    const prompt = cell.querySelector('.jp-InputArea-prompt').innerText.trim();
    const snap = {widget: widget ? widget.innerText : null, markdown: md ? md.innerText : null,
                  prompt: prompt};
    const last = seen[seen.length - 1];
    if (!last || last.widget !== snap.widget || last.markdown !== snap.markdown
        || last.prompt !== snap.prompt) seen.push(snap);
  };
  new MutationObserver(record).observe(
    cell, {subtree: true, childList: true, characterData: true, attributes: true});
  record();
}
"""


def _transcript(notebook: NotebookPage, index: int, text: str) -> Any:
    """The cell's static Markdown transcript, once it contains ``text``."""
    markdown = notebook.output(index).locator(TRANSCRIPT)
    expect(markdown).to_contain_text(text, timeout=TURN_TIMEOUT_MS)
    return markdown


def _no_widget_left(notebook: NotebookPage, index: int) -> None:
    expect(notebook.output(index).locator(WIDGET_VIEW)).to_have_count(0)
    expect(notebook.output(index).locator(".jp-OutputArea-output")).to_have_count(1)


def _load_extension(notebook: NotebookPage) -> None:
    notebook.run_cell(0)
    notebook.wait_done(0)
    # %load_ext printed nothing: no traceback, no stderr (acp_notebook importable in the kernel).
    expect(notebook.output(0).locator(".jp-OutputArea-output")).to_have_count(0)


# ---------------------------------------------------------------------------------- 1


def test_reply_streams_then_transcript(notebook: NotebookPage) -> None:
    notebook.write(["%load_ext acp_notebook", "%acp /plan"])
    notebook.open()
    notebook.shot("opened")
    _load_extension(notebook)

    notebook.page.evaluate(RECORDER, 1)
    notebook.run_cell(1)
    widget = notebook.output(1).locator(WIDGET_VIEW).first
    expect(widget).to_be_visible()
    notebook.shot("widget-view")
    # The plan checklist streams into the live view while the cell runs.
    expect(widget).to_contain_text("Read the files involved", timeout=TURN_TIMEOUT_MS)
    notebook.shot("streaming")

    markdown = _transcript(notebook, 1, "Stop reason: end_turn")
    notebook.wait_done(1)
    notebook.shot("transcript")
    expect(markdown).to_contain_text("All five steps are completed.")
    expect(markdown.get_by_text("Stop reason: end_turn")).to_have_count(1)
    # The plan is the live view's checklist: one mark per step, no list bullet beside it.
    expect(markdown.locator("li", has_text="✅")).to_have_count(5)
    assert (
        markdown.locator("li").first.evaluate("li => getComputedStyle(li).listStyleType") == "none"
    )
    _no_widget_left(notebook, 1)

    seen = notebook.page.evaluate("window.__acpSeen")
    live = [s["widget"] for s in seen if s["widget"] and s["markdown"] is None]
    partial = [
        s["widget"]
        for s in seen
        if s["widget"]
        and s["markdown"] is None
        and s["prompt"] == "[*]:"
        and "Read the files involved" in s["widget"]
        and "All five steps" not in s["widget"]
    ]
    assert partial, f"the running cell never showed the plan in progress: {seen!r}"
    # Streaming: the live view changed several times while the plan was in progress.
    assert len(set(partial)) >= 3, f"only {len(set(partial))} live states: {partial!r}"
    assert any("Starting agent" in t or "Running" in t for t in live), live
    # ... and then the live view was replaced by the transcript in place.
    assert seen[-1]["widget"] is None and "Stop reason: end_turn" in seen[-1]["markdown"]


# ---------------------------------------------------------------------------------- 2


@pytest.mark.parametrize(
    ("choice", "allowed"), [("Allow once", True), ("Reject", False)], ids=["allow", "reject"]
)
def test_permission_buttons(notebook: NotebookPage, choice: str, allowed: bool) -> None:
    utils = notebook.dir / "utils.py"
    utils.write_text(UTILS)
    original = utils.read_bytes()
    notebook.write(["%load_ext acp_notebook", "%acp /edit utils.py"])
    notebook.open()
    _load_extension(notebook)

    notebook.run_cell(1)
    out = notebook.output(1)
    button = out.get_by_role("button", name=choice, exact=True)
    expect(button).to_be_visible(timeout=TURN_TIMEOUT_MS)
    for name in ("Allow once", "Allow always", "Reject"):
        expect(out.get_by_role("button", name=name, exact=True)).to_be_enabled()
    expect(out).to_contain_text("Permission requested")
    notebook.shot("asking")
    # The cell is still running, and nothing has been written yet.
    expect(notebook.prompt(1)).to_have_text("[*]:")
    assert utils.read_bytes() == original

    button.click()
    markdown = _transcript(notebook, 1, "Stop reason: end_turn")
    notebook.wait_done(1)
    notebook.shot("transcript")
    expect(markdown).to_contain_text(f"Permission: {choice} (chosen by user)")
    _no_widget_left(notebook, 1)

    # The saved transcript keeps the live view's diff: added and removed lines tinted.
    added = markdown.locator("pre span", has_text=re.compile(r"^\+    return sum")).first
    removed = markdown.locator("pre span", has_text=re.compile(r"^-    result = 0")).first
    for line, tint in ((added, "46, 160, 67"), (removed, "248, 81, 73")):
        background = line.evaluate("span => getComputedStyle(span).backgroundColor")
        assert tint in background, background
    if allowed:
        assert utils.read_text() == REFACTORED_UTILS
        expect(markdown).to_contain_text("I wrote utils.py")
    else:
        assert utils.read_bytes() == original
        expect(markdown).to_contain_text("the file was not changed")


# ---------------------------------------------------------------------------------- 3


def test_cancel_stops_the_stream(notebook: NotebookPage) -> None:
    notebook.write(["%load_ext acp_notebook", "%acp /slow"])
    notebook.open()
    _load_extension(notebook)

    notebook.run_cell(1)
    widget = notebook.output(1).locator(WIDGET_VIEW).first
    expect(widget).to_contain_text("This reply streams", timeout=TURN_TIMEOUT_MS)
    notebook.shot("streaming")
    # The Font Awesome icon's glyph is part of the button's accessible name.
    cancel = notebook.output(1).get_by_role("button", name=re.compile(r"(^|\W)Cancel$"))
    expect(cancel).to_be_enabled()
    cancel.click()

    markdown = _transcript(notebook, 1, "Stop reason: cancelled")
    notebook.wait_done(1)
    notebook.shot("cancelled")
    text = markdown.inner_text()
    # What was streamed before the cancel stays; the rest never came.
    assert "This reply streams" in text
    assert "Every ACP agent must behave this way when cancelled." not in text, text
    assert "Finished without being cancelled" not in text, text
    _no_widget_left(notebook, 1)


# ---------------------------------------------------------------------------------- 4


def test_saved_notebook_reopens_with_transcripts(notebook: NotebookPage) -> None:
    prompts = {1: "%acp /plan", 2: "%acp /think"}
    notebook.write(["%load_ext acp_notebook", *prompts.values()])
    notebook.open()
    _load_extension(notebook)
    for index in prompts:
        notebook.run_cell(index)
        _transcript(notebook, index, "Stop reason: end_turn")
        notebook.wait_done(index)
    notebook.shot("ran")
    old_kernels = {s["kernel"]["id"] for s in notebook.lab.sessions()}

    notebook.save()
    deadline = time.monotonic() + 30
    while True:
        saved = notebook.saved()
        if all(saved.cells[i].get("outputs") for i in prompts):
            break
        assert time.monotonic() < deadline, "the saved notebook never got the outputs"
        notebook.page.wait_for_timeout(200)
    expect(notebook.page.locator(".jp-mod-dirty")).to_have_count(0)
    notebook.shot("saved")

    for index, source in prompts.items():
        cell = saved.cells[index]
        assert cell.source == source
        outputs = cell.outputs
        assert len(outputs) == 1, f"cell {index}: {len(outputs)} outputs: {outputs!r}"
        output = outputs[0]
        assert output.output_type == "display_data", output
        assert set(output.data) == {"text/html", "text/markdown", "text/plain"}, set(output.data)
        assert WIDGET_MIME not in output.data
        assert "Stop reason: end_turn" in output.data["text/markdown"]
        assert "Stop reason: end_turn" in output.data["text/plain"]
    assert "widgets" not in saved.metadata or not saved.metadata["widgets"]

    # A fresh kernel and a fresh page: the transcripts come back from the file alone.
    notebook.close_page()
    notebook.lab.shutdown_sessions()
    assert not notebook.lab.sessions()
    notebook.reopen_page()
    notebook.open()
    new_kernels = {s["kernel"]["id"] for s in notebook.lab.sessions()}
    assert new_kernels and not (new_kernels & old_kernels)
    for index in prompts:
        markdown = _transcript(notebook, index, "Stop reason: end_turn")
        _no_widget_left(notebook, index)
        expect(markdown).to_contain_text("You")
        # Trusted, so a widget view would have been rendered (as an error) had it been saved.
        expect(markdown).to_have_class(re.compile(r"\bjp-mod-trusted\b"))
    expect(notebook.output(1).locator(TRANSCRIPT)).to_contain_text("All five steps are completed.")
    notebook.shot("reopened")
    expect(notebook.page.get_by_text("Error displaying widget")).to_have_count(0)
    assert "Error displaying widget" not in notebook.page.locator("body").inner_text()


def test_control_unsaved_widget_state_is_detected(notebook: NotebookPage) -> None:
    """Control for the check above: a trusted notebook holding a widget-view output
    without widget state does show "Error displaying widget" on this page."""
    view = {"model_id": "0" * 32, "version_major": 2, "version_minor": 0}
    output = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"text/plain": "VBox()", WIDGET_MIME: view},
    }
    notebook.write(["%load_ext acp_notebook"], outputs=[[output]])
    notebook.open()
    expect(notebook.output(0)).to_contain_text("Error displaying widget")
    notebook.shot("widget-error")


# ---------------------------------------------------------------------------------- 5


def test_run_all_waits_for_the_agent(notebook: NotebookPage) -> None:
    notebook.write(
        [
            "%load_ext acp_notebook",
            "%acp -p allow /write out.txt hello",
            'print(open("out.txt").read())',
        ]
    )
    notebook.open()
    notebook.run_all()
    notebook.wait_done(2)
    notebook.shot("ran-all")
    _transcript(notebook, 1, "Stop reason: end_turn")
    stdout = notebook.output(2).locator('[data-mime-type="application/vnd.jupyter.stdout"]')
    expect(stdout).to_have_text("hello", timeout=TURN_TIMEOUT_MS)
    expect(
        notebook.output(2).locator('[data-mime-type="application/vnd.jupyter.stderr"]')
    ).to_have_count(0)
    assert (notebook.dir / "out.txt").read_text() == "hello\n"
