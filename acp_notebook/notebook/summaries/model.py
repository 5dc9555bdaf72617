"""What a summary of a live value is, and the bounds every summariser keeps to.

A summary is what the agent gets for ``{name}`` and for the ``inspect_variable`` tool:
text built for the value's type (with its MIME type), an optional PNG, a short label
for the UI ("DataFrame 3×2") and one note wherever something was left out, so neither
the agent nor the user mistakes a cut summary for the whole value. A prompt's other
attachments (a cell, an error) are summaries too, without a name
(``notebook/context.py``).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Limits:
    """How much of a value a summary may carry."""

    #: The summary's whole text.
    chars: int = 20_000
    #: Data-frame rows given as CSV.
    rows: int = 50
    #: Data-frame columns described and shown.
    columns: int = 50
    #: Array elements printed (numpy's summarisation threshold).
    array_items: int = 200
    #: Items of a plain container, per level.
    items: int = 100
    #: Nesting levels of a plain container.
    depth: int = 6
    #: Seconds a ``__repr__`` may run (enforced on the main thread, where a timer signal works).
    repr_seconds: float = 2.0
    #: Size of an image.
    image_bytes: int = 4_000_000


LIMITS = Limits()


@dataclass(frozen=True)
class Summary:
    """A bounded description of one value, or of a cell or an error sent with a prompt."""

    #: How the user named it (``df``, ``df.col``, ``Out[3]``); None for what has no name
    #: (a cell, an error).
    name: str | None
    #: A short label for the UI and for ``list_variables``: "DataFrame 3×2",
    #: "ndarray float64 (1000, 3)", "function clean()".
    label: str
    text: str
    mime_type: str = "text/plain"
    #: A PNG rendering (figures, objects with a PNG representation).
    png: bytes | None = None
    #: One sentence per thing left out ("first 50 of 1,000,000 rows").
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def png_base64(self) -> str | None:
        return base64.b64encode(self.png).decode("ascii") if self.png is not None else None

    @property
    def cut(self) -> bool:
        return bool(self.notes)


def cut_text(text: str, limit: int) -> tuple[str, str | None]:
    """``text`` in at most ``limit`` characters (ending with "…" when cut), and a note
    when it was cut."""
    if len(text) <= limit:
        return text, None
    return text[: max(limit - 1, 0)] + "…", f"first {limit:,} of {len(text):,} characters"


def cut_head(text: str, limit: int) -> tuple[str, str | None]:
    """Like :func:`cut_text`, keeping the end (a traceback's end says what happened)."""
    if len(text) <= limit:
        return text, None
    return "…" + text[
        len(text) - max(limit - 1, 0) :
    ], f"last {limit:,} of {len(text):,} characters"


def count(n: int, noun: str) -> str:
    """``1 key``, ``3 keys``, ``1,000 rows``."""
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def fence(text: str, info: str = "") -> str:
    """A Markdown code fence around ``text`` that no backtick run inside it can close."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{info}\n{text}\n{ticks}"


def finish(
    name: str,
    label: str,
    text: str,
    limits: Limits,
    *,
    mime_type: str = "text/plain",
    png: bytes | None = None,
    notes: list[str] | None = None,
) -> Summary:
    """A summary whose text is within ``limits.chars``."""
    all_notes = list(notes or [])
    text, note = cut_text(text, limits.chars)
    if note:
        all_notes.append(f"the summary was cut to its {note}")
    return Summary(name, label, text, mime_type, png, tuple(all_notes))
