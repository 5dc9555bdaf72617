"""A small supervisor between the client and each process it starts (Linux only).

    python -S -I supervisor.py PARENT_PID ARGV...

It runs ``ARGV`` as its only child and makes sure nothing started from it outlives the
client, however the client ends (SIGKILL of the kernel included) and however the
descendants tried to leave (double fork and ``setsid()`` leave the process group and the
session, which is all the client's own clean-up can see):

* ``PR_SET_CHILD_SUBREAPER``: an orphaned descendant is re-parented to the supervisor,
  not to init, so it stays a descendant that can be found;
* ``PR_SET_PDEATHSIG``: the kernel signals the supervisor when the client dies;
* when the client dies, or the child exits, every descendant is killed (SIGTERM, then
  SIGKILL), and the supervisor ends the way the child did (same exit code, or the same
  signal), so the client reads the child's fate as before;
* SIGTERM, SIGINT and SIGHUP are passed to every descendant.

Standard library only, and started with ``-S -I`` (no site, no user paths), so it costs a
few milliseconds; it is run by file path and imports nothing of the package.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
#: The signal the kernel sends when the client dies (distinct from a SIGTERM we forward).
PARENT_DIED = signal.SIGUSR1
#: How long descendants get between SIGTERM and SIGKILL once the end has come.
GRACE = 1.0


def descendants(root: int) -> list[int]:
    """Live descendants of ``root`` (from /proc), children first."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(name))
    found: list[int] = []
    queue = [root]
    while queue:
        for pid in children.get(queue.pop(), []):
            found.append(pid)
            queue.append(pid)
    return found


def signal_all(sig: int) -> None:
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def reap() -> None:
    """Collect every child that has exited (re-parented orphans included)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_everything() -> None:
    signal_all(signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    while descendants(os.getpid()) and time.monotonic() < deadline:
        reap()
        time.sleep(0.02)
    while descendants(os.getpid()):
        signal_all(signal.SIGKILL)
        reap()
        time.sleep(0.01)
    reap()


def end_like(status: int) -> None:
    """Exit as the child did."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # the signal was blocked or ignored
    os._exit(os.waitstatus_to_exitcode(status))


def main(argv: list[str]) -> None:
    parent, command = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, PARENT_DIED, 0, 0, 0)

    def parent_died(*_: object) -> None:
        kill_everything()
        os._exit(128 + signal.SIGKILL)

    signal.signal(PARENT_DIED, parent_died)
    if os.getppid() != parent:  # the client died before the death signal was armed
        parent_died()
    child = os.fork()
    if child == 0:
        for sig in (PARENT_DIED, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
            os._exit(127)
    # The supervisor keeps no end of the client's pipes: only the child talks on them.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: signal_all(number))
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            kill_everything()
            end_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
