"""MainThreadRunner: jobs from other threads run on the main thread — from the main
loop's callbacks, or inside wait()/drain() when the main thread is blocked."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any

import pytest

from acp_notebook.notebook.tools import Approved, MainThreadRunner, ToolContext, kernel_tools


def _thread_name() -> str:
    return threading.current_thread().name


def _from_another_thread(
    runner: MainThreadRunner, *jobs: object
) -> list[concurrent.futures.Future[object]]:
    futures: list[concurrent.futures.Future[object]] = []
    thread = threading.Thread(
        target=lambda: futures.extend(runner.submit(job) for job in jobs)  # type: ignore[arg-type]
    )
    thread.start()
    thread.join()
    return futures


def test_a_job_runs_on_the_main_loop_while_it_awaits() -> None:
    async def main() -> str:
        runner = MainThreadRunner()  # captures this (the main thread's) running loop
        [future] = _from_another_thread(runner, _thread_name)
        return str(await asyncio.wrap_future(future))

    assert asyncio.run(main()) == "MainThread"


def test_wait_runs_jobs_while_the_main_thread_blocks() -> None:
    runner = MainThreadRunner(loop=None)
    done: concurrent.futures.Future[None] = concurrent.futures.Future()
    ran: list[str] = []

    def job() -> None:
        ran.append(_thread_name())
        done.set_result(None)

    _from_another_thread(runner, job)
    assert runner.wait(done, timeout=60)
    assert ran == ["MainThread"]


def test_wait_says_when_its_future_is_not_done() -> None:
    runner = MainThreadRunner(loop=None)
    assert runner.wait(concurrent.futures.Future(), timeout=0.01) is False


def test_a_job_cancelled_before_its_turn_never_runs() -> None:
    runner = MainThreadRunner(loop=None)
    ran: list[str] = []
    [future] = _from_another_thread(runner, lambda: ran.append("ran"))
    future.cancel()
    assert runner.drain() == 1
    assert ran == []


def test_a_failing_job_fails_its_future_not_the_main_thread() -> None:
    runner = MainThreadRunner(loop=None)

    def interrupted() -> None:
        raise KeyboardInterrupt

    [future] = _from_another_thread(runner, interrupted)
    runner.drain()
    with pytest.raises(KeyboardInterrupt):
        future.result(0)


def test_jobs_never_run_on_another_thread() -> None:
    runner = MainThreadRunner(loop=None)
    errors: list[BaseException] = []

    def drain_elsewhere() -> None:
        try:
            runner.drain()
        except RuntimeError as exc:
            errors.append(exc)

    thread = threading.Thread(target=drain_elsewhere)
    thread.start()
    thread.join()
    assert [str(e) for e in errors] == [
        "MainThreadRunner.drain() runs jobs on the main thread only."
    ]
    made: list[BaseException] = []
    thread = threading.Thread(target=lambda: _make(made))
    thread.start()
    thread.join()
    assert [str(e) for e in made] == ["A MainThreadRunner must be made on the main thread."]


def _make(errors: list[BaseException]) -> None:
    try:
        MainThreadRunner()
    except RuntimeError as exc:
        errors.append(exc)


class _Untouchable:
    """A shell that must not be used: any attribute read is recorded."""

    def __init__(self) -> None:
        self.read: list[str] = []

    def __getattr__(self, name: str) -> object:
        self.read.append(name)
        raise AttributeError(name)


def test_run_code_withdrawn_before_its_job_starts_never_runs_it() -> None:
    # The agent withdraws its call (its turn was cancelled) while the kernel's main thread
    # is still busy: the queued code must not run later, when the main thread gets to it.
    submitted = threading.Event()

    class Recording(MainThreadRunner):
        def submit(self, func: Any, *args: Any) -> concurrent.futures.Future[Any]:
            future = super().submit(func, *args)
            submitted.set()
            return future

    runner = Recording(loop=None)  # jobs run only in drain(): the main thread is busy
    shell = _Untouchable()
    shown: list[object] = []

    async def allow(request: object) -> Approved:
        return Approved("the test")

    context = ToolContext("s", shell, runner, allow, show=shown.append)  # type: ignore[arg-type]
    run_code = kernel_tools().get("run_code")
    assert run_code is not None
    outcome: list[str] = []

    async def withdraw() -> None:
        task = asyncio.ensure_future(run_code.call(context, {"code": "ran = 1"}))
        while not submitted.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            outcome.append("withdrawn")

    agent_loop = threading.Thread(target=lambda: asyncio.run(withdraw()))
    agent_loop.start()
    agent_loop.join(timeout=30)
    assert outcome == ["withdrawn"]

    assert runner.drain() == 1  # the main thread gets to the job: it is skipped
    assert shell.read == [] and shown == []
