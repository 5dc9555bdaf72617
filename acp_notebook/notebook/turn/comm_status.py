"""Widget messages that arrive while a ``%acp`` cell awaits its turn get their status.

ipykernel 7.4 handles ``comm_open`` / ``comm_msg`` / ``comm_close`` while a cell awaits
(ipykernel#1565), but on that concurrent path it publishes no ``status`` at all. The
ipywidgets frontend sends one state update per model at a time and holds the next ones
until it sees ``status: idle`` whose parent is the update it sent: so while a turn ran,
typing "Grace Hopper" into a form sent "G", and a dropdown's second change never left the
page. Buttons worked only because clicks are custom messages, which are not throttled.

:func:`install` wraps the kernel's ``dispatch_shell`` so that, while :func:`awaiting` is
active, a message dispatched on ipykernel 7.4's concurrent path gets ``busy`` and ``idle``
with itself as parent — what the kernel publishes for the same message when idle.

JupyterLab >= 4.4 sends widget messages to a comm subshell (``commsOverSubshells``), and
ipykernel 7.4 routes each to the shell that last published on that comm: the main shell
(the concurrent path above) or the subshell thread, which publishes its own ``busy`` and
``idle``; JupyterLab also creates that subshell with a control-channel request, which gets
``busy`` and ``idle`` too. Each time the last status the frontend saw would say "idle" while
the cell still runs (the status bar said "Idle" after Run All), so the kernel's
``_publish_status`` is wrapped as well: after any other message's ``idle`` while the cell
awaits, ``busy`` is published again with the cell as parent, until the cell's own ``idle``.

Other kernels are left alone (feature detection, not version numbers): ipykernel 6.x and
7.0–7.3 have no concurrent path (there a widget message waits for the cell on the main
shell, or runs on a subshell thread that publishes its own status), so nothing is installed.
"""

from __future__ import annotations

import contextlib
import inspect
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import jupyter_client.session
    import zmq

log = logging.getLogger(__name__)

Dispatch = Callable[..., Awaitable[None]]
Publish = Callable[[str, str, "dict[str, Any] | None"], None]


class _Kernel(Protocol):
    """What is used of ``ipykernel.kernelbase.Kernel`` (7.4)."""

    session: jupyter_client.session.Session

    def dispatch_shell(
        self, msg: list[zmq.Message], /, subshell_id: str | None = None, **kw: Any
    ) -> Any: ...

    def get_parent(self, channel: str = ...) -> dict[str, Any]: ...

    def _publish_status(
        self, status: str, channel: str, parent: dict[str, Any] | None = None
    ) -> None: ...


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
    """The wrappers around one kernel's ``dispatch_shell`` and ``_publish_status``; see
    the module docstring."""

    def __init__(self, kernel: _Kernel) -> None:
        self.kernel = kernel
        self._original: Dispatch = kernel.dispatch_shell
        self._original_publish: Publish = kernel._publish_status
        #: The execute requests of the ``%acp`` cells awaiting now (nested awaits stack).
        self._cells: list[dict[str, Any]] = []
        #: Subshell and control threads publish too: a cell's ``busy`` is never published
        #: after the cell stopped awaiting (it would outlive the cell's own ``idle``).
        self._lock = threading.Lock()

    @property
    def active(self) -> bool:
        return bool(self._cells)

    def install(self) -> None:
        self.kernel.dispatch_shell = self._dispatch  # type: ignore[method-assign,assignment]
        self.kernel._publish_status = self._publish  # type: ignore[method-assign]

    def uninstall(self) -> None:
        for name, wrapper in (
            ("dispatch_shell", self._dispatch),
            ("_publish_status", self._publish),
        ):
            if vars(self.kernel).get(name) == wrapper:
                delattr(self.kernel, name)

    @contextlib.contextmanager
    def awaiting(self) -> Iterator[None]:
        """While the current cell (the kernel's shell parent) awaits a turn."""
        cell = self.kernel.get_parent("shell")
        with self._lock:
            self._cells.append(cell)
        try:
            yield
        finally:
            with self._lock:
                self._cells.remove(cell)

    async def _dispatch(
        self, msg: list[zmq.Message], /, subshell_id: str | None = None, *, concurrent: bool = False
    ) -> None:
        # The kernel publishes no status on its concurrent path; elsewhere it does. (No
        # cell awaits while its own request is dispatched: it starts awaiting later.)
        parent = self._header(msg) if concurrent and self._cells else None
        if parent is not None:
            self._publish("busy", "shell", parent=parent)
        try:
            await self._original(msg, subshell_id=subshell_id, concurrent=concurrent)
        finally:
            if parent is not None:
                self._publish("idle", "shell", parent=parent)

    def _publish(self, status: str, channel: str, parent: dict[str, Any] | None = None) -> None:
        """Publish a status; after another message's ``idle`` (a widget message, a
        subshell's or the control channel's request), ``busy`` again for the awaiting cell."""
        self._original_publish(status, channel, parent)
        if status != "idle" or not self._cells:
            return
        finished = _msg_id(parent if parent is not None else self.kernel.get_parent(channel))
        with self._lock:
            if self._cells and finished != _msg_id(self._cells[-1]):
                self._original_publish("busy", "shell", self._cells[-1])

    def _header(self, msg: list[zmq.Message]) -> dict[str, Any] | None:
        """The header of a raw shell message (the parent of its status messages)."""
        session = self.kernel.session
        try:
            _idents, frames = session.feed_identities(msg, copy=False)
            header = session.deserialize(frames, content=False, copy=False)["header"]
        except Exception:
            log.debug("could not read a concurrent shell message's header", exc_info=True)
            return None
        return dict(header)


def _msg_id(message: dict[str, Any]) -> object:
    """The msg_id of a message or of a bare header."""
    return message.get("header", message).get("msg_id")


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
