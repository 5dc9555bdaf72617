"""What a control answers: a sentence (:class:`Text`) or rows (:class:`Table`).

Both are plain values, safe on any thread, that show themselves: ``%acp`` prints a
:class:`Text` and displays a :class:`Table` (Markdown in a notebook, aligned text in a
terminal); from Python, a :class:`Text` is a ``str`` and a :class:`Table` iterates over
its rows (snapshots such as :class:`~acp_notebook.notebook.runtime.snapshots.SessionSnapshot`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ...client.formatting import md_cell

R = TypeVar("R")


class Text(str):
    """A control's answer in words; its repr is the text itself, so it reads well as a
    cell's result."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str.__str__(self)


@dataclass(frozen=True)
class Column(Generic[R]):
    title: str
    value: Callable[[R], object]
    #: Shown as code in Markdown (ids, commands, paths).
    code: bool = False

    def text(self, row: R) -> str:
        value = self.value(row)
        return "" if value is None else str(value)

    def markdown(self, row: R) -> str:
        return md_cell(self.text(row), code=self.code)


class Table(Generic[R]):
    """Rows with named columns; ``empty`` is the sentence shown when there is none,
    ``note`` a line shown under the rows (what to do next)."""

    def __init__(
        self,
        rows: Iterable[R],
        columns: Sequence[Column[R]],
        *,
        empty: str,
        note: str = "",
    ) -> None:
        self.rows = tuple(rows)
        self.columns = tuple(columns)
        self.empty = empty
        self.note = note

    def __iter__(self) -> Iterator[R]:
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> R:
        return self.rows[index]

    def _repr_markdown_(self) -> str:
        if not self.rows:
            return self.empty
        lines = [
            "| " + " | ".join(c.title for c in self.columns) + " |",
            "|" + "---|" * len(self.columns),
        ]
        for row in self.rows:
            lines.append("| " + " | ".join(c.markdown(row) for c in self.columns) + " |")
        if self.note:
            lines.append(f"\n{self.note}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        if not self.rows:
            return self.empty.replace("`", "")
        cells = [[c.title for c in self.columns]]
        cells += [[c.text(row).replace("\n", " ") for c in self.columns] for row in self.rows]
        widths = [max(len(line[i]) for line in cells) for i in range(len(self.columns))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(line, widths, strict=True)).rstrip()
            for line in cells
        ]
        if self.note:
            lines.append(self.note.replace("`", ""))
        return "\n".join(lines)

    __str__ = __repr__
