"""A lab's messages in a notebook: one row each, everything the agent wrote escaped."""

from __future__ import annotations

from typing import Any

import pytest

from acp_notebook.lab import LabMessage, display
from acp_notebook.protocol.trace_event import TraceEvent


def test_a_row_escapes_the_agents_strings_and_flags_schema_breaks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shown: list[dict[str, Any]] = []
    monkeypatch.setattr(display, "display", lambda bundle, raw: shown.append(bundle))
    hostile = "<img src=x onerror=alert(1)>"
    update = {"sessionId": "s", "update": {"sessionUpdate": hostile}}
    entry = LabMessage(
        4,
        "demo",
        TraceEvent("recv", 0.0, {"jsonrpc": "2.0", "method": "session/update", "params": update}),
    )
    display.show_in_notebook(entry)
    (bundle,) = shown
    assert "<img" not in bundle["text/html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in bundle["text/html"]
    assert "breaks the schema" in bundle["text/html"]
    assert bundle["text/plain"].startswith("#4 ← notification session/update · <img")


def test_brief_rows_leave_the_payload_out(monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[dict[str, Any]] = []
    monkeypatch.setattr(display, "display", lambda bundle, raw: shown.append(bundle))
    entry = LabMessage(
        1,
        "demo",
        TraceEvent(
            "send",
            0.0,
            {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"secret": "x"}},
        ),
    )
    display.show_in_notebook(entry, brief=True)
    assert shown[0]["text/plain"] == "#1 → request 0 initialize"
    assert "secret" not in shown[0]["text/html"]
