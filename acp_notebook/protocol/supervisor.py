"""A small supervisor between the client and each process it starts (Linux only).

    python -S -I supervisor.py [CONFINEMENT] PARENT_PID ARGV...                 (an agent)
    python -S -I supervisor.py --linger GRACE [CONFINEMENT] PARENT_PID ARGV...  (a terminal's command)

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

``--linger`` changes what the child's exit means, for a terminal: agents run ``cmd &``
and builds start servers, which must outlive the shell that started them (spec: a
terminal's command has exited when its process has; its background jobs are the agent's
business until it releases the terminal). The child's stderr is its stdout (one output
pipe); the supervisor's own stderr carries one line, the child's exit code (negative: the
signal that killed it), written the moment the child exits. Then the supervisor lingers
while any descendant lives, and ends them all (SIGTERM, ``GRACE`` seconds, SIGKILL) when
told to (SIGTERM, SIGINT or SIGHUP: release, kill, the session's end) or when the client
dies. It ends on its own once no descendant is left.

``CONFINEMENT`` (see ``sandbox.py``, which writes it) confines the child before its
``exec``, and so every descendant: ``--landlock`` (``landlock.py``, loaded from beside this
file) or ``--bwrap`` (the child runs under bubblewrap), then ``--write PATH`` for each
place it may write and, for no network but some ports, ``--offline`` and ``--port N``
for each. If the confinement cannot be applied the child does not run: it says why on
stderr and exits 126.

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
    table = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", encoding="utf-8", errors="replace") as handle:
                stat = handle.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1:
            table.append((int(name), fields[0], int(fields[1])))
    return live_below(root, table)


def live_below(root: int, table: list[tuple[int, str, int]]) -> list[int]:
    """The live processes below ``root`` in a /proc scan of ``(pid, state, parent)``.

    The tree is followed through zombies: the scan is not one instant, so a process read
    before its parent exited still names that parent, which reads as a zombie (``Z``) by the
    time it is reached — skipping it would lose a live double-forked job re-parented a
    moment later, and the lingering supervisor would end it as if nothing were left.
    """
    children: dict[int, list[tuple[int, bool]]] = {}
    for pid, state, parent in table:
        children.setdefault(parent, []).append((pid, state != "Z"))
    found: list[int] = []
    queue = [root]
    while queue:
        for pid, live in children.get(queue.pop(), []):
            if live:
                found.append(pid)
            queue.append(pid)
    return found


def has_children() -> bool:
    """Whether any child is left (an exited one not yet reaped included). Without one no
    descendant lives: as a subreaper, the supervisor inherits every orphan, so each live
    descendant has a live ancestor among its children; the /proc scans are skipped."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    return True


def any_descendant(reaped: list[tuple[int, int]]) -> bool:
    """Whether a descendant lives, decided without a /proc scan: every child that has
    exited is reaped first (added to ``reaped``), so a child left is a live one (or one
    exiting right now, whose SIGCHLD follows), and as a subreaper the supervisor has a
    live child whenever any descendant lives (see :func:`has_children`).

    A scan cannot decide it: ``/proc`` is listed first and read after, so a job forked
    after the listing, whose parent then exited (read as a zombie with nothing below it),
    would be missed, and the lingering supervisor would end a job whose terminal is still
    held."""
    reaped += reap()
    return has_children()


def signal_all(sig: int) -> None:
    for pid in descendants(os.getpid()):
        with contextlib.suppress(OSError):
            os.kill(pid, sig)


def reap() -> list[tuple[int, int]]:
    """Collect every child that has exited (re-parented orphans included): their pids
    and wait statuses."""
    reaped: list[tuple[int, int]] = []
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped.append((pid, status))


