"""A refusal meant for the user reads as its one sentence in the cell, not as a traceback
through the package's frames; the cell still fails, so Run All stops there."""

from __future__ import annotations

from .conftest import Kernel


def test_a_lab_step_out_of_order_shows_one_sentence_and_fails_the_cell(kernel: Kernel) -> None:
    # A learner's refused step used to show forty lines of the stepper's frames above it.
    run = kernel.execute(
        "import acp_notebook.lab\n"
        'lab = await acp_notebook.lab.connect("demo")\n'
        "try:\n"
        '    await lab.prompt("/think")\n'
        "finally:\n"
        "    await lab.close()\n",
        allow_stdin=False,
    )
    [error] = run.errors
    assert error.content["ename"] == "StepError"
    assert error.content["traceback"] == [
        "StepError: session/prompt before initialize: the connection is not initialized "
        "yet — call initialize() first."
    ]


def test_a_control_that_fails_shows_one_sentence_and_fails_the_cell(kernel: Kernel) -> None:
    run = kernel.execute(
        'import acp_notebook as acp\nacp.answer("default/perm-999", "Allow once")',
        allow_stdin=False,
    )
    [error] = run.errors
    assert error.content["ename"] == "ControlFailed"
    [line] = error.content["traceback"]
    assert line.startswith("ControlFailed: ") and "perm-999" in line
