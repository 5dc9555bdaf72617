"""The agent subprocess: spawned in its own process group with the caller's full
environment, stderr drained continuously, and shut down without leaving children.

Why each rule exists (all seen with real agents, see docs/jupyter-notes.md): agents are often wrapper
scripts (npx, tsx, uvx) whose children outlive a signal sent to the wrapper alone;
chatty agents block forever if nobody reads their stderr pipe; agents need the API
keys and PATH of the environment they were started from.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc

from .sandbox import Confinement
from .tasks import background_tasks
from .tree import ProcessTree, Stopped, proc_stats

STDERR_LINES = 200
_STDERR_LINE_CHARS = 2000

#: A terminal's escape sequences in an agent's stderr (colours, cursor moves, titles, links):
#: written for a terminal, they are noise in a line kept as text (``\x1b[31m`` in a cell's
#: error) and must not reach the user's terminal through the CLI's progress line either.
_TERMINAL_CODES = re.compile(
    r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])"
)


class AgentStartError(Exception):
    """The agent command could not be started at all (not found, not executable), or
    it could not get the agent (a package runner offline)."""


#: How a package runner says it cannot reach its registry (npm's error codes, uv's words).
_UNREACHABLE = re.compile(
    r"ENOTFOUND|EAI_AGAIN|ENOTCACHED|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|"
    r"network request to .* failed|request to .* failed, reason|\boffline\b|"
    r"failed to fetch|dns error|failed to lookup address|error sending request",
    re.IGNORECASE,
)

#: Package runners that download the agent before starting it: how to install it instead.
_RUNNERS = {"npx": "npm install -g {package}", "uvx": "uv tool install {package}"}


def package_runner(argv: Sequence[str]) -> tuple[str, str] | None:
    """(runner, package) when ``argv`` runs an agent through ``npx`` or ``uvx``."""
    runner = Path(argv[0]).name
    if runner not in _RUNNERS:
        return None
    package = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    return (runner, package) if package else None


def startup_problem(argv: Sequence[str], line: str) -> str | None:
    """The sentence for a stderr line that means the agent cannot be had: its package
    runner cannot reach the registry (an offline ``npx`` retried for 71 s, then dumped
    npm's errors; this names the cause and the way out instead)."""
    runner = package_runner(argv)
    if runner is None or not _UNREACHABLE.search(line):
        return None
    name, package = runner
    registry = "npm" if name == "npx" else "uv"
    install = _RUNNERS[name].format(package=package)
    return (
        f"{registry} cannot reach the package registry to download `{package}` "
        f"({line.strip()[:200]}); install it with `{install}` while online, or check the network."
    )


def split_command(command: str | Sequence[str]) -> list[str]:
    """A command line split like a POSIX shell would, or an argv list as given."""
    try:
        argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
    except ValueError as exc:  # an unclosed quote
        raise AgentStartError(f"The agent command {command!r} cannot be read: {exc}.") from None
    if not argv:
        raise AgentStartError("The agent command is empty.")
    return argv


#: Between the client and each process it starts, on Linux: see supervisor.py.
SUPERVISOR = str(Path(__file__).with_name("supervisor.py"))
SUPERVISED = sys.platform.startswith("linux") and os.path.isdir("/proc")


def supervised(
    argv: Sequence[str],
    env: Mapping[str, str],
    cwd: str | os.PathLike[str] | None = None,
    *,
    linger: float | None = None,
    confinement: Confinement | None = None,
) -> list[str]:
    """``argv`` run under the supervisor (Linux), so nothing it starts outlives us, and
    confined as ``confinement`` says (see sandbox.py).

    With ``linger`` (a terminal's command): its exit code is reported on the supervisor's
    stderr as it happens, its descendants live on until the supervisor is signalled, and
    then get ``linger`` seconds between SIGTERM and SIGKILL (see supervisor.py).
    Raises what starting ``argv`` itself would (``FileNotFoundError``,
    ``PermissionError``), since the supervisor's own start would not."""
    if not SUPERVISED:
        return list(argv)
    program = os.path.join(cwd or "", argv[0])
    if os.sep not in argv[0]:
        program = argv[0]
        found = shutil.which(program, path=env.get("PATH", os.defpath))
        if found is None:
            raise FileNotFoundError(2, "No such file or directory", program)
    elif not os.path.exists(program):
        raise FileNotFoundError(2, "No such file or directory", program)
    elif os.path.isdir(program) or not os.access(program, os.X_OK):
        raise PermissionError(13, "Permission denied", program)
    lingering = ["--linger", f"{linger:g}"] if linger is not None else []
    confined = confinement.supervisor_args() if confinement is not None else []
    return [sys.executable, "-S", "-I", SUPERVISOR, *lingering, *confined, str(os.getpid()), *argv]


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def session_members(session_id: int, *, leader_gone: bool = False) -> list[int]:
    """PIDs whose session is ``session_id`` (Linux /proc; empty elsewhere).

    Catches descendants that left the process group but not the session. With
    ``leader_gone`` (the session's leader, which we started, has been reaped): none when a
    process of that pid runs now. The kernel hands out no pid still naming a session with
    members, so such a process means the old session is empty and the pid was reused,
    perhaps by an unrelated process that made a session of its own with ``setsid()`` —
    whose members are not ours to signal (pids wrap at 32,768 on many machines)."""
    stats = proc_stats()
    if leader_gone and session_id in stats:
        return []
    return [pid for pid, stat in stats.items() if stat.session == session_id]


def signal_tree(pid: int, sig: int, *, leader_alive: bool) -> None:
    """Signal the process group led by ``pid`` and every process left in its session.

    The group is only trusted while its leader lives: once the leader is reaped its
    pid may be reused, so then only the session scan is used.
    """
    if sys.platform == "win32":  # no process groups
        return
    if leader_alive:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, sig)
    for member in session_members(pid, leader_gone=not leader_alive):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(member, sig)