def kill_everything(grace: float = GRACE) -> list[tuple[int, int]]:
    """SIGTERM every descendant, SIGKILL what is left after ``grace`` seconds; what was
    reaped meanwhile."""
    reaped = reap()
    if not has_children():  # the usual end: the child exited and left nothing behind
        return reaped
    signal_all(signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any_descendant(reaped) and time.monotonic() < deadline:
        time.sleep(0.02)
    while any_descendant(reaped):
        signal_all(signal.SIGKILL)
        time.sleep(0.01)
    return reaped + reap()


def end_like(status: int) -> None:
    """Exit as the child did."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig not in (signal.SIGKILL, signal.SIGSTOP):  # those two take no handler
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
        os.kill(os.getpid(), sig)
        os._exit(128 + sig)  # the signal was blocked or ignored
    os._exit(os.waitstatus_to_exitcode(status))


RESET = tuple(getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name))


class Confinement:
    """What the child may write and connect to, as the options said."""

    def __init__(self) -> None:
        self.mechanism = ""
        self.writable: list[str] = []
        self.ports: list[int] | None = None

    def read(self, argv: list[str]) -> list[str]:
        """Take the confinement options off the front of ``argv``; the rest."""
        while argv and argv[0] in ("--landlock", "--bwrap", "--write", "--offline", "--port"):
            flag = argv.pop(0)
            if flag in ("--landlock", "--bwrap"):
                self.mechanism = flag[2:]
            elif flag == "--write":
                self.writable.append(argv.pop(0))
            elif flag == "--offline":
                self.ports = self.ports or []
            else:
                self.ports = [*(self.ports or []), int(argv.pop(0))]
        return argv

    def apply(self, command: list[str]) -> list[str]:
        """Confine this process (Landlock), or the command (bubblewrap); what to exec."""
        if self.mechanism == "landlock":
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            import landlock  # beside this file, stdlib only

            landlock.confine(self.writable, connect_ports=self.ports)
        elif self.mechanism == "bwrap":
            binds = [
                arg
                for path in self.writable
                if not path.startswith("/dev/") and os.path.exists(path)
                for arg in ("--bind", path, path)
            ]
            offline = ["--unshare-net"] if self.ports is not None else []
            return [
                "bwrap", "--die-with-parent", "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev",
                *binds, *offline, "--", *command,
            ]  # fmt: skip
        return command


def start(
    command: list[str],
    *,
    mask: set[int | signal.Signals],
    merge_stderr: bool,
    confinement: Confinement | None = None,
) -> int:
    """Fork and exec ``command`` with default signal handling and ``mask``, confined as
    ``confinement`` says; its pid."""
    child = os.fork()
    if child == 0:
        # SIGPIPE and SIGXFSZ too, which Python ignores (as subprocess's restore_signals):
        # `yes | head` must end quietly.
        for sig in (*RESET, PARENT_DIED, signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        if merge_stderr:
            os.dup2(1, 2)
        if confinement is not None:
            try:
                command = confinement.apply(command)
            except OSError as exc:
                sys.stderr.write(f"The sandbox could not be applied ({exc}); nothing was run.\n")
                os._exit(126)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            sys.stderr.write(f"{command[0]}: {exc.strerror}\n")
            os._exit(127)
    # The supervisor keeps no end of the client's pipes: only the child talks on them.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    return child


#: What a lingering supervisor waits for (blocked, then taken with sigwaitinfo: no
#: handler runs between a child's exit and its status being recorded).
WATCHED = {signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, PARENT_DIED}


def linger(child: int, grace: float) -> None:
    """Report the child's exit code on stderr at once, keep its descendants until told
    to end them (or the client dies, or none is left), then exit as the child did."""
    status: int | None = None

    def record(reaped: list[tuple[int, int]]) -> None:
        nonlocal status
        for pid, wait_status in reaped:
            if pid == child and status is None:
                status = wait_status
                with contextlib.suppress(OSError):
                    os.write(2, f"{os.waitstatus_to_exitcode(wait_status)}\n".encode())

    while signal.sigwaitinfo(WATCHED).si_signo == signal.SIGCHLD:
        reaped: list[tuple[int, int]] = []
        left = any_descendant(reaped)
        record(reaped)
        if status is not None and not left:
            break
    record(kill_everything(grace))
    if status is None:
        os._exit(128 + signal.SIGKILL)
    end_like(status)


def main(argv: list[str]) -> None:
    grace = float(argv[1]) if argv[0] == "--linger" else None
    if grace is not None:
        argv = argv[2:]
    confinement = Confinement()
    argv = confinement.read(argv)
    confined = confinement if confinement.mechanism else None
    parent, command = int(argv[0]), argv[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    if grace is not None:
        mask = signal.pthread_sigmask(signal.SIG_BLOCK, WATCHED)
        libc.prctl(PR_SET_PDEATHSIG, PARENT_DIED, 0, 0, 0)
        if os.getppid() != parent:  # the client died before the death signal was armed
            os._exit(128 + signal.SIGKILL)
        linger(start(command, mask=mask, merge_stderr=True, confinement=confined), grace)
    libc.prctl(PR_SET_PDEATHSIG, PARENT_DIED, 0, 0, 0)

    def parent_died(*_: object) -> None:
        kill_everything()
        os._exit(128 + signal.SIGKILL)

    signal.signal(PARENT_DIED, parent_died)
    if os.getppid() != parent:  # the client died before the death signal was armed
        parent_died()
    child = start(
        command,
        mask=signal.pthread_sigmask(signal.SIG_BLOCK, set()),
        merge_stderr=False,
        confinement=confined,
    )
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda number, _frame: signal_all(number))
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            kill_everything()
            end_like(status)


if __name__ == "__main__":
    main(sys.argv[1:])
