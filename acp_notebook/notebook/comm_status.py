"""Widget messages that arrive while a ``%acp`` cell awaits its turn get their status.

ipykernel 7.4 handles ``comm_open`` / ``comm_msg`` / ``comm_close`` while a cell awaits
(ipykernel#1565), but on that concurrent path it publishes no ``status`` at all. The
ipywidgets frontend sends one state update per model at a time and holds the next ones
until it sees ``status: idle`` whose parent is the update it sent: so while a turn ran,
typing "Grace Hopper" into a form sent "G", and a dropdown's second change never left the
page. Buttons worked only because clicks are custom messages, which are not throttled.

:func:`install` wraps the kernel's ``dispatch_shell`` (on ipykernel 7.4's concurrent path
only, and only while :func:`awaiting` is active) to publish ``busy`` and ``idle`` with the
comm message as parent — what the kernel publishes for the same message when idle — and
then ``busy`` again for the awaiting cell, so the frontend's kernel indicator stays busy.

Other kernels are left alone (feature detection, not version numbers): ipykernel 6.x and
7.0–7.3 have no concurrent path (there a message waits for the cell, or runs on a
subshell thread that publishes its own status), so nothing is installed.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, Protocol

log = logging.getLogger(__name__)

Dispatch = Callable[..., Awaitable[None]]


class _Kernel(Protocol):
    """What is used of ``ipykernel.kernelbase.Kernel`` (7.4)."""

    session: Any
    _main_asyncio_lock: Any

    def dispatch_shell(self, msg: Any, /, subshell_id: str | None = None, **kw: Any) -> Any: ...

    def get_parent(self, channel: str = ...) -> dict[str, Any]: ...

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None: ...


def has_concurrent_comms(kernel: object) -> bool:
    """True for a kernel that dispatches comm messages concurrently with an awaiting cell
    (ipykernel >= 7.4: ``dispatch_shell(..., concurrent=...)`` and the main shell's lock)."""
    dispatch = getattr(kernel, "dispatch_shell", None)
    if dispatch is None or not hasattr(kernel, "_main_asyncio_lock"):
        return False
    if not hasattr(kernel, "_publish_status") or not hasattr(kernel, "session"):
        return False
    try:
        return "concurrent" in inspect.signature(dispatch).parameters
    except (TypeError, ValueError):
        return False


class CommStatus:
    """The wrapper around one kernel's ``dispatch_shell``; see the module docstring."""

    def __init__(self, kernel: _Kernel) -> None:
        self.kernel = kernel
        self._original: Dispatch = kernel.dispatch_shell
        #: The execute requests of the ``%acp`` cells awaiting now (nested awaits stack).
        self._cells: list[dict[str, Any]] = []

    @property
    def active(self) -> bool:
        return bool(self._cells)

    def install(self) -> None:
        self.kernel.dispatch_shell = self._dispatch  # type: ignore[method-assign,assignment]

    def uninstall(self) -> None:
        if vars(self.kernel).get("dispatch_shell") == self._dispatch:
            del self.kernel.dispatch_shell

    @contextlib.contextmanager
    def awaiting(self) -> Iterator[None]:
        """While the current cell (the kernel's shell parent) awaits a turn."""
        cell = self.kernel.get_parent("shell")
        self._cells.append(cell)
        try:
            yield
        finally:
            self._cells.remove(cell)

    async def _dispatch(
        self, msg: Any, /, subshell_id: str | None = None, *, concurrent: bool = False
    ) -> None:
        if not (concurrent and self._cells):
            await self._original(msg, subshell_id=subshell_id, concurrent=concurrent)
            return
        parent = self._header(msg)
        publish = self.kernel._publish_status
        if parent is not None:
            publish("busy", "shell", parent=parent)
        try:
            await self._original(msg, subshell_id=subshell_id, concurrent=concurrent)
        finally:
            if parent is not None:
                publish("idle", "shell", parent=parent)
                # Still awaiting (no await between this check and the send, so the cell
                # cannot have published its own idle in between): the kernel is busy.
                if self._cells and self.kernel._main_asyncio_lock.locked():
                    publish("busy", "shell", parent=self._cells[-1])

    def _header(self, msg: Any) -> dict[str, Any] | None:
        """The header of a raw shell message (the parent of its status messages)."""
        session = self.kernel.session
        try:
            _idents, frames = session.feed_identities(msg, copy=False)
            header = session.deserialize(frames, content=False, copy=False)["header"]
        except Exception:
            log.debug("could not read a concurrent shell message's header", exc_info=True)
            return None
        return dict(header)


_installed: CommStatus | None = None


def install(shell: object) -> CommStatus | None:
    """Called by ``%load_ext``: wrap this kernel's concurrent comm dispatch (when it has one)."""
    global _installed
    kernel = getattr(shell, "kernel", None)
    if _installed is not None or kernel is None or not has_concurrent_comms(kernel):
        return _installed
    _installed = CommStatus(kernel)
    _installed.install()
    return _installed


def uninstall() -> None:
    """Called by ``%unload_ext``: the kernel's own dispatch again."""
    global _installed
    if _installed is not None:
        _installed.uninstall()
        _installed = None


@contextlib.contextmanager
def awaiting() -> Iterator[None]:
    """Wrap the await of a cell that waits for a turn (a no-op where not installed)."""
    status = _installed
    if status is None:
        yield
        return
    with status.awaiting():
        yield