def signal_leader(process: anyio.abc.Process, sig: int) -> None:
    """Signal the process itself while asyncio has not reported its exit.

    Not ``process.send_signal``: ``Popen.send_signal`` polls first, and a poll that finds
    the process just ended reaps it behind the back of asyncio's child watcher, which
    then logs "Unknown child process pid …" and reports exit code 255. Until the watcher
    has reported the exit, the pid cannot be reused (at worst it is a zombie).
    """
    if process.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(process.pid, sig)


async def wait_tree_gone(process: anyio.abc.Process, timeout: float) -> bool:
    """Wait until ``process`` exited and nothing is left in its session; False on timeout."""
    with anyio.move_on_after(timeout):
        await process.wait()
        while session_members(process.pid, leader_gone=True):
            await anyio.sleep(0.02)
        return True
    return False


class AgentProcess:
    """A running agent subprocess. Use :func:`open_agent_process` to get one."""

    def __init__(
        self,
        argv: list[str],
        *,
        name: str,
        process: anyio.abc.Process,
        on_stderr: Callable[[str], None] | None = None,
        confinement: Confinement | None = None,
    ) -> None:
        self.argv = argv
        #: How the operating system confines it (None: it is not).
        self.confinement = confinement
        self.name = name
        self.process = process
        self.pid = process.pid
        self._stderr = collections.deque[str](maxlen=STDERR_LINES)
        self._on_stderr = on_stderr
        self._stderr_done = anyio.Event()
        #: Until the agent answered `initialize`: its stderr is watched for a package
        #: runner that cannot download it (:func:`startup_problem`).
        self.starting = True
        #: Why it could not start, once known (then it is stopped at once).
        self.start_problem: str | None = None
        assert process.stdin is not None and process.stdout is not None
        self.stdin: anyio.abc.ByteSendStream = process.stdin
        self.stdout: anyio.abc.ByteReceiveStream = process.stdout
        #: Every process started for it, as far as seen (:mod:`.tree`).
        self._tree = ProcessTree(self.pid)
        #: What :meth:`shutdown` ended, once it has; set while it runs.
        self.stopped: Stopped | None = None
        self._ending: anyio.Event | None = None

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    def stderr_tail(self, lines: int = 20) -> list[str]:
        """The last ``lines`` lines the agent wrote to stderr."""
        return list(self._stderr)[-lines:]

    async def _drain_stderr(self) -> None:
        stream = self.process.stderr
        partial = b""
        try:
            if stream is None:
                return
            async for chunk in stream:
                *lines, partial = (partial + chunk).split(b"\n")
                for raw in lines:
                    self._add_stderr_line(raw)
                if len(partial) > _STDERR_LINE_CHARS * 4:  # a huge line with no newline yet
                    self._add_stderr_line(partial)
                    partial = b""
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            if partial:
                self._add_stderr_line(partial)
            self._stderr_done.set()

    def _add_stderr_line(self, raw: bytes) -> None:
        line = raw.decode("utf-8", "replace").rstrip("\r")
        if "\x1b" in line:
            line = _TERMINAL_CODES.sub("", line)
        if len(line) > _STDERR_LINE_CHARS:
            line = line[:_STDERR_LINE_CHARS] + " …"
        self._stderr.append(line)
        if self.starting and self.start_problem is None:
            self.start_problem = startup_problem(self.argv, line)
            if self.start_problem is not None:
                # Its output ends, so whatever waits for an answer learns why at once.
                self._signal_group(signal.SIGTERM)
        if self._on_stderr is not None:
            with contextlib.suppress(Exception):  # an observer must never stop the draining
                self._on_stderr(line)

    async def describe_exit(self, wait: float = 1.0) -> str:
        """One sentence on why the agent's output ended, for error messages.

        Waits up to ``wait`` seconds for the process to exit so the exit code and
        the last stderr lines are known.
        """
        with anyio.move_on_after(wait):
            await self.process.wait()
        with anyio.move_on_after(0.3):
            await self._stderr_done.wait()
        if self.start_problem is not None:
            return self.start_problem
        code = self.process.returncode
        if code is None:
            sentence = f"The agent `{self.name}` closed its output but is still running"
        elif code < 0:
            sentence = f"The agent `{self.name}` was killed by {signal_name(-code)}"
        else:
            sentence = f"The agent `{self.name}` exited with code {code}"
        tail = [line for line in self.stderr_tail(5) if line.strip()]
        if tail:
            sentence += "; its last stderr lines: " + " | ".join(tail)
        return sentence

    def members(self) -> list[int]:
        """Live processes started by the agent (its group and session), itself included."""
        return session_members(self.pid, leader_gone=self.process.returncode is not None)

    def _signal_group(self, sig: int) -> None:
        if sys.platform == "win32":  # no process groups: the direct child only
            with contextlib.suppress(ProcessLookupError, OSError):
                self.process.send_signal(sig)
            return
        signal_tree(self.pid, sig, leader_alive=self.process.returncode is None)

    def alive(self) -> list[int]:
        """The processes of its tree alive now (none once :meth:`shutdown` succeeded), each
        remembered: what :meth:`shutdown` reports as ended includes them."""
        return self._tree.scan(root_alive=self.process.returncode is None)

    async def _wait_gone(self, timeout: float) -> bool:
        """Wait until the process exited and nothing seen in its tree lives; False on timeout."""
        with anyio.move_on_after(timeout):
            await self.process.wait()
            while self.alive():
                await anyio.sleep(0.02)
            return True
        return False

    async def _kill_tree(self, timeout: float) -> None:
        """SIGKILL every process of the tree but its root, until none is left, then the
        root if it did not end by itself. The root (the supervisor) goes last: SIGKILLed
        with the rest, it could not end the descendants it adopted, nor would they be
        found once re-parented to init."""
        if sys.platform == "win32":
            self._signal_group(signal.SIGKILL)
            await self._wait_gone(timeout)
            return
        with anyio.move_on_after(timeout):
            while others := [pid for pid in self.alive() if pid != self.pid]:
                for pid in others:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                await anyio.sleep(0.01)
        with anyio.move_on_after(0.5):  # the supervisor ends once its child has
            await self.process.wait()
        signal_leader(self.process, signal.SIGKILL)
        self._signal_group(signal.SIGKILL)  # whatever joined the group or session since
        await self._wait_gone(timeout)

    async def shutdown(self, *, stdin_grace: float = 1.0, term_grace: float = 2.0) -> Stopped:
        """Close stdin, then SIGTERM the whole tree, then SIGKILL it; what was ended.

        spec: the client closes the agent's stdin, then terminates the process. A second
        call (the runtime's stop, then the process's own context) waits for the first
        and returns what it ended.
        """
        with anyio.CancelScope(shield=True):
            if self._ending is not None:
                await self._ending.wait()
            else:
                self._ending = anyio.Event()
                try:
                    self.stopped = await self._end(stdin_grace, term_grace)
                finally:
                    self._ending.set()
        return self.stopped or Stopped(self.name, (), left=tuple(self.alive()))

    async def _end(self, stdin_grace: float, term_grace: float) -> Stopped:
        self.alive()  # what runs now is seen, before its stdin closes
        forced = False
        with contextlib.suppress(Exception):
            await self.stdin.aclose()
        if not await self._wait_gone(stdin_grace):
            self._signal_group(signal.SIGTERM)
            if not await self._wait_gone(term_grace):
                forced = True
                await self._kill_tree(2.0)
        return Stopped(self.name, tuple(self._tree.seen), forced, tuple(self.alive()))

    def kill_now(self) -> None:
        """SIGKILL everything at once; for interpreter exit, where nothing can be awaited."""
        for pid in self.alive():
            if pid != self.pid:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
        self._signal_group(signal.SIGKILL)


