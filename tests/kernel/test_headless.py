"""Headless turns (``allow_stdin: false``, as nbclient, nbconvert --execute, papermill and
nbval send): no widgets, the cell blocks, one display of the transcript bundle, and
permission requests answered by the policy instead of buttons."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import REFACTORED_UTILS_PY, UTILS_PY, Execution, Kernel, rel

pytestmark = pytest.mark.kernel


def comm_traffic(kernel: Kernel, execution: Execution) -> list[str]:
    """Every comm message (any parent) between the request and its idle status."""
    idle = execution.idle
    assert idle is not None
    return [
        m.msg_type
        for m in kernel.log[execution.start_seq : idle.seq]
        if m.msg_type.startswith("comm")
    ]


def test_headless_turn_displays_the_transcript_once(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /plan", allow_stdin=False, until="final")

    assert comm_traffic(kernel, turn) == [], "a headless turn sent widget messages"
    assert turn.widget_display is None
    displays = turn.displays
    assert len(displays) == 1, turn.describe()
    data = displays[0].content["data"]
    assert set(data) == {"text/html", "text/markdown", "text/plain"}, set(data)
    assert not turn.of_type("update_display_data", "execute_result")
    # The cell blocked until the turn ended: the transcript came before the idle status.
    assert turn.idle is not None and displays[0].seq < turn.idle.seq
    for text in (data["text/plain"], data["text/markdown"]):
        assert "/plan" in text
        assert "Read the files involved" in text and "Summarise what changed" in text
        assert "All five steps are completed." in text
    assert "Stop reason: end_turn" in data["text/plain"]
    assert not turn.errors, turn.describe()


def test_headless_permission_is_rejected_by_the_policy(kernel: Kernel, utils_py: Path) -> None:
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", allow_stdin=False, until="final")

    assert comm_traffic(kernel, turn) == []
    assert utils_py.read_bytes() == UTILS_PY.encode()
    plain = turn.plain
    assert "Permission: Reject (chosen by policy" in plain, turn.describe()
    assert "was not changed" in plain
    assert not turn.errors


def test_headless_permission_allowed_by_option(kernel: Kernel, utils_py: Path) -> None:
    turn = kernel.execute(
        f"%acp -p allow /edit {rel(kernel, utils_py)}", allow_stdin=False, until="final"
    )

    assert comm_traffic(kernel, turn) == []
    assert utils_py.read_text() == REFACTORED_UTILS_PY
    plain = turn.plain
    assert "Permission: Allow once (chosen by policy" in plain, turn.describe()
    assert "Stop reason: end_turn" in plain
    assert not turn.errors
