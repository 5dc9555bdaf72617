"""Interactive turns in a real kernel: the live widget view, clicks while the cell is
busy, Cancel, queued prompts, and prompts that look like controls.

Each test uses the module's shared kernel (the demo agent keeps running between tests)
and files of its own (``workdir``). Clicks are sent exactly as JupyterLab sends them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import (
    REFACTORED_UTILS_PY,
    UTILS_PY,
    WIDGET_VIEW,
    Comm,
    Execution,
    Kernel,
    html_value,
    prompt_exchange,
    rel,
)

pytestmark = pytest.mark.kernel

#: The words /slow streams (acp_notebook/agents/demo/scenes.py, SLOW_TEXT): its first
#: words, and what only a turn that was not cancelled would show.
SLOW_START = "This reply streams"
SLOW_END = "Every ACP agent must behave this way when cancelled."
SLOW_FINISHED = "Finished without being cancelled"


def opened_during(kernel: Kernel, execution: Execution) -> list[str]:
    """Model names of every comm_open between the request and its idle status."""
    idle = execution.idle
    assert idle is not None
    return [
        str(m.content.get("data", {}).get("state", {}).get("_model_name"))
        for m in kernel.log[execution.start_seq : idle.seq]
        if m.msg_type == "comm_open"
    ]


def test_live_view_is_replaced_by_the_transcript(kernel: Kernel) -> None:
    turn = kernel.execute("%acp hello", until="final")

    # The live view: a VBox tree of widget models, displayed with a display id.
    shown = turn.widget_display
    assert shown is not None, turn.describe()
    assert shown.content["data"][WIDGET_VIEW]["model_id"] == turn.root
    assert turn.display_id, "the live view has no display id, so it cannot be replaced"
    assert kernel.comms[turn.root].model == "VBoxModel"
    models = {c.model for c in turn.comms}
    assert {"VBoxModel", "HBoxModel", "HTMLModel", "ButtonModel"} <= models, models
    assert turn.buttons("Cancel"), "the live view has no Cancel button"
    assert kernel.comms[turn.root].opened.seq < shown.seq  # the models exist before the view

    # At the end: the same display id now carries the static transcript bundle.
    final = turn.final
    assert final is not None and final.msg_type == "update_display_data"
    assert final.seq > shown.seq
    data = final.content["data"]
    assert set(data) == {"text/html", "text/markdown", "text/plain"}, set(data)
    assert "hello" in data["text/markdown"] and "hello" in data["text/plain"]
    assert "end_turn" in data["text/plain"]
    # The cell stayed busy for the whole turn (a top-level %acp is awaited).
    assert turn.idle is not None and turn.idle.seq > final.seq
    assert not turn.errors, turn.describe()


def test_the_replaced_live_view_is_closed(kernel: Kernel) -> None:
    turn = kernel.execute("%acp hello", until="final")
    # Once the transcript replaced the view, every model of the view is closed: the
    # frontend drops them and the kernel keeps no Widget instances for them. But for the
    # layouts, styles and stylesheet every view of the kernel shares (ui/layouts.py).
    kernel.settle()
    assert turn.comms
    shared = {c.comm_id for c in turn.comms if c.closed is None}
    still_open = [c.model for c in turn.comms if c.closed is None and not is_shared(c)]
    assert not still_open, f"{len(still_open)} models left open: {still_open}"
    # A later view refers to those, and leaves nothing else open either.
    later = kernel.execute("%acp hello", until="final")
    kernel.settle()
    assert later.comms
    still_open = [c.model for c in later.comms if c.closed is None and c.comm_id not in shared]
    assert not still_open, f"{len(still_open)} models left open: {still_open}"


def is_shared(comm: Comm) -> bool:
    """A layout, a style, or the Markdown stylesheet: shared by the views of the kernel."""
    stylesheet = comm.model == "HTMLModel" and "<style>" in str(comm.state.get("value"))
    return comm.model.endswith(("LayoutModel", "StyleModel")) or stylesheet


@pytest.mark.parametrize("label", ["Allow once", "Reject"])
def test_permission_click_while_the_cell_is_busy(
    kernel: Kernel, utils_py: Path, label: str
) -> None:
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", until=None)
    button = turn.wait_button(label)

    # The agent is waiting for the answer: nothing written yet, and the cell still runs.
    assert utils_py.read_text() == UTILS_PY
    assert turn.busy, "the cell went idle before the permission was answered"
    assert not button.state.get("disabled")

    turn.click(label)
    turn.wait("final")

    # The click was handled while the cell was busy: the buttons were disabled (the
    # decision) before the cell's idle status.
    disabled = button.updated_with("disabled", True)
    assert disabled, "the clicked button was never disabled"
    idle, final = turn.idle, turn.final
    assert idle is not None and final is not None
    assert disabled[0].seq < idle.seq
    assert final.seq < idle.seq
    assert not turn.errors, turn.describe()

    plain = turn.plain
    assert f"Permission: {label} (chosen by user)" in plain, turn.describe()
    assert "Stop reason: end_turn" in plain
    if label == "Allow once":
        assert utils_py.read_text() == REFACTORED_UTILS_PY
    else:
        assert utils_py.read_bytes() == UTILS_PY.encode()
        assert "was not changed" in plain


def test_cancel_button_ends_a_slow_turn(kernel: Kernel) -> None:
    turn = kernel.execute("%acp /slow", until=None)
    turn.wait(lambda t: SLOW_START in t.html_text())
    assert turn.busy
    cancel = turn.click("Cancel")
    turn.wait("final")

    plain = turn.plain
    assert "Stop reason: cancelled" in plain, turn.describe()
    assert SLOW_START in plain
    # The transcript replaced the view before the agent could have streamed it all:
    # the turn really stopped, it did not run to its end.
    assert SLOW_END not in plain and SLOW_FINISHED not in plain, plain
    assert turn.idle is not None and turn.final is not None
    assert turn.final.seq < turn.idle.seq  # busy until the (cancelled) turn ended
    assert cancel.updated_with("disabled", True), "Cancel was not disabled at the end"
    assert not turn.errors, turn.describe()


def test_cancel_answers_a_pending_permission(kernel: Kernel, workdir: Path) -> None:
    marker = workdir / "ran.txt"
    turn = kernel.execute(f"%acp /run touch {rel(kernel, marker)}", until=None)
    options = {label: turn.wait_button(label) for label in ("Allow once", "Reject")}
    assert turn.busy

    turn.click("Cancel")
    turn.wait("final")
    final = turn.final
    assert final is not None

    plain = turn.plain
    assert "permission: cancelled" in plain.lower(), turn.describe()
    assert "Stop reason: cancelled" in plain
    assert "(chosen by" not in plain  # nobody chose an option
    for label, button in options.items():
        disabled = button.updated_with("disabled", True)
        assert disabled, f"the {label!r} button was not disabled"
        assert disabled[0].seq < final.seq
    assert not marker.exists(), "the command ran although the permission was cancelled"
    assert not turn.errors, turn.describe()


def test_a_queued_prompt_runs_after_the_first(kernel: Kernel, utils_py: Path) -> None:
    # The agent and the session exist already (the fresh-kernel case is the next test).
    warm = kernel.execute("%acp hello", until="final")
    assert "Stop reason: end_turn" in warm.plain, warm.describe()
    check_queued(kernel, utils_py)


def test_prompts_queue_before_the_session_exists(fresh_kernel: Kernel) -> None:
    utils_py = fresh_kernel.cwd / "utils.py"
    utils_py.write_text(UTILS_PY)
    check_queued(fresh_kernel, utils_py)


def check_queued(kernel: Kernel, utils_py: Path) -> None:
    """``%acp --no-wait /slow`` then ``%acp --no-wait /read``: the second waits its turn."""
    first = kernel.execute("%acp --no-wait /slow", until="idle")
    second = kernel.execute(f"%acp --no-wait /read {rel(kernel, utils_py)}", until="idle")
    # --no-wait: both cells returned at once, while the first turn still streams.
    assert first.final is None and second.final is None
    first.wait("final")
    second.wait("final")
    first_final, second_final = first.final, second.final
    assert first_final is not None and second_final is not None
    assert second.idle is not None and second.idle.seq < first_final.seq

    # The second view said it was queued while the first turn ran.
    queued = [m for m in second.html_messages() if "Queued behind 1 turn" in html_value(m)]
    assert queued, "the second view never showed a queued status"
    assert queued[0].seq < first_final.seq

    # Its turn started only after the first ended: its tool call (the agent's first
    # update) appeared in the view after the first transcript...
    title = f"Read {rel(kernel, utils_py)}"
    shown = [m for m in second.html_messages() if title in html_value(m)]
    assert shown, "the second view never showed its tool call"
    assert shown[0].seq > first_final.seq
    assert second_final.seq > first_final.seq
    # ...and the agent got the second prompt only after answering the first.
    log = kernel.agent_log()
    _, slow_result, slow_answered = prompt_exchange(log, "/slow")
    read_sent, read_result, _ = prompt_exchange(log, f"/read {rel(kernel, utils_py)}")
    assert slow_answered is not None and slow_answered < read_sent
    assert slow_result is not None and slow_result.get("stopReason") == "end_turn"
    assert read_result is not None and read_result.get("stopReason") == "end_turn"

    # Both transcripts are complete.
    assert SLOW_FINISHED in first.plain and "Stop reason: end_turn" in first.plain
    assert (
        f"Read {rel(kernel, utils_py)}" in second.plain and "Stop reason: end_turn" in second.plain
    )
    assert "def is_big(n):" in second.plain


def test_a_prompt_is_never_taken_for_a_control(kernel: Kernel) -> None:
    log_before = len(kernel.agent_log())
    turn = kernel.execute("%acp status of the build", until="final")
    assert "status of the build" in turn.plain, turn.describe()
    assert "Stop reason: end_turn" in turn.plain
    prompt_exchange(kernel.agent_log(), "status of the build")  # really sent as a prompt

    before = len(kernel.agent_log())
    assert before > log_before
    status = kernel.execute("%acp --status", until="idle")
    kernel.settle()
    assert "Working directory:" in status.stdout, status.describe()
    assert "running" in status.stdout and "pid " in status.stdout
    # No turn: no view, no widget, no message to the agent.
    assert status.widget_display is None and not status.displays
    assert opened_during(kernel, status) == []
    assert not status.errors
    log = kernel.agent_log()
    assert not any(message.get("method") == "session/prompt" for _, message in log[before:]), (
        "%acp --status sent a prompt"
    )
