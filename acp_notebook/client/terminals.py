"""`terminal/*` for one session: commands run in the background, output kept for the agent.

Rules (spec §9 "Terminals" unless noted):

* ``terminal/create`` answers with a ``terminalId`` at once; the command runs in the
  background in its own session / process group, stdin from ``/dev/null`` (nobody can
  type into it), stdout and stderr merged into one pipe so they interleave in arrival
  order.
* Shell or not (the spec leaves it to the client): when ``args`` is given, ``command``
  is run directly with those arguments. When ``args`` is absent or empty and ``command``
  is more than a plain word (spaces, pipes, quotes, ``$``, ``~``, ...), it is run as
  ``/bin/sh -c command`` — agents send both styles (``{"command": "echo hi"}`` as well as
  ``{"command": "bash", "args": ["-lc", "..."]}``). A plain word, or the path of an
  existing file, is run directly.
* ``env`` entries overlay the kernel's environment (after the manager's own ``env``
  overlay); ``cwd`` must be absolute and inside the session's directories, default the
  session cwd.
* Output is kept up to ``outputByteLimit`` bytes (no spec default; we always cap at
  ``max_output_bytes``, 32 MiB by default, so a chatty command cannot eat the kernel's
  memory). Beyond it the *beginning* is dropped, cut at a UTF-8 character boundary, and
  ``truncated`` becomes true. Bytes are decoded incrementally (a character split across
  two reads comes out whole; invalid bytes become U+FFFD).
* ``exitStatus`` appears in ``terminal/output`` only after exit: ``exitCode`` null when
  killed by a signal (``signal`` then names it, e.g. ``"SIGTERM"``), ``signal`` null on a
  normal exit.
* The command has exited when its process has: ``exitStatus`` and ``wait_for_exit`` report
  it at once, while its background jobs (``cmd &``, a server a build started) go on
  running until the terminal is killed or released, or the session ends. On Linux every
  command runs under a lingering supervisor (``protocol/supervisor.py``), so even a job
  that double-forked and called ``setsid()`` is still found and killed then, or when the
  client dies (SIGKILL of the kernel included).
* ``terminal/kill`` kills the whole process group and every descendant (SIGTERM, then
  SIGKILL after a grace period) and answers once all are dead; the terminal stays readable.
* ``terminal/release`` kills too, and the id becomes invalid for every ``terminal/*``
  call; the UI still gets the captured output through :meth:`TerminalManager.snapshot`
  (spec: keep displaying a terminal embedded in a tool call).
* Unknown or released ids are ``-32602`` invalid params, the code for "this request
  names something that is not there for you" (``data.terminalId`` holds the id).
* A session holds at most ``max_terminals`` (32 by default) terminals that were not
  released (our limit, not the spec's): ``terminal/create`` beyond it is refused with
  ``-32603``, naming the limit and ``terminal/release``; a released terminal frees its slot.
* Closing the manager (``async with`` exit / :meth:`TerminalManager.aclose`) kills every
  terminal's group and session (spec: clients should clean up on session close).

Requests arrive typed (:mod:`~acp_notebook.client.handlers` read them strictly: a value
of the wrong type never gets here); wire params given directly are read the same way first.

Error codes: ``-32602`` malformed params (an empty command, NUL bytes, an invalid
environment variable name, a negative ``outputByteLimit``), cwd outside the roots or not a
directory, unknown / released terminal id, command not executable; ``-32002`` the command
(or cwd) does not exist; ``-32603`` any other failure to start, or the manager not running.
POSIX only (process groups and signals).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import logging
import os
import shlex
import signal
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType

import anyio
import anyio.abc
import anyio.to_thread

from ..protocol import models as m
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from ..protocol.sandbox import REFUSED_WRITE, Confinement
from ..protocol.tasks import background_tasks
from .fs import resolve_inside, resolve_root
from .handlers import Params, read_params
from .terminal_command import TerminalCommand, command_argv, open_command
from .terminal_output import TerminalOutput

__all__ = [
    "DEFAULT_MAX_OUTPUT_BYTES",
    "DEFAULT_MAX_TERMINALS",
    "TerminalManager",
    "TerminalSnapshot",
]

log = logging.getLogger(__name__)

#: Hard cap on the output kept per terminal, whatever ``outputByteLimit`` says (or when
#: it is absent): 32 MiB holds any log a model can use and keeps memory bounded.
DEFAULT_MAX_OUTPUT_BYTES = 32 * 1024 * 1024
#: Seconds between SIGTERM and SIGKILL.
DEFAULT_KILL_GRACE = 2.0
#: Terminals a session may hold at once (created and not released yet).
DEFAULT_MAX_TERMINALS = 32


@dataclass(frozen=True)
class TerminalSnapshot:
    """What a UI shows for a terminal; available after ``terminal/release`` too."""

    command: str
    cwd: str
    output: str
    truncated: bool
    #: Exit code after a normal exit; None while running or when killed by a signal.
    exit_code: int | None
    #: Signal name (e.g. ``"SIGKILL"``) when killed by one, else None.
    signal: str | None
    released: bool
    exited: bool = False
    terminal_id: str = ""
    pid: int | None = None
    #: It failed saying "Permission denied" or "Read-only file system" while the sandbox
    #: confined it: most likely a write the sandbox refused (the one sign a command gives).
    sandbox_refused: bool = False


def _no_nul(key: str, values: list[str]) -> list[str]:
    if any("\x00" in value for value in values):
        raise RpcError(INVALID_PARAMS, f"The `{key}` parameter contains a NUL byte.")
    return values


def _env(variables: list[m.EnvVariable]) -> dict[str, str]:
    env: dict[str, str] = {}
    for variable in variables:
        name, value = variable.name, variable.value
        if not name or "=" in name or "\x00" in name or "\x00" in value:
            raise RpcError(
                INVALID_PARAMS, f"The environment variable name or value {name!r} is invalid."
            )
        env[name] = value
    return env


class TerminalManager:
    """Serves ``terminal/create|output|wait_for_exit|kill|release`` for one session.

    Use as ``async with TerminalManager(roots, cwd) as terminals: ...``; leaving the
    block kills every command still running (whole process group and session).
    ``env`` overlays the kernel's environment for every command; ``on_output(id)`` is
    called on the event loop whenever a terminal has new output or exits (no data: the
    UI reads :meth:`snapshot`).
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        default_cwd: str | os.PathLike[str],
        *,
        env: Mapping[str, str] | None = None,
        on_output: Callable[[str], None] | None = None,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        kill_grace: float = DEFAULT_KILL_GRACE,
        max_terminals: int = DEFAULT_MAX_TERMINALS,
        confinement: Confinement | None = None,
    ) -> None:
        self._roots: list[str] = []
        #: How the agent is confined; its commands are too, with this session's folders.
        self.confinement = confinement
        for root in roots:
            self.add_root(root)
        self.default_cwd = resolve_root(default_cwd)
        self.env = dict(env or {})
        self.on_output = on_output
        self.max_output_bytes = max_output_bytes
        self.kill_grace = kill_grace
        #: How many unreleased terminals the session may hold; a create beyond is refused.
        self.max_terminals = max_terminals
        self._starting = 0
        # Every terminal ever created, released ones included, for snapshot().
        self._terminals: dict[str, TerminalCommand] = {}
        self._ids = itertools.count(1)
        self._stack: contextlib.AsyncExitStack | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._closed = False

    @property
    def roots(self) -> list[str]:
        return list(self._roots)

    def add_root(self, path: str | os.PathLike[str]) -> None:
        """Allow terminals to start below another absolute directory."""
        root = resolve_root(path)
        if root not in self._roots:
            self._roots.append(root)

    @property
    def terminal_ids(self) -> list[str]:
        """Every terminal id created so far, in order, released ones included."""
        return list(self._terminals)

    # -- lifecycle ---------------------------------------------------------------------

    async def __aenter__(self) -> TerminalManager:
        if self._stack is not None or self._closed:
            raise RuntimeError("A TerminalManager can be entered only once.")
        stack = contextlib.AsyncExitStack()
        self._task_group = await stack.enter_async_context(background_tasks())
        self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        try:
            await self.aclose()
        finally:
            assert self._stack is not None
            suppress = await self._stack.__aexit__(exc_type, exc, tb)
            # The helper tasks are gone now; nobody else will report these exits.
            for term in self._terminals.values():
                if not term.exited.is_set():
                    term.returncode = term.process.returncode
                    term.exited.set()
        return suppress

    def attach(self, task_group: anyio.abc.TaskGroup) -> TerminalManager:
        """Run the terminals' helper tasks in ``task_group`` (owned by the caller, e.g.
        the connection), instead of entering the manager with ``async with``.
        :meth:`aclose` still kills every command."""
        if self._stack is not None or self._task_group is not None or self._closed:
            raise RuntimeError("A TerminalManager can be started only once.")
        self._task_group = task_group
        return self

    async def kill_all(self) -> None:
        """Kill every running command (their whole groups); terminals stay readable.

        Used when a turn is cancelled: a stop that really stops.
        """
        async with anyio.create_task_group() as group:
            for term in self._terminals.values():
                if not term.exited.is_set():
                    group.start_soon(self._terminate, term)

    def kill_now(self) -> None:
        """End every command at once; for interpreter exit, where nothing can be awaited."""
        for term in self._terminals.values():
            term.kill_now()

    async def aclose(self) -> None:
        """Kill every terminal's process group and session; no new terminals after this."""
        if self._closed:
            return
        self._closed = True
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as group:
                for term in self._terminals.values():
                    group.start_soon(self._terminate, term)

    # -- terminal/create ---------------------------------------------------------------

    async def create(self, request: m.CreateTerminalRequest | Params) -> m.CreateTerminalResponse:
        """``terminal/create``: start the command and answer with its terminal id at once."""
        request = read_params(m.CreateTerminalRequest, request)
        task_group = self._task_group
        if task_group is None or self._closed:
            raise RpcError(
                INTERNAL_ERROR, "The session's terminals are closed, so no command can start."
            )
        command = request.command
        if not command.strip():
            raise RpcError(INVALID_PARAMS, "The `command` parameter must be a non-empty string.")
        _no_nul("command", [command])
        args = _no_nul("args", request.args or [])
        env_overlay = _env(request.env or [])
        limit = request.output_byte_limit
        if limit is not None and limit < 0:
            raise RpcError(
                INVALID_PARAMS,
                f"The `outputByteLimit` parameter must be a non-negative integer, not {limit!r}.",
            )
        argv = command_argv(command, args)
        self._check_slot()
        self._starting += 1  # a slot taken while this one starts
        try:
            cwd = await anyio.to_thread.run_sync(self._check_cwd, request.cwd)
            process = await self._spawn(argv, cwd, env_overlay)
        finally:
            self._starting -= 1

        terminal_id = f"term-{next(self._ids)}"  # deterministic, unique per manager
        display = command if argv[0] == "/bin/sh" and not args else shlex.join(argv)
        limit_bytes = self.max_output_bytes if limit is None else min(limit, self.max_output_bytes)
        term = TerminalCommand(terminal_id, display, cwd, process, TerminalOutput(limit_bytes))
        self._terminals[terminal_id] = term
        task_group.start_soon(term.run, functools.partial(self._notify, term))
        return m.CreateTerminalResponse(terminal_id=terminal_id)

    def _check_slot(self) -> None:
        """Refuse a terminal over :attr:`max_terminals` (every unreleased one holds its
        output and maybe processes, so an agent looping on create cannot exhaust them)."""
        held = [term.terminal_id for term in self._terminals.values() if not term.released]
        if len(held) + self._starting >= self.max_terminals:
            raise RpcError(
                INTERNAL_ERROR,
                f"This session already has {self.max_terminals} terminals, its limit; release "
                "one with `terminal/release` (its output stays shown) before creating another.",
                {"maxTerminals": self.max_terminals, "terminalIds": held},
            )

    async def _spawn(
        self, argv: list[str], cwd: str, env_overlay: Mapping[str, str]
    ) -> anyio.abc.Process:
        """Start ``argv`` in ``cwd``; errors as the JSON-RPC error the agent gets."""
        full_env = dict(os.environ)
        full_env.update(self.env)
        full_env.update(env_overlay)
        try:
            confinement = self.confinement.with_roots(self._roots) if self.confinement else None
            process = await open_command(
                argv, cwd=cwd, env=full_env, grace=self.kill_grace, confinement=confinement
            )
        except FileNotFoundError:
            raise RpcError(
                RESOURCE_NOT_FOUND,
                f"The command `{argv[0]}` was not found on PATH (nor as a file).",
                {"command": argv[0]},
            ) from None
        except PermissionError:
            raise RpcError(
                INVALID_PARAMS, f"The command `{argv[0]}` is not executable.", {"command": argv[0]}
            ) from None
        except OSError as exc:
            raise RpcError(
                INTERNAL_ERROR,
                f"The command `{argv[0]}` could not be started: {exc.strerror or exc}.",
            ) from None
        if self._closed:  # the manager closed while the command was being spawned
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            with anyio.CancelScope(shield=True), anyio.move_on_after(1.0):
                await process.aclose()
            raise RpcError(
                INTERNAL_ERROR, "The session's terminals are closed, so no command can start."
            )
        return process

    def _check_cwd(self, value: str | None) -> str:
        if value is None:  # spec: cwd is optional; default to the session cwd
            return self.default_cwd
        cwd = resolve_inside(value, self._roots, what="cwd")
        if not os.path.exists(cwd):
            raise RpcError(RESOURCE_NOT_FOUND, f"The cwd {value} does not exist.", {"path": value})
        if not os.path.isdir(cwd):
            raise RpcError(INVALID_PARAMS, f"The cwd {value} is not a directory.", {"path": value})
        return cwd

    def _notify(self, term: TerminalCommand) -> None:
        if self.on_output is None:
            return
        try:
            self.on_output(term.terminal_id)
        except Exception:  # an observer must never stop the reading
            log.exception("on_output callback failed for %s", term.terminal_id)

    # -- terminal/output, wait_for_exit, kill, release -----------------------------------

    def _lookup(self, terminal_id: str) -> TerminalCommand:
        term = self._terminals.get(terminal_id)
        if term is None:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown terminal id {terminal_id!r}: no terminal with that id was created in this session.",
                {"terminalId": terminal_id},
            )
        if term.released:
            # spec: after terminal/release the id is invalid for all terminal/* methods.
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown terminal id {terminal_id!r}: that terminal was already released.",
                {"terminalId": terminal_id},
            )
        return term

    async def output(self, request: m.TerminalOutputRequest | Params) -> m.TerminalOutputResponse:
        """``terminal/output``: the output so far; ``exitStatus`` once the command exited."""
        term = self._lookup(read_params(m.TerminalOutputRequest, request).terminal_id)
        output = m.TerminalOutputResponse(
            output=term.output.text(), truncated=term.output.truncated
        )
        if term.exited.is_set():  # spec: exitStatus only once the process exited
            output.exit_status = term.exit_status()
        return output

    async def wait_for_exit(
        self, request: m.WaitForTerminalExitRequest | Params
    ) -> m.WaitForTerminalExitResponse:
        """``terminal/wait_for_exit``: the exit code or signal, once the command exited."""
        term = self._lookup(read_params(m.WaitForTerminalExitRequest, request).terminal_id)
        await term.exited.wait()
        status = term.exit_status()
        return m.WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill(self, request: m.KillTerminalRequest | Params) -> m.KillTerminalResponse:
        """``terminal/kill``: kill the process group; the terminal stays readable."""
        term = self._lookup(read_params(m.KillTerminalRequest, request).terminal_id)
        await self._terminate(term)
        await term.settle()
        return m.KillTerminalResponse()

    async def release(
        self, request: m.ReleaseTerminalRequest | Params
    ) -> m.ReleaseTerminalResponse:
        """``terminal/release``: kill if running and invalidate the id (snapshot still works)."""
        term = self._lookup(read_params(m.ReleaseTerminalRequest, request).terminal_id)
        term.released = True  # first, so concurrent calls already see the id as invalid
        await self._terminate(term)
        await term.settle()
        self._notify(term)
        return m.ReleaseTerminalResponse()

    def snapshot(self, terminal_id: str) -> TerminalSnapshot:
        """The terminal's command, output and status for the UI (not a protocol call).

        Works for released terminals too; raises ``KeyError`` for ids never created.
        """
        term = self._terminals[terminal_id]
        status = term.exit_status() if term.exited.is_set() else m.TerminalExitStatus()
        output = term.output.text()
        confined = self.confinement is not None and self.confinement.enforced
        return TerminalSnapshot(
            command=term.command,
            cwd=term.cwd,
            output=output,
            truncated=term.output.truncated,
            exit_code=status.exit_code,
            signal=status.signal,
            released=term.released,
            exited=term.exited.is_set(),
            terminal_id=term.terminal_id,
            pid=term.process.pid,
            sandbox_refused=confined
            and status.exit_code not in (None, 0)
            and REFUSED_WRITE.search(output) is not None,
        )

    async def _terminate(self, term: TerminalCommand) -> None:
        await term.terminate(self.kill_grace)
