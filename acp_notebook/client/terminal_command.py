"""One terminal's command: how it is started, its output and exit collected, and how it
ends with every process it started.

The command runs in its own session and process group; on Linux under a lingering
supervisor (``protocol/supervisor.py``), which reports the command's exit code the moment
it exits and keeps its background jobs — escaped ones included — until the terminal is
ended, or the client dies. :class:`~acp_notebook.client.terminals.TerminalManager` serves
the ``terminal/*`` requests on top of it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import anyio
import anyio.abc

from ..protocol import models as m
from ..protocol.process import (
    SUPERVISED,
    session_members,
    signal_leader,
    signal_name,
    signal_tree,
    supervised,
    wait_tree_gone,
)
from ..protocol.sandbox import Confinement
from .terminal_output import TerminalOutput

__all__ = ["TerminalCommand", "command_argv", "command_line", "open_command"]

log = logging.getLogger(__name__)

#: Seconds the client waits for a supervisor to end its descendants beyond their grace,
#: before it kills what it can see itself.
_SUPERVISOR_MARGIN = 3.0
#: After the command exits, how long to wait for the pipe to drain before reporting the
#: exit (a background child may keep the pipe open for much longer; its later output is
#: still collected).
_EXIT_DRAIN_GRACE = 0.5
#: What ``shlex.quote`` leaves unquoted, minus ``=`` (``A=1`` means something to a shell):
#: such a command is one plain word and needs no shell.
_PLAIN_WORD = re.compile(r"[\w@%+:,./-]+", re.ASCII)


def command_argv(command: str, args: list[str]) -> list[str]:
    """The argv to run: ``command`` with ``args``; without them, a plain word or an
    existing file's path directly, anything else through ``/bin/sh -c``."""
    if args:
        return [command, *args]
    if _PLAIN_WORD.fullmatch(command) or (os.path.isabs(command) and os.path.isfile(command)):
        return [command]
    return ["/bin/sh", "-c", command]


def command_line(command: str, args: list[str]) -> str:
    """What a ``terminal/create`` of ``command`` with ``args`` runs, as one command line for
    the shell reader: the command alone (run by ``/bin/sh -c`` unless a plain word), the
    script of ``sh -c SCRIPT`` when the shell's options are ones the reader models, else
    the argv quoted word by word (run without a shell, so nothing in a word expands)."""
    if not args:
        return command
    from .shell import shell_payload  # here: most turns run no command (test_cli_imports)

    argv = [command, *args]
    return shell_payload(argv) or shlex.join(argv)


