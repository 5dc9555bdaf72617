"""The cell the page asks about (the extension's Fix button, Ask about this cell) as the
prompt's context: the cell, or its selected lines marked with their numbers; for a Fix,
the error the button was on, whichever error the kernel raised last."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acp_notebook.client.sent import sent_items
from acp_notebook.notebook.frontend.protocol import Ask
from acp_notebook.notebook.prompt.cell_log import CellLog, RanCell
from acp_notebook.notebook.prompt.context import notebook_prompt
from acp_notebook.protocol import models as m

FIXTURE = Path(__file__).parents[1] / "data" / "live_notebook" / "messages.json"
SENT = json.loads(FIXTURE.read_text(encoding="utf-8"))["frontend_to_kernel"]
EMBEDDED = m.PromptCapabilities(embedded_context=True)


def log_of(last: RanCell | None = None) -> CellLog:
    log = CellLog(SimpleNamespace(user_ns={}))  # type: ignore[arg-type]
    log.last_code = last
    return log


def resources(blocks: list[Any]) -> list[m.TextResourceContents]:
    return [b.resource for b in blocks if isinstance(b, m.EmbeddedResourceContentBlock)]


def test_the_selected_lines_go_marked_with_their_numbers_and_the_whole_cell_after() -> None:
    ask = Ask.model_validate(SENT["ask"])
    prompt = notebook_prompt(log_of(RanCell("x = 2", 6)), "refactor this", about=ask)
    blocks = prompt.blocks(EMBEDDED)

    (resource,) = resources(blocks)  # the asked cell, not also the last cell that ran
    assert resource.uri == "notebook://cells/c-sum"
    assert resource.text == (
        "Asked about lines 2–3 of cell [7], selected:\n"
        "```python\ndef total(values):\n    return sum(values)\n```\n\n"
        "The whole cell:\n```python\n" + ask.source + "\n```\n\n"
        "Its id for the notebook tools is `c-sum`."
    )
    assert [item.text() for item in sent_items(blocks)] == ["lines 2–3 of cell [7] (selected)"]


def test_a_whole_cell_never_run_is_named_by_its_place() -> None:
    ask = Ask.model_validate({**SENT["ask"], "lines": None, "execution_count": None})
    (resource,) = resources(notebook_prompt(log_of(), "explain", about=ask).blocks(EMBEDDED))
    assert resource.text.startswith("Asked about cell 4:\n```python\nimport math\n")
    assert [
        i.text() for i in sent_items(notebook_prompt(log_of(), "x", about=ask).blocks(EMBEDDED))
    ] == ["cell 4 (4 lines)"]


def test_fix_sends_the_error_the_button_was_on_not_the_kernels_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The kernel's last error is another one (or none at all): the Fix was on cell [9].
    monkeypatch.setattr(sys, "last_value", KeyError("other"), raising=False)
    ask = Ask.model_validate(SENT["ask_fix"])
    prompt = notebook_prompt(log_of(), "", fix=True, about=ask)

    assert prompt.text == "Explain this error and fix it."
    (resource,) = resources(prompt.blocks(EMBEDDED))
    assert resource.uri == "notebook://error"
    assert resource.text == (
        "The last error:\n```\n" + SENT["ask_fix"]["error"] + "\n```\n\n"
        "It was raised in cell [9]:\n```python\nratio = 1 / 0\n```\n\n"
        "Its id for the notebook tools is `c-ratio`."
    )
    assert [i.text() for i in sent_items(prompt.blocks(EMBEDDED))] == [
        "error ZeroDivisionError in cell [9]"
    ]
