"""Agents that cannot start, and agents (and their terminals) that must not outlive the
kernel or the extension. Linux only for the process checks (/proc)."""

from __future__ import annotations

import os
import re
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from .conftest import Kernel

pytestmark = pytest.mark.kernel

needs_proc = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="process checks read /proc"
)


@dataclass(frozen=True)
class Proc:
    """A process identified by pid and start time (a pid may be reused)."""

    pid: int
    start: str
    cmdline: str

    @classmethod
    def read(cls, pid: int) -> Proc | None:
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] in ("Z", "X"):  # exited; only its parent's wait is missing
            return None
        return cls(pid, fields[19], cmdline.strip())

    @property
    def alive(self) -> bool:
        now = Proc.read(self.pid)
        return now is not None and now.start == self.start


def processes(marker: str) -> list[Proc]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            proc = Proc.read(int(name))
            if proc is not None and marker in proc.cmdline:
                found.append(proc)
    return found


def agent_process(kernel: Kernel) -> Proc:
    """The demo agent of this kernel, from the pid ``%acp --status`` prints."""
    status = kernel.text("%acp --status")
    match = re.search(r"demo agent.*\bpid (\d+)", status)
    assert match, status
    proc = Proc.read(int(match.group(1)))
    assert proc is not None and "acp_notebook.agents.demo" in proc.cmdline, (status, proc)
    return proc


def wait_gone(procs: list[Proc], timeout: float = 30.0) -> list[Proc]:
    """The processes still alive after waiting up to ``timeout`` (a safety net)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = [p for p in procs if p.alive]
        if not alive:
            return []
        time.sleep(0.1)
    return [p for p in procs if p.alive]


def works(kernel: Kernel, prompt: str = "hello again") -> None:
    turn = kernel.execute(f"%acp {prompt}", until="final")
    assert prompt in turn.plain and "Stop reason: end_turn" in turn.plain, turn.describe()
    assert not turn.errors, turn.describe()


# ---------------------------------------------------------------------- start failures


def one_sentence(kernel: Kernel, code: str) -> str:
    turn = kernel.execute(code, until="final")
    kernel.settle()
    assert not turn.errors, turn.describe()  # no traceback
    everything = turn.describe()
    assert "Traceback" not in everything, everything
    plain = turn.plain.strip()
    assert plain.startswith("Error: "), plain
    assert "\n" not in plain, f"more than one line: {plain!r}"
    assert not turn.stderr, turn.stderr
    return plain


def test_an_agent_that_is_not_installed(kernel: Kernel) -> None:
    plain = one_sentence(kernel, '%acp -a "definitely-not-an-agent-xyz" hello')
    assert "definitely-not-an-agent-xyz" in plain and "not found" in plain, plain
    works(kernel)


def test_an_agent_that_exits_at_once(kernel: Kernel) -> None:
    # The inner double quotes are escaped: the option value is one shell-quoted string.
    code = r"""%acp -a "python -c 'import sys; sys.stderr.write(\"boom\\n\"); sys.exit(3)'" hello"""
    plain = one_sentence(kernel, code)
    assert "code 3" in plain and "boom" in plain, plain
    works(kernel)


# ---------------------------------------------------------------------- cleanup


@needs_proc
def test_kernel_shutdown_stops_the_agent_and_its_terminals(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    marker = f"{37 + uuid.uuid4().int % 1000 / 1000:.3f}"  # a unique `sleep` duration
    turn = kernel.execute(f"%acp -p allow --no-wait /run sleep {marker}", until="idle")
    # The turn goes on: the command runs in a terminal of the agent's session.
    terminal = kernel.wait_for(
        lambda: [p for p in processes(f"sleep {marker}") if p.cmdline.startswith("sleep")],
        "the terminal's `sleep` process",
    )
    agent = agent_process(kernel)
    assert turn.final is None, "the turn ended before the kernel shut down"

    kernel.shutdown()
    assert not kernel.km.is_alive()

    # Stopped by the kernel on its way out, not by themselves later: the sleep would
    # run for 37 s, and a demo agent that only saw its stdin close drains for 10 s
    # (DRAIN_SECONDS) first. The grace only covers signal delivery.
    left = wait_gone([agent, *terminal], timeout=3.0)
    assert not left, f"still running after the kernel shut down: {left}"


@needs_proc
def test_unload_stops_the_agent_and_reload_works(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    works(kernel, "hello")
    agent = agent_process(kernel)

    unloaded = kernel.execute("%unload_ext acp_notebook", until="idle")
    assert not unloaded.errors, unloaded.describe()
    assert not wait_gone([agent]), "the agent outlived %unload_ext"
    gone = kernel.execute("%acp hello", until="idle")
    assert "not found" in gone.stderr or gone.errors, gone.describe()

    kernel.text("%load_ext acp_notebook")
    works(kernel, "hello after reload")
    again = agent_process(kernel)
    assert again.pid != agent.pid or again.start != agent.start