async def open_command(
    argv: list[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    grace: float,
    confinement: Confinement | None = None,
) -> anyio.abc.Process:
    """Start ``argv`` (under the lingering supervisor where there is one, confined as
    ``confinement`` says); raises the ``OSError`` starting it raised."""
    return await anyio.open_process(
        supervised(argv, env, cwd, linger=grace, confinement=confinement),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        # One pipe: stdout and stderr in arrival order (the supervisor merges them itself;
        # its own stderr reports the command's exit code).
        stderr=subprocess.PIPE if SUPERVISED else subprocess.STDOUT,
        cwd=cwd,
        env=dict(env),
        start_new_session=True,  # its own group and session, killed as a whole
    )


@dataclass(eq=False)
class TerminalCommand:
    """A started command, its output, and whether (and how) it exited."""

    terminal_id: str
    command: str
    cwd: str
    process: anyio.abc.Process
    output: TerminalOutput
    eof: anyio.Event = field(default_factory=anyio.Event)
    exited: anyio.Event = field(default_factory=anyio.Event)
    returncode: int | None = None
    released: bool = False
    #: Run under a lingering supervisor (``process.pid`` is the supervisor's).
    supervised: bool = SUPERVISED

    def exit_status(self) -> m.TerminalExitStatus:
        """spec: ``exitCode`` null when killed by a signal (``signal`` then names it)."""
        code = self.returncode
        if code is not None and code < 0:
            return m.TerminalExitStatus(exit_code=None, signal=signal_name(-code))
        return m.TerminalExitStatus(exit_code=code, signal=None)

    # -- running -----------------------------------------------------------------------

    async def run(self, notify: Callable[[], None]) -> None:
        """Collect the output and the exit status (``notify()`` after each change); lives
        until the pipe closes and every lingering background job has ended."""
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._pump, notify)
                code = await self._exit_code()
                # Output written just before exit may still sit in the pipe: let the
                # reader catch up before exitStatus becomes visible.
                with anyio.move_on_after(_EXIT_DRAIN_GRACE):
                    await self.eof.wait()
                self.returncode = code
                self.exited.set()
                notify()
                await self.process.wait()  # a supervisor lingers for the background jobs
        except Exception:  # never let one terminal tear down the manager's task group
            log.exception("terminal %s failed", self.terminal_id)
        finally:
            with (
                anyio.CancelScope(shield=True),
                anyio.move_on_after(1.0),
                contextlib.suppress(Exception),
            ):
                await self.process.aclose()

    async def _exit_code(self) -> int:
        """The command's exit code (negative: the signal): the supervisor's report the
        moment the command exits, else (no supervisor, or it was killed) the process's."""
        report = self.process.stderr if self.supervised else None
        line = b""
        if report is not None:
            with contextlib.suppress(
                anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError
            ):
                while not line.endswith(b"\n") and len(line) < 64:
                    line += await report.receive()
        try:
            # Only the first line is the report; whatever follows it is not ours to read.
            return int(line.partition(b"\n")[0])
        except ValueError:
            return await self.process.wait()

    async def _pump(self, notify: Callable[[], None]) -> None:
        stream = self.process.stdout
        try:
            if stream is None:
                return
            async for chunk in stream:
                if self.output.feed(chunk):
                    notify()
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass
        finally:
            if self.output.feed(b"", final=True):  # an incomplete last character
                notify()
            self.eof.set()

    # -- ending ------------------------------------------------------------------------

    def members(self) -> list[int]:
        """Live processes in the command's session (the supervisor's, where there is one)."""
        return session_members(self.process.pid, leader_gone=self.process.returncode is not None)

    def signal(self, sig: signal.Signals) -> None:
        """Signal the command's process group and every process left in its session."""
        signal_tree(self.process.pid, sig, leader_alive=self.process.returncode is None)

    def kill_now(self) -> None:
        """End at once, for interpreter exit where nothing can be awaited: a supervisor is
        told to end its descendants (a SIGKILL would leave the escaped ones behind), a
        command without one gets SIGKILL."""
        if self.supervised:
            signal_leader(self.process, signal.SIGTERM)
        else:
            self.signal(signal.SIGKILL)

    async def terminate(self, grace: float) -> None:
        """SIGTERM everything, then SIGKILL after ``grace`` seconds; return once all died.

        Same approach as ``protocol.process.AgentProcess.shutdown``: wrapper commands
        (sh -c, npm, make) leave children that a signal to the leader alone misses. A
        supervisor does it itself, for every descendant, escaped ones included; the
        client's own signals only back it up.
        """
        with anyio.CancelScope(shield=True):
            if self.process.returncode is not None and not self.members():
                return
            if self.supervised:
                signal_leader(self.process, signal.SIGTERM)
                if await wait_tree_gone(self.process, grace + _SUPERVISOR_MARGIN):
                    return
            else:
                self.signal(signal.SIGTERM)
                if await wait_tree_gone(self.process, grace):
                    return
            self.signal(signal.SIGKILL)
            await wait_tree_gone(self.process, 5.0)

    async def settle(self) -> None:
        """Wait (briefly) until the exit is recorded, so the next call sees exitStatus."""
        with anyio.move_on_after(_EXIT_DRAIN_GRACE + 1.0):
            await self.exited.wait()
