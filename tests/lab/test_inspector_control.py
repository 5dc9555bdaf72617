"""``%acp --inspect`` / ``acp.inspector()`` against the real demo agent, without a kernel:
a live view that follows the notebook's message log, or a Markdown table headless."""

from __future__ import annotations

import ipywidgets as w

from acp_notebook.notebook.controls import REGISTRY, run
from acp_notebook.notebook.controls.timeline import InspectorDisplay, TimelineTable
from acp_notebook.notebook.load.options import parse_line
from acp_notebook.notebook.runtime.agents import NotebookAgents

from ..notebook.conftest import SAFETY, agents, context, on_loop

__all__ = ["agents"]  # the fixture, used by name


def prompt(notebook: NotebookAgents, text: str) -> None:
    async def turn() -> None:
        session = await context(notebook).open_session()
        await session.prompt(text)

    notebook.loop.run(turn, timeout=SAFETY)


def test_inspect_is_a_control_and_with_a_prompt_an_option_of_the_turn() -> None:
    alone = parse_line("--inspect")
    assert alone.control == "inspector" and not alone.inspect
    turn = parse_line("-s lab --inspect /notice warning")
    assert turn.control is None and turn.inspect and turn.prompt == "/notice warning"
    assert turn.session == "lab"


def test_headless_the_inspector_is_a_checked_markdown_table(agents: NotebookAgents) -> None:
    prompt(agents, "/notice")
    table = run(REGISTRY["inspector"], context(agents, interactive=False))
    assert isinstance(table, TimelineTable)
    markdown = table._repr_markdown_()
    assert "| # | from | message | method | kind | session | paired | time | schema |" in markdown
    assert "notice" in markdown and "initialize" in markdown
    assert "| ok |" in markdown  # checked against the schema
    assert "notice" in repr(table)


def test_the_live_inspector_follows_the_log_and_saves_as_markdown(agents: NotebookAgents) -> None:
    prompt(agents, "/named")
    display = run(REGISTRY["inspector"], context(agents, interactive=True))
    assert isinstance(display, InspectorDisplay) and isinstance(display.widget, w.VBox)
    before = len(display.view.rows.options)
    prompt(agents, "/notice")
    on_loop(agents, display.view.refresh)  # what the coalesced poke does on the loop
    assert len(display.view.rows.options) > before
    assert "notice" in display.view.kind.options
    bundle = display._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert "| # | from |" in bundle["text/markdown"] and "notice" in bundle["text/plain"]
