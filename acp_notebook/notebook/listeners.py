"""Listeners of a change, added and removed from any thread: the tool registry's and the
connected notebooks' (a change is announced on the thread that made it)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


class Listeners:
    """``add(listener)`` returns the function that removes it; ``notify()`` calls each one,
    a failing listener logged and never stopping the others or the change."""

    def __init__(self, what: str) -> None:
        #: What changes, for the log ("the notebook tools", "the live notebooks").
        self.what = what
        self._lock = threading.Lock()
        self._listeners: tuple[Callable[[], None], ...] = ()

    def add(self, listener: Callable[[], None]) -> Callable[[], None]:
        with self._lock:
            self._listeners = (*self._listeners, listener)

        def stop() -> None:
            with self._lock:
                self._listeners = tuple(e for e in self._listeners if e is not listener)

        return stop

    def notify(self) -> None:
        for listener in self._listeners:
            try:
                listener()
            except Exception:
                log.exception("a listener of %s failed", self.what)
