"""A frontend without widgets (``jupyter console``, qtconsole): the client allows stdin but
never announces a widget manager. The turn is streamed into the cell's stdout as plain
text, and permission requests are asked with ``input()`` (the kernel's ``input_request``
on stdin), answered here as a person types at the kernel."""

from __future__ import annotations

import queue
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import REFACTORED_UTILS_PY, SAFETY, UTILS_PY, Execution, Kernel, _start, rel

pytestmark = pytest.mark.kernel


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """A kernel driven the way ``jupyter console`` drives it: no comm message, ever (this
    module's own, in place of the shared one ``workdir`` uses)."""
    kernel = _start(tmp_path_factory.mktemp("console"), widgets=False)
    try:
        yield kernel
    finally:
        kernel.shutdown()


def answer_input(kernel: Kernel, answer: str | None = None, *, choose: str | None = None) -> str:
    """Wait for the kernel's ``input_request`` (reading iopub meanwhile) and type an answer:
    ``answer``, or the number the printed options give ``choose``. Returns the prompt."""
    deadline = time.monotonic() + SAFETY
    while time.monotonic() < deadline:
        try:
            msg = kernel.kc.get_stdin_msg(timeout=0.05)
        except queue.Empty:
            kernel.pump(0.05)
            continue
        if msg["header"]["msg_type"] != "input_request":
            continue
        kernel.drain()
        if choose is not None:
            printed = kernel.executions[-1].stdout
            numbers = re.findall(rf"\[(\d+)\] {re.escape(choose)} \(", printed)
            assert numbers, f"no option {choose!r} in:\n{printed}"
            answer = numbers[-1]
        assert answer is not None
        kernel.kc.input(answer)
        return str(msg["content"]["prompt"])
    raise AssertionError(f"timed out ({SAFETY:g} s safety net) waiting for an input_request")


def no_widgets(kernel: Kernel, execution: Execution) -> None:
    """Nothing of the live view reached the frontend: no comm, no widget repr."""
    assert not [m for m in kernel.log[execution.start_seq :] if m.msg_type.startswith("comm")]
    shown = [
        str(m.content.get("data", {}).get("text/plain", ""))
        for m in execution.of_type("display_data", "update_display_data", "execute_result")
    ]
    assert not any("VBox(" in text or "HTML(" in text for text in shown), shown
    assert "VBox(" not in execution.stdout


def test_the_reply_is_streamed_as_plain_text(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /help", until="idle")

    no_widgets(kernel, turn)
    assert not turn.errors, turn.describe()
    assert "/plan" in turn.stdout and "/slow" in turn.stdout, turn.describe()
    assert "Stop reason: end_turn" in turn.stdout
    assert "<details" not in turn.stdout and "<div" not in turn.stdout


def test_a_slow_reply_arrives_while_it_is_written(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /slow", until=None)
    kernel.wait_for(lambda: "This reply streams" in turn.stdout, "the first words of /slow")
    assert turn.busy, "the first words came only when the cell ended"
    assert "Finished without being cancelled" not in turn.stdout
    turn.wait("idle")

    no_widgets(kernel, turn)
    assert len([m for m in turn.of_type("stream") if m.content["name"] == "stdout"]) > 2
    assert "Finished without being cancelled" in turn.stdout


def test_a_permission_is_asked_with_input_and_the_agent_gets_the_answer(
    kernel: Kernel, utils_py: Path
) -> None:
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", until=None)
    prompt = answer_input(kernel, choose="Allow once")
    turn.wait("idle")

    assert prompt == "Choice: "
    no_widgets(kernel, turn)
    assert "The agent asks for permission:" in turn.stdout
    assert utils_py.read_text() != UTILS_PY, turn.describe()
    assert utils_py.read_text() == REFACTORED_UTILS_PY
    assert not turn.errors, turn.describe()


def test_cancel_typed_at_the_prompt_rejects_the_request(kernel: Kernel, utils_py: Path) -> None:
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", until=None)
    answer_input(kernel, "c")
    turn.wait("idle")

    assert utils_py.read_text() == UTILS_PY
    assert not turn.errors, turn.describe()


def test_allow_always_on_a_risky_call_asks_again_and_no_goes_back(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /run curl -s https://example.invalid/x", until=None)
    answer_input(kernel, choose="Allow always")
    second = answer_input(kernel, "n")
    again = answer_input(kernel, choose="Reject")
    turn.wait("idle")

    assert second.startswith("Allow every future execute call like this one without asking?")
    assert "Caution" in second
    assert again == "Choice: "  # "no" went back to the options
    assert "Reject (chosen by user)" in turn.stdout or "rejected" in turn.stdout, turn.describe()
    assert not turn.errors, turn.describe()


def test_without_stdin_the_policy_decides_and_the_transcript_is_displayed(
    kernel: Kernel, utils_py: Path
) -> None:
    """nbconvert / nbval (``allow_stdin: false``): headless as before, ask means deny."""
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", allow_stdin=False, until="final")

    assert "Permission: Reject (chosen by policy" in turn.plain, turn.describe()
    assert utils_py.read_text() == UTILS_PY
