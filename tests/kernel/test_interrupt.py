"""The kernel's interrupt (the ■ button) during a turn cancels the turn, the cell ends
with a one-line KeyboardInterrupt (an error: Run All stops there), and the kernel goes on
working. These tests share a kernel of
their own, apart from the other modules' kernels."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from .conftest import ROOT, Execution, Kernel, prompt_exchange

pytestmark = pytest.mark.kernel

SLOW_START = "This reply streams"
SLOW_END = "Every ACP agent must behave this way when cancelled."


def kernel_survives(kernel: Kernel) -> None:
    after = kernel.execute("1+1", until="idle")
    results = after.of_type("execute_result")
    assert not after.errors and results, after.describe()
    assert results[0].content["data"]["text/plain"] == "2"


def ends_in_one_line(turn: Execution) -> None:
    """The cell ended with one error, a KeyboardInterrupt shown as one line saying what
    happened, with no frame of this package."""
    errors = turn.errors
    assert len(errors) == 1, turn.describe()
    error = errors[0].content
    assert error["ename"] == "TurnInterrupted", turn.describe()
    shown = "\n".join(error["traceback"])
    assert len(error["traceback"]) == 1 and "\n" not in shown, shown
    assert "KeyboardInterrupt" in shown and "cancelled the agent's turn" in shown, shown
    assert "turn/handle.py" not in shown and "__acp_notebook_await__" not in shown, shown


def test_interrupt_cancels_an_interactive_turn(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /slow", until=None)
    # The next cell of a Run All, queued behind the turn.
    queued = kernel.execute("ran_after_the_interrupt = True", until=None)
    turn.wait(lambda t: SLOW_START in t.html_text())
    assert turn.busy
    kernel.interrupt()
    turn.wait("final")
    queued.wait("idle")

    plain = turn.plain
    assert "Stop reason: cancelled" in plain, turn.describe()
    assert SLOW_END not in plain
    ends_in_one_line(turn)
    # The transcript replaced the view before the cell ended with the interrupt.
    assert turn.final is not None and turn.idle is not None
    assert turn.final.seq < turn.idle.seq
    # Run All stopped at the interrupted cell: the next one did not run.
    assert kernel.text("print('ran_after_the_interrupt' in dir())").strip() == "False"
    kernel_survives(kernel)


def test_interrupt_cancels_a_headless_turn(kernel: Kernel) -> None:
    # The agent is already running, so the prompt goes out as soon as the cell starts.
    warm = kernel.execute("%acp hello", allow_stdin=False, until="final")
    assert "Stop reason: end_turn" in warm.plain, warm.describe()

    turn = kernel.execute("%acp /slow", allow_stdin=False, until=None)
    # A headless cell shows nothing while it runs. Give the agent a moment to stream
    # (not an assertion: the checks below hold whenever the interrupt lands in the turn).
    time.sleep(1.0)
    assert turn.busy, "the headless cell did not block"
    kernel.interrupt()
    turn.wait("idle")

    ends_in_one_line(turn)
    assert not any(m.msg_type.startswith("comm") for m in kernel.log[turn.start_seq :])
    # The agent was told (session/cancel) and answered the prompt "cancelled".
    log = kernel.agent_log()
    sent, result, _ = prompt_exchange(log, "/slow")
    cancels = [
        i
        for i, (direction, message) in enumerate(log)
        if i > sent and direction == "send" and message.get("method") == "session/cancel"
    ]
    assert cancels, "the interrupt did not send session/cancel"
    assert result is not None and result.get("stopReason") == "cancelled", result
    status = kernel.text("%acp --status")
    assert "running" in status and "turn in session" not in status, status
    kernel_survives(kernel)


def test_a_reply_cut_inside_a_code_block_closes_it_before_the_stop_line(
    kernel: Kernel, tmp_path: Path
) -> None:
    # A cut reply left its ``` fence open, so "*Stop reason: cancelled*" and the context
    # line rendered inside the code block, live and in the saved notebook.
    chunks = ["Here is the fix:\n\n```python\ndef add(a, b):\n", "    return a + b  # cut-here\n"]
    updates = tmp_path / "updates.json"
    updates.write_text(json.dumps([
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}}
        for text in chunks
    ]))  # fmt: skip
    agent = ROOT / "tests" / "agents" / "scripted_agent.py"
    command = f'"{sys.executable} {agent} --updates {updates} --until-cancel"'
    turn = kernel.execute(f"%acp -a {command} fix add", until=None)
    turn.wait(lambda t: "cut-here" in t.html_text())
    kernel.interrupt()
    turn.wait("final")

    html = MarkdownIt("commonmark").render(turn.markdown)
    code = "".join(re.findall(r"<pre>.*?</pre>", html, re.S))
    assert "return a + b  # cut-here" in code, html
    assert "Stop reason" not in code and "<em>Stop reason: cancelled" in html, html
    # The saved HTML (a short turn keeps one) shows the stop line after the code.
    saved = turn.final.content["data"]["text/html"] if turn.final else ""
    assert saved.index("cut-here") < saved.index("Stop reason: cancelled")
    assert saved.count("<pre") == saved.count("</pre>")
