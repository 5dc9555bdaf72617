"""Value widgets (a form's text field, the mode dropdown) sync while the ``%acp`` cell is
busy — the default: the cell awaits its turn. ipywidgets' frontend sends one update per
model at a time and waits for the kernel's idle for it; without one, typing "Grace
Hopper" sent "G" and a second dropdown change never reached the agent.

Run twice: with JupyterLab's "Kernel Comms over subshells" off (every widget message goes
to the main shell: ipykernel 7.4's concurrent path, as in frontends without subshells) and
at its default (ipykernel routes each message to the main shell or the comm subshell).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from ..conftest import import_or_skip
from .conftest import TURN_TIMEOUT_MS, Lab, NotebookPage, chromium_or_skip

pytestmark = pytest.mark.browser

chromium_or_skip()
expect = import_or_skip("playwright.sync_api", "playwright is not installed").expect

NAME = "Grace Hopper"
#: Prints the JSON-RPC messages exchanged with the agent (what ``%acp --log`` lists).
AGENT_LOG = (
    "import json, acp_notebook\n"
    "print(json.dumps([[m.direction, m.message] for m in acp_notebook.messages()"
    " if m.message is not None], default=str))"
)
KERNELS_SETTINGS = "/lab/api/settings/@jupyterlab/apputils-extension:kernels-settings"


@pytest.fixture(params=["disabled", "perCommTarget"])
def comms_over_subshells(request: pytest.FixtureRequest, lab: Lab) -> Iterator[str]:
    """JupyterLab's ``commsOverSubshells`` setting for this test (reset afterwards)."""
    setting: str = request.param
    lab.api("PUT", KERNELS_SETTINGS, {"raw": json.dumps({"commsOverSubshells": setting})})
    try:
        yield setting
    finally:
        lab.api("PUT", KERNELS_SETTINGS, {"raw": "{}"})


def agent_log(notebook: NotebookPage, index: int) -> list[tuple[str, dict[str, Any]]]:
    notebook.run_cell(index)
    notebook.wait_done(index)
    stdout = notebook.output(index).locator('[data-mime-type="application/vnd.jupyter.stdout"]')
    return [(d, m) for d, m in json.loads(stdout.inner_text())]


def test_form_text_and_mode_changes_reach_the_agent_during_a_turn(
    notebook: NotebookPage, comms_over_subshells: str
) -> None:
    notebook.write(["%load_ext acp_notebook", "%acp /ask", AGENT_LOG])
    notebook.open()
    notebook.run_cell(0)
    notebook.wait_done(0)

    notebook.run_cell(1)
    out = notebook.output(1)
    field = out.locator(".widget-text input").first
    expect(field).to_be_visible(timeout=TURN_TIMEOUT_MS)
    expect(notebook.prompt(1)).to_have_text("[*]:")

    # The mode dropdown, under "Session settings": Code, then back to Ask.
    out.get_by_text("Session settings").click()
    mode = out.get_by_label("Mode", exact=True)
    expect(mode).to_be_visible()
    mode.select_option(label="Code")
    mode.select_option(label="Ask")

    field.press_sequentially(NAME, delay=40)
    # The kernel indicator still says busy: the cell runs until the form is answered.
    busy = notebook.page.locator('.jp-Notebook-ExecutionIndicator[data-status="busy"]')
    expect(busy.first).to_be_visible()
    notebook.shot(f"typed-{comms_over_subshells}")
    expect(notebook.prompt(1)).to_have_text("[*]:")
    out.get_by_role("button", name=re.compile(r"(^|\W)Accept$")).click()

    markdown = out.locator('.jp-OutputArea-output[data-mime-type="text/html"]')
    expect(markdown).to_contain_text("Stop reason: end_turn", timeout=TURN_TIMEOUT_MS)
    notebook.wait_done(1)
    expect(markdown).to_contain_text(f"Hello, {NAME}!")

    log = agent_log(notebook, 2)
    answers = [
        i
        for i, (direction, message) in enumerate(log)
        if direction == "send"
        and "method" not in message
        and isinstance(message.get("result"), dict)
        and message["result"].get("action") == "accept"
    ]
    assert answers, "the form was never answered"
    answer = log[answers[-1]][1]["result"]
    assert answer["content"]["name"] == NAME, answer
    # Both mode changes reached the agent while the turn ran (before the form's answer).
    modes = [
        message["params"]["value"]
        for direction, message in log[: answers[-1]]
        if direction == "send"
        and message.get("method") == "session/set_config_option"
        and message["params"].get("configId") == "mode"
    ]
    assert modes[-2:] == ["code", "ask"], modes
