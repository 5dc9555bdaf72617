"""run_code's execution, in an in-process IPython shell: the user's namespace, captured
and bounded output, tracebacks of the agent's code only, and no trace in the history."""

from __future__ import annotations

import _thread
import signal
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from traitlets.config import Config

from acp_notebook.notebook.tools.execute import run
from acp_notebook.notebook.tools.runner import MainThreadRunner


@pytest.fixture(scope="module")
def shell() -> Iterator[Any]:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    try:
        yield shell
    finally:
        InteractiveShell.clear_instance()


def test_code_runs_in_the_user_namespace_and_gives_its_last_value(shell: Any) -> None:
    count, cells = shell.execution_count, list(shell.user_ns["In"])
    result = run(shell, "answer = 21\nanswer * 2")
    assert result.ok
    assert result.value == "42"
    assert shell.user_ns["answer"] == 21
    assert (shell.execution_count, shell.user_ns["In"]) == (count, cells)
    assert shell.user_ns.get("_") != 42  # the displayhook was not used


def test_ipython_syntax_works_as_in_a_cell(shell: Any) -> None:
    result = run(shell, "magic_marker = 1\n%who_ls")
    assert result.ok
    assert "'magic_marker'" in (result.value or "")


def test_streams_and_displays_are_captured(shell: Any) -> None:
    code = (
        "import sys\nfrom IPython.display import display\n"
        "print('out')\nprint('err', file=sys.stderr)\ndisplay({'shown': 1})"
    )
    result = run(shell, code)
    assert (result.stdout, result.stderr, result.displays) == ("out\n", "err\n", ("{'shown': 1}",))
    assert result.value is None


def test_a_flood_of_output_is_cut_with_a_note(shell: Any) -> None:
    result = run(shell, "print('x' * 1_000_000)")
    assert len(result.stdout) == 20_000
    assert result.notes == ("stdout was cut to its first 20,000 of 1,000,001 characters",)


def test_an_error_gives_the_agents_traceback_and_leaves_the_users_last_error(shell: Any) -> None:
    before = getattr(sys, "last_value", None)
    result = run(shell, "def explode():\n    return {}['missing']\n\nexplode()")
    assert not result.ok
    assert result.error is not None
    assert result.error.startswith('Traceback (most recent call last):\n  File "<run_code ')
    assert "    return {}['missing']" in result.error
    assert result.error.endswith("KeyError: 'missing'\n")
    assert "execute.py" not in result.error
    assert getattr(sys, "last_value", None) is before


def test_a_syntax_error_and_an_exit_are_reported_not_raised(shell: Any) -> None:
    syntax = run(shell, "def broken(:")
    assert syntax.error is not None and "SyntaxError" in syntax.error
    leaving = run(shell, "raise SystemExit(3)")
    assert leaving.error is not None and leaving.error.endswith("SystemExit: 3\n")


def test_figures_the_code_draws_are_returned_and_closed(shell: Any) -> None:
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    result = run(shell, "import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.figure()")
    # Two figures drawn, the second also the value: two images, not three.
    assert [png[:4] for png in result.images] == [b"\x89PNG", b"\x89PNG"]
    assert result.value is not None and result.value.startswith("<Figure size")
    assert sys.modules["matplotlib.pyplot"].get_fignums() == []


def test_a_huge_traceback_keeps_its_end(shell: Any) -> None:
    result = run(shell, "raise ValueError('x' * 100_000 + ' the end')")
    assert result.error is not None and len(result.error) == 20_000
    assert result.error.startswith("…")
    assert result.error.endswith("x the end\n")
    assert [note.split(" of ")[0] for note in result.notes] == [
        "the traceback was cut to its last 20,000"
    ]


def test_code_interrupted_from_another_thread_ends_as_a_kernel_interrupt_would(
    shell: Any,
) -> None:
    # `-t` did not bound an approved run_code: only the kernel's interrupt freed it.
    runner = MainThreadRunner(loop=None)
    started = threading.Event()
    shell.user_ns["started"] = started
    with runner.interruptible("s1") as interruption:

        def interrupt_once_running() -> None:
            started.wait()
            runner.interrupt("s1", "the turn's time limit (-t) ran out")

        threading.Thread(target=interrupt_once_running).start()
        result = run(shell, "import time\nstarted.set()\ntime.sleep(600)\nafter = 1", interruption)

    assert result.error is not None and "KeyboardInterrupt" in result.error
    assert result.notes == ("it was interrupted because the turn's time limit (-t) ran out",)
    assert "after" not in shell.user_ns
    # Whose code it is counts, and only code running now can be interrupted.
    assert not runner.interrupt("s1", "late")
    # The kernel's own SIGINT handler is back.
    assert signal.getsignal(signal.SIGINT) is not interruption._on_signal


def test_an_interrupt_whose_signal_lands_just_before_a_sleep_still_ends_it(
    shell: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An interrupted run_code slept on until pytest's 300 s timeout: its SIGINT landed after
    # the main thread let go of the GIL for time.sleep but before the sleep began.
    real_kill = signal.pthread_kill
    main = threading.main_thread()

    def lands_before_the_sleep(thread: int, signum: int) -> None:
        monkeypatch.setattr(signal, "pthread_kill", real_kill)
        _thread.interrupt_main(signum)  # the handler is due, but nothing wakes the sleep

    monkeypatch.setattr(signal, "pthread_kill", lands_before_the_sleep)
    runner = MainThreadRunner(loop=None)
    started, ended, stuck = threading.Event(), threading.Event(), threading.Event()
    shell.user_ns["started"] = started

    def interrupt_once_sleeping() -> None:
        started.wait()
        # No event says the main thread is inside the sleep: its frame on that line while
        # this thread holds the GIL does (nothing checks for signals until the sleep ends).
        while not _on_line(main, "<run_code", 3):
            time.sleep(0.001)
        runner.interrupt("s1", "the turn was cancelled")
        if not ended.wait(60):  # still asleep: wake it, or the test would wait 600 s
            stuck.set()
            real_kill(main.ident or 0, signal.SIGINT)

    with runner.interruptible("s1") as interruption:
        threading.Thread(target=interrupt_once_sleeping).start()
        result = run(shell, "import time\nstarted.set()\ntime.sleep(600)\nlate = 1", interruption)
        ended.set()

    assert not stuck.is_set(), "the interrupt did not end the sleep"
    assert result.error is not None and "KeyboardInterrupt" in result.error
    assert result.notes == ("it was interrupted because the turn was cancelled",)
    assert "late" not in shell.user_ns


def _on_line(thread: threading.Thread, filename: str, line: int) -> bool:
    frame = sys._current_frames().get(thread.ident or 0)
    return (
        frame is not None
        and frame.f_code.co_filename.startswith(filename)
        and frame.f_lineno == line
    )


def test_an_interrupt_for_another_session_leaves_the_code_alone(shell: Any) -> None:
    runner = MainThreadRunner(loop=None)
    with runner.interruptible("s1") as interruption:
        assert not runner.interrupt("s2", "not yours")
        result = run(shell, "x_of_s1 = 7", interruption)
    assert result.ok and shell.user_ns["x_of_s1"] == 7 and result.notes == ()
