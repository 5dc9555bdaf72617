"""How each kind of transcript entry becomes output: one table per output form, each a
function per entry type and one explicit fallback, all made by :class:`EntryForm`.

The forms are Markdown (``client/render.py``), the terminal's streamed text
(``client/text_stream.py``), the saved turn's HTML (``ui/transcript_html.py``) and the live
widgets (``ui/turn.py``). A new kind of `session/update` is an entry type in
``entries.py`` (a member of ``Entry``) and one row in each of these four tables;
``tests/ui/test_entry_forms.py`` fails while a form lacks the row. An entry is
dispatched by one dict lookup by its type, so the tables cost nothing per entry beyond it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Generic, TypeVar, get_args

from .entries import Entry

__all__ = ["ENTRY_TYPES", "EntryForm", "row"]

#: Every kind of entry a transcript holds.
ENTRY_TYPES: tuple[type, ...] = get_args(Entry)

S = TypeVar("S")  # the renderer that owns the form
E = TypeVar("E")  # one entry type
C = TypeVar("C")  # what the renderer passes along with the entry (its turn, its state…)
R = TypeVar("R")  # what the form makes (a string, a widget view, nothing)

#: A row's function: the renderer, the entry, the context → the output.
Render = Callable[[S, Any, C], R]


def row(kind: type[E], render: Callable[[S, E, C], R]) -> tuple[type, Render[S, C, R]]:
    """One row of a form: ``render`` makes the output of an entry of type ``kind`` (typed
    against that kind, which a plain dict of mixed types could not check)."""
    return kind, render


class EntryForm(Generic[S, C, R]):
    """One output form: a function per entry type, and ``fallback`` for any other object."""

    #: Every form made, by name (what the completeness test reads).
    forms: ClassVar[dict[str, EntryForm[Any, Any, Any]]] = {}

    def __init__(
        self,
        name: str,
        rows: Iterable[tuple[type, Render[S, C, R]]],
        *,
        fallback: Render[S, C, R],
    ) -> None:
        self.name = name
        self.rows: dict[type, Render[S, C, R]] = dict(rows)
        self.fallback = fallback
        EntryForm.forms[name] = self

    def __call__(self, renderer: S, entry: object, context: C) -> R:
        """``entry`` in this form (its type's row, else the fallback)."""
        return self.rows.get(type(entry), self.fallback)(renderer, entry, context)

    @property
    def missing(self) -> list[str]:
        """The entry types this form has no row for (each must have one)."""
        return [kind.__name__ for kind in ENTRY_TYPES if kind not in self.rows]