@contextlib.asynccontextmanager
async def open_agent_process(
    command: str | Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    name: str | None = None,
    on_stderr: Callable[[str], None] | None = None,
    confinement: Confinement | None = None,
) -> AsyncIterator[AgentProcess]:
    """Start an agent and yield it; on exit it is shut down with all its children.

    ``env`` holds overrides on top of this process's full environment; ``confinement``
    is what the operating system lets it and its descendants write and connect to.
    """
    argv = split_command(command)
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    display = name or Path(argv[0]).name
    try:
        process = await anyio.open_process(
            supervised(argv, full_env, cwd, confinement=confinement),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=full_env,
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError as exc:
        raise AgentStartError(
            f"The agent command `{argv[0]}` was not found on PATH (nor as a file); install it or pass its full path."
        ) from exc
    except PermissionError as exc:
        raise AgentStartError(f"The agent command `{argv[0]}` is not executable.") from exc
    except OSError as exc:
        raise AgentStartError(
            f"The agent command `{argv[0]}` could not be started: {exc}."
        ) from exc
    agent = AgentProcess(
        argv, name=display, process=process, on_stderr=on_stderr, confinement=confinement
    )
    try:
        async with background_tasks() as task_group:
            task_group.start_soon(agent._drain_stderr)
            try:
                yield agent
            finally:
                await agent.shutdown()
    finally:
        with contextlib.suppress(Exception):
            await process.aclose()
