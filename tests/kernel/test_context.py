"""The notebook as the agent's context, read from what was actually sent (the kernel's
message log): live values by ``{name}`` summarised for their type (real pandas, numpy,
matplotlib), the last code cell and the code above ``%acp``, ``--no-context``,
``--dry-run`` and ``--fix``; and the "Sent: …" line of the turn's transcript."""

from __future__ import annotations

import base64
import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import Kernel, prompt_exchange

pytestmark = pytest.mark.kernel

SESSION_AGENT = Path(__file__).resolve().parents[1] / "agents" / "session_agent.py"

DATA = """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

sales = pd.DataFrame({"region": ["north", None, "south"], "units": [3.0, None, 7.0]})
units = pd.Series([10, 20, 30], name="units")
big = pd.DataFrame({"n": np.arange(1_000_000)})
arr = np.linspace(0.0, 1.0, 11)
fig, ax = plt.subplots()
ax.plot([1, 2, 3])
ax.set_title("growth")
plt.close(fig)
"""

FUNCTION = '''
def clean(frame):
    """Drop the empty rows."""
    return frame.dropna()
'''


def sent(kernel: Kernel, marker: str) -> list[dict[str, Any]]:
    """The content blocks of the last ``session/prompt`` whose prompt contains ``marker``."""
    log = kernel.agent_log()
    index, _, _ = prompt_exchange(log, marker)
    blocks: list[dict[str, Any]] = log[index][1]["params"]["prompt"]
    return blocks


