"""The live notebooks connected to this kernel, and the comm endpoints that connect them."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import comm

from ..._version import __version__
from ..listeners import Listeners
from .wire import ASK_METADATA, FRONTEND_TARGET, KERNEL_TARGET, PROTOCOL_VERSION, message

if TYPE_CHECKING:
    from comm.base_comm import BaseComm

    from .live import Handler, LiveNotebook
    from .protocol import Ask


def _execute_metadata() -> dict[str, Any]:
    """The metadata of the execute request this kernel runs now (empty outside one)."""
    from IPython import get_ipython

    kernel = getattr(get_ipython(), "kernel", None)
    if kernel is None:
        return {}
    with contextlib.suppress(Exception):  # no parent: not inside an execute request
        metadata = kernel.get_parent("shell").get("metadata", {})
        return metadata if isinstance(metadata, dict) else {}
    return {}


class Frontends:
    """Every live notebook connected to this kernel, in the order they said hello."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: list[LiveNotebook] = []
        self._beacon: BaseComm | None = None
        self._listeners = Listeners("the live notebooks")
        self._handlers: dict[str, Handler] = {}

    def current(self) -> LiveNotebook | None:
        """The most recently connected notebook; None when no extension is connected
        (VS Code, classic Notebook, nbclient, a page without the extension)."""
        with self._lock:
            return self._live[-1] if self._live else None

    def connected(self) -> list[LiveNotebook]:
        with self._lock:
            return list(self._live)

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener()`` after a notebook connects or disconnects (on the thread
        that handled the comm message); returns the function that stops it."""
        return self._listeners.add(listener)

    def handle(self, type_: str, handler: Handler) -> None:
        """Call ``handler(live, data)`` for every ``type_`` message a page sends on its own
        (not a reply), on the thread that handled the comm message: it must not block."""
        self._handlers[type_] = handler

    @staticmethod
    def executing_cell() -> str | None:
        """The id of the cell this kernel runs now, as the page sent it: JupyterLab and
        Notebook 7 put ``cellId`` in the execute request's metadata (None elsewhere)."""
        cell_id = _execute_metadata().get("cellId")
        return cell_id if isinstance(cell_id, str) and cell_id else None

    @staticmethod
    def asked() -> Ask | None:
        """What the page asks about, when the cell running now is a ``%acp`` cell the
        extension wrote and ran (its Fix button, Ask about this cell): the ``ask`` in the
        execute request's metadata. None otherwise, and for one this kernel cannot read
        (an extension of another version)."""
        raw = _execute_metadata().get(ASK_METADATA)
        if not isinstance(raw, dict):
            return None
        from pydantic import ValidationError

        from .protocol import Ask

        try:
            ask = Ask.model_validate(raw)
        except ValidationError:
            return None
        return ask if ask.v == PROTOCOL_VERSION else None

    @property
    def installed(self) -> bool:
        return self._beacon is not None

    def install(self) -> None:
        """Accept connections, and announce this kernel to extensions already listening."""
        if self._beacon is not None:
            return
        comm.get_comm_manager().register_target(KERNEL_TARGET, self._on_open)
        # Kept open: an extension that connects later finds it with comm_info_request.
        self._beacon = comm.create_comm(
            target_name=FRONTEND_TARGET, data=message("announce", version=__version__)
        )

    def uninstall(self) -> None:
        """Close every connection (pending calls fail) and stop accepting new ones."""
        beacon, self._beacon = self._beacon, None
        if beacon is None:
            return
        with contextlib.suppress(Exception):
            comm.get_comm_manager().unregister_target(KERNEL_TARGET, self._on_open)
        with contextlib.suppress(Exception):
            beacon.close()
        for live in self.connected():
            live.close("acp_notebook was unloaded from this kernel; %load_ext acp_notebook again.")

    def _on_open(self, channel: BaseComm, msg: dict[str, Any]) -> None:
        # Imported by the first connection, not by `%load_ext` (which registers this
        # target): the live notebook and its messages' pydantic models.
        from pydantic import ValidationError

        from .live import LiveNotebook
        from .protocol import Hello

        data = msg.get("content", {}).get("data")
        try:
            hello = Hello.model_validate(data)
        except ValidationError:
            hello = None
        if hello is None or hello.v != PROTOCOL_VERSION:
            spoken = hello.v if hello is not None else "an unknown version"
            channel.send(
                message(
                    "unsupported",
                    message=(
                        f"This kernel's acp_notebook {__version__} speaks live-notebook protocol "
                        f"{PROTOCOL_VERSION}, the extension {spoken}: install the same "
                        "acp-notebook in the kernel's and in JupyterLab's environment."
                    ),
                )
            )
            channel.close()
            return
        live = LiveNotebook(channel, hello, on_closed=self._drop, on_message=self._dispatch)
        with self._lock:
            self._live.append(live)
        live.send("welcome", version=__version__)
        self._listeners.notify()

    def _dispatch(self, live: LiveNotebook, data: dict[str, Any]) -> None:
        handler = self._handlers.get(str(data.get("type")))
        if handler is not None:
            handler(live, data)

    def _drop(self, live: LiveNotebook) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._live.remove(live)
        self._listeners.notify()
