"""Live values as the agent sees them: one bounded summary per type.

    summary = summarise(df, "df")       # text (+ MIME type), optional PNG, label, notes
    value = resolve("df.col", user_ns)  # or NOT_FOUND; never evaluates code

The summarisers are tried in order (first match wins); each recognises its type
without importing its library, so pandas, polars, numpy and matplotlib stay optional.
A summariser that fails falls back to the bounded ``repr``, with a note.
"""

from __future__ import annotations

from . import plain
from .arrays import ARRAYS
from .frames import PANDAS, POLARS
from .images import IMAGES
from .kinds import Summariser
from .model import LIMITS, Limits, Summary
from .resolve import NOT_FOUND, resolve
from .source import SOURCE

PLAIN = Summariser("plain", lambda value: True, plain.label, plain.summarise)

#: In order: the first that matches summarises the value; PLAIN matches anything.
SUMMARISERS: tuple[Summariser, ...] = (PANDAS, POLARS, ARRAYS, IMAGES, SOURCE, PLAIN)


def summariser_for(value: object) -> Summariser:
    for summariser in SUMMARISERS:
        try:
            if summariser.matches(value):
                return summariser
        except Exception:  # a hostile __class__ or __instancecheck__: not this kind
            continue
    return PLAIN


def summarise(value: object, name: str, limits: Limits = LIMITS) -> Summary:
    """A summary of ``value`` built for its type, within ``limits``."""
    summariser = summariser_for(value)
    try:
        return summariser.summarise(value, name, limits)
    except Exception as exc:
        fallback = plain.summarise(value, name, limits)
        note = f"the {summariser.kind} summary failed ({type(exc).__name__}), so this is its repr"
        return Summary(
            name, fallback.label, fallback.text, fallback.mime_type, None, (note, *fallback.notes)
        )


def label_of(value: object) -> str:
    """The short label of ``value`` ("DataFrame 3×2"), without building its summary."""
    try:
        return summariser_for(value).label(value)
    except Exception:
        return type(value).__name__


def size_of(value: object) -> int | None:
    """Bytes held by ``value`` where that is cheap to know (arrays, frames), else None."""
    try:
        return summariser_for(value).size(value)
    except Exception:
        return None


__all__ = [
    "LIMITS",
    "NOT_FOUND",
    "SUMMARISERS",
    "Limits",
    "Summariser",
    "Summary",
    "label_of",
    "resolve",
    "size_of",
    "summarise",
]
