"""The inspector (``%acp --inspect``) as a picture of the protocol in JupyterLab: the
notebook tools' MCP traffic in a lane of its own, who allowed a ``run_code``, and a click
on an arrow opening the message's JSON and its check."""

from __future__ import annotations

import re

import pytest

from ..conftest import import_or_skip
from .conftest import NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect


def test_the_inspector_draws_the_notebook_tools_lane_and_opens_a_message(
    notebook: NotebookPage,
) -> None:
    notebook.write(
        ["%load_ext acp_notebook", "%acp -p allow /tools from_agent = 6 * 7", "%acp --inspect"]
    )
    notebook.open()
    notebook.run_all()
    notebook.wait_done(2)

    lanes = notebook.output(2).locator("details[data-acp-message]").first.locator("xpath=../..")
    expect(lanes).to_contain_text("notebook tools (MCP)")
    decision = lanes.locator("summary", has_text="⚖ run_code: allowed by policy allow")
    expect(decision).to_be_visible()
    # The lanes are drawn again once, with each message's schema verdict, when the traffic
    # pauses: a message opened before that closed again (or was gone when clicked).
    expect(lanes).not_to_contain_text("Schema: checked when the traffic pauses.")
    call = lanes.locator("summary", has_text=re.compile(r"tools/call \(request \d+\) ▶")).last
    call.click()
    opened = call.locator("xpath=..")
    expect(opened).to_contain_text("Conforms to MCP's message types.")
    expect(opened).to_contain_text('"name": "run_code"')
    notebook.shot("inspector-lanes")
