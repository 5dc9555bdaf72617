"""Terminal commands that try to outlive their terminal (issue 11, orphans): a job that
double-forked and called ``setsid()`` still dies on release, on the session's end and when
the client is killed; a plain background job (``cmd &``) outlives the shell that started it
until then, and the shell's exit is reported at once. Linux: the lingering supervisor."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from acp_notebook.client.terminals import TerminalManager
from acp_notebook.protocol.process import SUPERVISED, supervised

from ..hostile.test_orphans import ESCAPING_AGENT as ESCAPE
from ..hostile.test_orphans import alive
from .helpers import SAFETY
from .test_terminals import create, exit_status, output, ref

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not SUPERVISED, reason="the lingering supervisor is Linux-only"),
    pytest.mark.timeout(60),
]


async def until(predicate: Callable[[], bool], what: str) -> None:
    with anyio.fail_after(SAFETY):
        while not predicate():
            await anyio.sleep(0.02)
    assert predicate(), what


async def start_escapee(manager: TerminalManager, pid_file: Path) -> tuple[str, int]:
    """A terminal whose command left an escapee (its stdin is empty, so it exits 0 at
    once); the terminal's id and the escapee's pid."""
    terminal_id = await create(manager, sys.executable, "-c", ESCAPE, str(pid_file))
    assert await exit_status(manager, terminal_id) == {"exitCode": 0, "signal": None}
    await until(pid_file.exists, "the escapee never started")
    pid = int(pid_file.read_text())
    assert alive(pid)
    return terminal_id, pid


async def test_an_escaped_job_dies_when_its_terminal_is_released(root: Path) -> None:
    async with TerminalManager([root], root, kill_grace=1.0) as manager:
        terminal_id, pid = await start_escapee(manager, root / "escapee.pid")
        await manager.release(ref(terminal_id))
        await until(lambda: not alive(pid), "the escapee outlived terminal/release")
        snap = manager.snapshot(terminal_id)
        assert (snap.exit_code, snap.signal, snap.released) == (0, None, True)


async def test_an_escaped_job_dies_when_the_session_ends(root: Path) -> None:
    async with TerminalManager([root], root, kill_grace=1.0) as manager:
        _, pid = await start_escapee(manager, root / "escapee.pid")
    await until(lambda: not alive(pid), "the escapee outlived the session's terminals")


async def test_a_background_job_outlives_the_shell_until_release(root: Path) -> None:
    async with TerminalManager([root], root, kill_grace=1.0) as manager:
        terminal_id = await create(manager, "sh", "-c", "sleep 30 & echo $! > job.pid; echo up")
        # The shell's exit is reported while its job runs on.
        assert await exit_status(manager, terminal_id) == {"exitCode": 0, "signal": None}
        await until((root / "job.pid").exists, "the job's pid was never written")
        job = int((root / "job.pid").read_text())
        result = await output(manager, terminal_id)
        assert result["exitStatus"] == {"exitCode": 0, "signal": None}
        assert alive(job)
        await manager.release(ref(terminal_id))
        assert not alive(job)


def test_an_escaped_job_dies_when_the_client_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "escapee.pid"
    client = textwrap.dedent(
        f"""
        import sys, anyio
        from acp_notebook.client.terminals import TerminalManager
        async def main():
            root = {str(tmp_path)!r}
            async with TerminalManager([root], root) as manager:
                await manager.create(
                    {{"sessionId": "s", "command": sys.executable,
                      "args": ["-c", {ESCAPE!r}, {str(pid_file)!r}]}}
                )
                await anyio.sleep(120)
        anyio.run(main)
        """
    )
    log = tmp_path / "client.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen([sys.executable, "-c", client], stderr=stderr)
    try:

        async def escapee() -> int:
            # A client that died first ends the wait, with what it said.
            await until(lambda: pid_file.exists() or process.poll() is not None, "")
            assert pid_file.exists(), f"the client exited with {process.returncode} " + (
                f"before its escapee started: {log.read_text()[-2000:]}"
            )
            return int(pid_file.read_text())

        pid = anyio.run(escapee)
        assert alive(pid)
        os.kill(process.pid, signal.SIGKILL)  # as a kernel is killed: no clean-up runs
        process.wait(SAFETY)
        anyio.run(until, lambda: not alive(pid), "the escapee outlived the killed client")
    finally:
        process.kill()
        process.wait()


async def test_a_command_gets_default_signal_handling_under_the_supervisor(root: Path) -> None:
    # Python ignores SIGPIPE; a command must not inherit that (`yes | head` ends quietly).
    async with TerminalManager([root], root) as manager:
        terminal_id = await create(manager, "yes | head -n 2")
        assert await exit_status(manager, terminal_id) == {"exitCode": 0, "signal": None}
        assert (await output(manager, terminal_id))["output"] == "y\ny\n"


@pytest.mark.parametrize("linger", [True, False], ids=["terminal", "agent"])
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_the_supervisor_ends_as_its_child_was_killed_and_reports_nothing_else(
    linger: bool, sig: signal.Signals
) -> None:
    # SIGKILL takes no handler: the supervisor once crashed trying to reset it, exited 1
    # and put a traceback after its report, which a client reading both at once misread.
    argv = supervised(
        ["sh", "-c", f"kill -{int(sig)} $$"], os.environ, linger=0.2 if linger else None
    )
    done = subprocess.run(argv, capture_output=True, timeout=SAFETY, check=False)
    assert done.returncode == -sig
    assert done.stderr == (f"{-sig}\n".encode() if linger else b"")