def resources(blocks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The embedded resources by URI, each with the ``_meta`` of its block."""
    return {
        b["resource"]["uri"]: {**b["resource"], "meta": b.get("_meta", {}).get("acpNotebook")}
        for b in blocks
        if b["type"] == "resource"
    }


def headless(kernel: Kernel, line: str) -> str:
    turn = kernel.execute(line, allow_stdin=False, until="final")
    assert not turn.errors, turn.describe()
    return turn.markdown


def test_values_named_in_the_prompt_carry_their_data(kernel: Kernel) -> None:
    kernel.text(DATA)
    markdown = headless(kernel, "%acp look at {sales} {units} {big} {arr} {fig} values-marker")

    blocks = sent(kernel, "values-marker")
    assert blocks[0]["text"].startswith("look at `sales` `units` `big` `arr` `fig`")
    found = resources(blocks)
    frame = found["notebook://variables/sales"]["text"]
    assert "`region`: " in frame and "1 null" in frame and "north" in frame and "south" in frame
    assert "describe()" in frame
    series = found["notebook://variables/units"]["text"]
    assert "3 values" in series and "30" in series
    million = found["notebook://variables/big"]
    assert "1,000,000 rows" in million["text"] and len(million["text"]) < 25_000
    assert "first 50 of 1,000,000 rows shown" in million["meta"]["notes"]
    array = found["notebook://variables/arr"]["text"]
    assert "shape (11,)" in array and "mean: 0.5" in array
    assert "growth" in found["notebook://variables/fig"]["text"]
    images = [b for b in blocks if b["type"] == "image"]
    assert len(images) == 1 and images[0]["mimeType"] == "image/png"
    assert base64.b64decode(images[0]["data"]).startswith(b"\x89PNG")
    # The transcript lists what was sent, with the cut note.
    assert "*Sent:*" in markdown and "`big` DataFrame 1,000,000×1" in markdown
    assert "first 50 of 1,000,000 rows shown" in markdown


def test_refactor_this_function_sends_the_cell_that_defined_it(kernel: Kernel) -> None:
    kernel.text(FUNCTION)
    headless(kernel, "%acp refactor this function")

    cell = [
        r
        for uri, r in resources(sent(kernel, "refactor this function")).items()
        if uri.startswith("notebook://cells/")
    ]
    assert len(cell) == 1
    assert "def clean(frame):" in cell[0]["text"] and "return frame.dropna()" in cell[0]["text"]
    assert cell[0]["meta"]["label"].endswith("(4 lines)")


def test_a_function_by_name_sends_its_source(kernel: Kernel) -> None:
    kernel.text(FUNCTION)
    headless(kernel, "%acp explain {clean} source-marker")

    source = resources(sent(kernel, "source-marker"))["notebook://variables/clean"]
    assert source["mimeType"] == "text/x-python" and "def clean(frame):" in source["text"]


def test_code_above_the_prompt_line_is_sent(kernel: Kernel) -> None:
    headless(kernel, "threshold = 41\n%acp is the threshold right? above-marker")

    above = resources(sent(kernel, "above-marker"))["notebook://cells/current"]
    assert "threshold = 41" in above["text"] and "%acp" not in above["text"]


def test_no_context_sends_only_the_words(kernel: Kernel) -> None:
    kernel.text(FUNCTION)
    headless(kernel, "limit = 3\n%acp --no-context refactor this function words-marker")

    blocks = sent(kernel, "words-marker")
    assert blocks == [{"type": "text", "text": "refactor this function words-marker"}]


def test_dry_run_shows_the_blocks_and_sends_nothing(kernel: Kernel) -> None:
    before = len(kernel.agent_log())
    kernel.text(FUNCTION)
    run = kernel.execute("%acp --dry-run refactor this dry-marker", allow_stdin=False)
    assert not run.errors, run.describe()

    assert not any("dry-marker" in json.dumps(m) for _, m in kernel.agent_log()[before:])
    shown = run.displays[-1].content["data"]["text/plain"]
    assert "nothing was sent" in shown
    blocks = json.loads(shown[shown.index("[") :])
    assert blocks[0] == {"type": "text", "text": "refactor this dry-marker"}
    assert "def clean(frame):" in blocks[1]["resource"]["text"]


def test_fix_sends_the_last_traceback_and_its_cell(kernel: Kernel) -> None:
    failing = kernel.execute("total = 1\ntotal / 0", allow_stdin=False)
    assert failing.errors
    markdown = headless(kernel, "%acp --fix")

    blocks = sent(kernel, "Explain this error and fix it.")
    error = resources(blocks)["notebook://error"]
    assert "ZeroDivisionError: division by zero" in error["text"]
    assert "total / 0" in error["text"] and "total = 1" in error["text"]
    assert "interactiveshell.py" not in error["text"], "IPython's own frames were sent"
    assert "Cell In[" in error["text"] and "/tmp/" not in error["text"]
    assert "error ZeroDivisionError" in markdown


def test_fix_without_an_error_says_so(fresh_kernel: Kernel) -> None:
    run = fresh_kernel.execute("%acp --fix", allow_stdin=False)
    said = run.stderr + json.dumps([m.content for m in run.errors])
    assert "No cell has raised an error yet" in said, run.describe()
    assert "Traceback" not in said
    assert all("session/prompt" not in json.dumps(m) for _, m in fresh_kernel.agent_log())


def test_the_live_view_lists_what_was_sent_before_the_reply(kernel: Kernel) -> None:
    kernel.text(FUNCTION)
    turn = kernel.execute("%acp refactor this function live-marker", until="final")

    live = turn.html_text()
    assert "Sent: " in live and "cell [" in live and "(4 lines)" in live


def test_the_open_notebook_reaches_an_agent_that_refuses_typed_file_links(
    kernel: Kernel, tmp_path: Path
) -> None:
    """opencode failed every prompt from a notebook: "Internal error: 'file part media type
    application/x-ipynb+json' functionality not supported (-32603)"."""
    caps = json.dumps({"promptCapabilities": {"embeddedContext": True}})
    command = shlex.join([sys.executable, str(SESSION_AGENT), "--caps", caps, "--refuse-link-types"])
    agent = '"' + command.replace("\\", "\\\\").replace('"', '\\"') + '"'
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text("{}")
    kernel.text(f"__vsc_ipynb_file__ = {str(notebook)!r}")
    try:
        turn = kernel.execute(f"%acp -a {agent} echo link-marker", allow_stdin=False, until="final")
        assert "echo: link-marker" in turn.plain, turn.describe()
        (link,) = [b for b in sent(kernel, "link-marker") if b["type"] == "resource_link"]
        assert link["uri"] == notebook.as_uri() and "mimeType" not in link
    finally:
        kernel.text("del __vsc_ipynb_file__")
