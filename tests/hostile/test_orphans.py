"""Nothing an agent starts outlives the client, even a process that double-forked and
called ``setsid()`` to leave the agent's process group and session (issue 11, orphans).
Linux: the supervisor between the client and the agent (protocol/supervisor.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest

from acp_notebook.protocol.process import SUPERVISED, AgentStartError, open_agent_process
from acp_notebook.protocol.tree import Stopped

from ..cli.test_cli import CLI
from .test_cli_payloads import hostile

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor is Linux-only")

SAFETY = 30.0  # seconds; a safety net, never a performance bound

#: An "agent" that starts an escapee (double fork + setsid) writing its pid to argv[1],
#: then waits for its stdin to end.
ESCAPING_AGENT = textwrap.dedent(
    """
    import os, sys, time
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            with open(sys.argv[1] + ".tmp", "w") as f:
                f.write(str(os.getpid()))
            os.rename(sys.argv[1] + ".tmp", sys.argv[1])
            time.sleep(120)
        os._exit(0)
    sys.stdin.read()
    """
)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(") ")[1][0] != "Z"
    except OSError:
        return False


def wait_for(predicate, what: str) -> None:
    deadline = time.monotonic() + SAFETY
    while not predicate():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def escapee(pid_file: Path) -> int:
    wait_for(pid_file.exists, "the escapee never started")
    pid = int(pid_file.read_text())
    assert alive(pid)
    return pid


def test_an_escaped_grandchild_dies_when_the_agent_is_shut_down(tmp_path: Path):
    pid_file = tmp_path / "escapee.pid"

    async def main() -> int:
        async with open_agent_process([sys.executable, "-c", ESCAPING_AGENT, str(pid_file)]):
            return await anyio.to_thread.run_sync(escapee, pid_file)

    pid = anyio.run(main)
    wait_for(lambda: not alive(pid), "the escapee outlived the agent's shutdown")


#: ESCAPING_AGENT, but it and its escapee ignore SIGTERM and its stdin's end.
STUBBORN_AGENT = ESCAPING_AGENT.replace(
    "import os, sys, time",
    "import os, signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)",
).replace("sys.stdin.read()", "time.sleep(120)")


def test_an_escapee_that_ignores_sigterm_dies_and_the_shutdown_says_what_it_ended(
    tmp_path: Path,
):
    """Seen: the SIGKILL of the agent's group killed its supervisor first, and an escapee
    that ignored SIGTERM lived on, re-parented to init, while the shutdown reported
    nothing left."""
    pid_file = tmp_path / "escapee.pid"

    async def main() -> tuple[int, Stopped]:
        argv = [sys.executable, "-c", STUBBORN_AGENT, str(pid_file)]
        async with open_agent_process(argv, name="stubborn") as agent:
            pid = await anyio.to_thread.run_sync(escapee, pid_file)
            return pid, await agent.shutdown()

    pid, stopped = anyio.run(main)
    assert not alive(pid)
    assert stopped.forced and stopped.gone and pid in stopped.pids
    assert stopped.sentence() == (
        f"Stopped `stubborn`: {len(stopped.pids)} processes ended "
        f"(pids {', '.join(map(str, stopped.pids))}, after SIGKILL)."
    )


def test_an_escaped_grandchild_dies_when_the_client_is_killed(tmp_path: Path):
    pid_file = tmp_path / "escapee.pid"
    client = textwrap.dedent(
        f"""
        import sys, anyio
        from acp_notebook.protocol.process import open_agent_process
        async def main():
            async with open_agent_process([sys.executable, "-c", {ESCAPING_AGENT!r}, {str(pid_file)!r}]):
                await anyio.sleep(120)
        anyio.run(main)
        """
    )
    process = subprocess.Popen([sys.executable, "-c", client])
    try:
        pid = escapee(pid_file)
        os.kill(process.pid, signal.SIGKILL)  # as a kernel is killed: no clean-up runs
        process.wait(SAFETY)
        wait_for(lambda: not alive(pid), "the escapee outlived the killed client")
    finally:
        process.kill()
        process.wait()


def test_a_missing_or_unexecutable_agent_is_still_reported_as_such(tmp_path: Path):
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")

    async def start(argv: list[str]) -> None:
        async with open_agent_process(argv):
            pass

    with pytest.raises(AgentStartError, match="was not found on PATH"):
        anyio.run(start, ["no-such-agent-anywhere"])
    with pytest.raises(AgentStartError, match="is not executable"):
        anyio.run(start, [str(script)])


SIGNALLED = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]


def _default_dispositions() -> None:
    # A command started in the background (or under nohup) inherits SIGINT (SIGHUP) ignored,
    # and Python keeps an inherited "ignore": the CLI is started as from a terminal.
    for sig in SIGNALLED:
        signal.signal(sig, signal.SIG_DFL)


@pytest.mark.parametrize("sig", SIGNALLED)
def test_the_agent_and_its_escapees_die_when_the_command_line_is_signalled(tmp_path: Path, sig):
    pid_file = tmp_path / "pids"
    process = subprocess.Popen(
        [*CLI, "run", f"escape {pid_file}", "--agent", hostile()],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=_default_dispositions,
    )
    try:
        wait_for(pid_file.exists, "the escapee never started")
        pids = [int(pid) for pid in pid_file.read_text().split()]
        assert all(alive(pid) for pid in pids)
        os.kill(process.pid, sig)
        process.wait(SAFETY)
        wait_for(lambda: not any(alive(pid) for pid in pids), "a process outlived the CLI")
    finally:
        process.kill()
        process.wait()
