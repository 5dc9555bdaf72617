"""A ``repr`` that cannot break or hang a summary.

The value is the user's (or an agent's) object, so its ``__repr__`` may raise, run
forever, or return a hundred megabytes. Builtin containers are walked here, level by
level, with a cap on items and depth (a deep or self-referencing list costs nothing);
any other object's own ``repr`` runs under a timer on the main thread (a timer signal
is the only way to stop Python code in the thread that runs it) and its result is cut.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field

from .model import Limits, cut_text

_BRACKETS: dict[type, tuple[str, str]] = {dict: ("{", "}"), list: ("[", "]"), tuple: ("(", ")")}


class _TooSlow(BaseException):
    """Raised into a ``__repr__`` that ran past its time (a BaseException, so a broad
    ``except Exception`` in the hostile code does not swallow it)."""


@contextlib.contextmanager
def time_limit(seconds: float) -> Iterator[bool]:
    """Stop the block with ``_TooSlow`` after ``seconds``; yields whether a timer is armed.

    Only on the main thread of a platform with ``setitimer``. An alarm someone else set
    (the user's, a test runner's) is put back afterwards with the time it had left, and
    one due before ours is left alone to fire as its owner meant.
    """
    if (
        not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
    ):
        yield False
        return
    previous = signal.getsignal(signal.SIGALRM)
    pending, interval = signal.getitimer(signal.ITIMER_REAL)
    if previous is None or 0 < pending <= seconds:  # a C handler, or an alarm due first
        yield False
        return

    def expire(signum: int, frame: object) -> None:
        raise _TooSlow

    started = time.monotonic()
    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield True
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if pending:
            left = max(pending - (time.monotonic() - started), 0.001)
            signal.setitimer(signal.ITIMER_REAL, left, interval)


@dataclass
class BoundedRepr:
    """One bounded ``repr``, collecting a note for each thing it left out."""

    limits: Limits
    notes: list[str] = field(default_factory=list)

    def __call__(self, value: object) -> str:
        text, note = cut_text(self._repr(value, self.limits.depth), self.limits.chars)
        if note and not self.notes:  # else a note already says what was cut
            self._note(f"the repr was cut to its {note}")
        return text

    def _note(self, note: str) -> None:
        if note not in self.notes:
            self.notes.append(note)

    def _repr(self, value: object, depth: int) -> str:
        if type(value) in (list, tuple, set, frozenset, dict):
            return self._container(value, depth)  # type: ignore[arg-type]
        if type(value) in (str, bytes):
            return self._text(value)  # type: ignore[arg-type]
        return self.leaf(value)

    def _text(self, value: str | bytes) -> str:
        limit = self.limits.chars
        if len(value) <= limit:
            return repr(value)
        self._note(f"a string of {len(value):,} characters was cut to its first {limit:,}")
        return repr(value[:limit]) + "…"

    def _container(self, value: Collection[object], depth: int) -> str:
        name = type(value).__name__
        opening, closing = _BRACKETS.get(type(value), (f"{name}({{", "})"))
        if not value:
            return f"{opening}{closing}" if type(value) in _BRACKETS else f"{name}()"
        if depth <= 0:
            self._note(f"containers nested deeper than {self.limits.depth} levels are shown as …")
            return f"{opening}…{closing}"
        parts: list[str] = []
        for index, item in enumerate(value):
            if index == self.limits.items:
                self._note(f"containers show their first {self.limits.items} items")
                parts.append(f"… {len(value) - index:,} more")
                break
            if isinstance(value, dict):
                key = self._repr(item, depth - 1)
                parts.append(f"{key}: {self._repr(value[item], depth - 1)}")
            else:
                parts.append(self._repr(item, depth - 1))
        trailing = "," if type(value) is tuple and len(value) == 1 else ""
        return f"{opening}{', '.join(parts)}{trailing}{closing}"

    def leaf(self, value: object) -> str:
        """Any other object's own ``repr``: timed, caught, cut."""
        try:
            with time_limit(self.limits.repr_seconds):
                text = repr(value)
        except _TooSlow:
            self._note(f"its repr ran longer than {self.limits.repr_seconds:g} s and was stopped")
            return _placeholder(value)
        except Exception as exc:
            self._note(f"its repr raised {type(exc).__name__}")
            return _placeholder(value)
        if not isinstance(text, str):
            return _placeholder(value)
        text, note = cut_text(text, self.limits.chars)
        if note:
            self._note(f"its repr was cut to its {note}")
        return text


def _placeholder(value: object) -> str:
    kind = type(value)
    return f"<{kind.__module__}.{kind.__qualname__} object at {id(value):#x}>"
