"""``%load_ext acp_notebook`` registers the magic and imports nothing it does not need: the
agents, turns, widgets and protocol models load with the first ``%acp`` (issue 15: start-up
within 1.5× of ``import ipywidgets``, ``benchmarks/startup.py``); a headless first turn
loads no widgets (the first ``%acp /help``, ``benchmarks/first_turn.py``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import fresh_python

#: Loaded by the first prompt, never by `%load_ext`. ipywidgets is the start-up budget's
#: baseline: importing it alone would spend the whole budget.
NOT_AT_LOAD = (
    "acp_notebook.protocol.models",
    "acp_notebook.notebook.runtime.agents",
    "acp_notebook.notebook.turn.handle",
    "acp_notebook.notebook.controls",
    "acp_notebook.ui",
    "acp_notebook.client.connection",
    "ipywidgets",
    "pydantic",
)

CHILD = """
import json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "acp_notebook")
loaded = sorted(sys.modules)
shell.run_line_magic("config", "AcpMagics.agent = 'gemini'")
magics = shell.magics_manager.registry["AcpMagics"]
print(json.dumps({
    "loaded": loaded,
    "agent": magics.agent,
    "magics": sorted(shell.magics_manager.magics["line"]),
    "prompt": shell.transform_cell("%acp what can you do?"),
}))
"""


def load_ext_in_a_fresh_process() -> dict[str, object]:
    result = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, check=True, timeout=120
    )
    answer: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return answer


def test_load_ext_registers_the_magic_without_the_notebook_layer() -> None:
    answer = load_ext_in_a_fresh_process()
    loaded = answer["loaded"]
    assert isinstance(loaded, list)
    assert "acp_notebook.notebook.load.magics" in loaded  # the report is read right
    heavy = [name for name in loaded if name.startswith(NOT_AT_LOAD)]
    assert heavy == []
    # What `%load_ext` promises works at once: the magic, its configuration, the escape
    # and await transformers.
    assert "acp" in answer["magics"]  # type: ignore[operator]
    assert answer["agent"] == "gemini"
    assert answer["prompt"] == "await __acp_notebook_await__('what can you do?', None)\n"


#: Not loaded by a turn without a frontend (no kernel: what the first-turn benchmark, nbclient
#: and CI runs do): its saved transcript is rendered without widget modules, the notebook
#: tools' MCP server is built only when an agent connects (the demo agent does not), and the
#: live notebook's messages are loaded by a page that connects or a tool that uses it.
NOT_HEADLESS = (
    "ipywidgets",
    "acp_notebook.ui.turn",
    "acp_notebook.ui.message",
    "acp_notebook.ui.toolcall",
    "acp_notebook.ui.permission",
    "acp_notebook.ui.layouts",
    "acp_notebook.ui.segments",
    "acp_notebook.notebook.view.live_cell",
    "acp_notebook.notebook.frontend.live",
    "acp_notebook.notebook.frontend.protocol",
    "mcp",
)

HEADLESS_TURN = """
import contextlib, io, json, sys
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "acp_notebook")
output = io.StringIO()
with contextlib.redirect_stdout(output):
    shell.run_line_magic("acp", "/help")
print(json.dumps({"loaded": sorted(sys.modules), "output": output.getvalue()}))
"""


def test_a_headless_first_turn_imports_no_widgets(tmp_path: Path) -> None:
    answer = fresh_python(HEADLESS_TURN, tmp_path=tmp_path)
    assert "/help" in answer["output"]  # the demo agent answered, in the saved transcript
    assert "acp_notebook.ui.saved_transcript" in answer["loaded"]  # the report is read right
    widgets = [
        name
        for name in answer["loaded"]
        if any(name == heavy or name.startswith(heavy + ".") for heavy in NOT_HEADLESS)
    ]
    assert widgets == []
