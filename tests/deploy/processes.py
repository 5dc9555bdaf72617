"""What a kernel started on this machine: its descendants, read from /proc with their
start times (so a reused pid is never taken for one of them), and the notebook tools'
relay endpoints it made (a directory in the temp directory naming the kernel's pid)."""

from __future__ import annotations

import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from acp_notebook.notebook.tools.endpoint import DIRECTORY_PREFIX

#: Safety net for the processes of a stopped kernel to go (seconds).
GONE_S = 60.0


@dataclass(frozen=True)
class Proc:
    pid: int
    #: Jiffies since boot when it started (field 22 of /proc/PID/stat).
    start: int
    cmdline: str

    def alive(self) -> bool:
        return _start(self.pid) == self.start


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces.
    return raw[raw.rindex(")") + 2 :].split()


def _start(pid: int) -> int | None:
    fields = _stat(pid)
    return int(fields[19]) if fields else None


def process(pid: int) -> Proc | None:
    """The live process ``pid``, or None once it is gone."""
    start = _start(pid)
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return None
    return None if start is None else Proc(pid, start, cmdline.strip())


def descendants(root: int) -> list[Proc]:
    """Every live process below ``root`` (not ``root`` itself)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (fields := _stat(int(entry))) is not None:
            children.setdefault(int(fields[1]), []).append(int(entry))
    found: list[Proc] = []
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        if (proc := process(pid)) is not None:
            found.append(proc)
    return found


def kernel_processes(kernel_pid: int) -> list[Proc]:
    """The kernel ``kernel_pid`` and every live process below it."""
    kernel = process(kernel_pid)
    assert kernel is not None, f"the kernel {kernel_pid} is not running"
    return [kernel, *descendants(kernel_pid)]


def endpoints(kernel_pid: int) -> list[Path]:
    """The relay endpoint directories the kernel ``kernel_pid`` made."""
    found = []
    for path in Path(tempfile.gettempdir()).glob(f"{DIRECTORY_PREFIX}*"):
        try:
            if int((path / "pid").read_text()) == kernel_pid:
                found.append(path)
        except (OSError, ValueError):
            continue
    return found


def left_behind(procs: list[Proc], dirs: list[Path]) -> tuple[list[Proc], list[Path]]:
    """What of ``procs`` and ``dirs`` is still there once the processes went or the safety
    net ran out (a process that is not our child cannot be awaited: its /proc entry is
    polled). ``procs`` holds the kernel that removes ``dirs``, so once they went, the dirs
    left stay: waiting longer for them would only wait out the safety net."""
    deadline = time.monotonic() + GONE_S
    while (procs := [p for p in procs if p.alive()]) and time.monotonic() < deadline:
        time.sleep(0.2)
    return procs, [d for d in dirs if d.exists()]
