"""A block of lines kept at the bottom of a terminal while a turn's text is written above
it (the plan, on ``acp-notebook run`` with stdout a TTY): each new version replaces the
one drawn, in place, instead of being printed below it again.

How: the block is drawn only at the start of a line. Before anything else is written it
is erased (the cursor goes back up the rows it took, ``ESC [ n F``, and the screen below
is cleared, ``ESC [ J``), and it is drawn again once what was written ends its line, so
a reply streaming mid-line never has the block in its way. :meth:`BottomBlock.settle`
leaves the block where it is, for good: before a question is asked on the terminal
(which would otherwise be erased with it) and at the end of the turn.

The cursor movements are the printer's own, written through ``control``, never mixed with
agent text (which the CLI's terminal-safe stream shows, never obeys). A block taller than
the terminal cannot be reached once scrolled, so it is printed as plain lines instead.
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable

__all__ = ["BottomBlock", "rows_of", "terminal_size"]

_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def _width(text: str) -> int:
    """Columns ``text`` takes on a terminal (wide East Asian characters and emoji: two; a
    tab: to the next multiple of eight)."""
    width = 0
    for char in _STYLE.sub("", text):
        if char == "\t":
            width += 8 - width % 8
        elif not unicodedata.combining(char):
            width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def rows_of(text: str, columns: int) -> int:
    """Terminal rows ``text`` (ending with a newline) takes, its long lines wrapped. Only
    ``\n`` ends a line: the terminal-safe stream shows every other line break as a
    character, and counting one row too many would erase a line above the block."""
    lines = text.removesuffix("\n").split("\n")
    return sum(max(1, -(-_width(line) // columns)) for line in lines)


class BottomBlock:
    """The block at the bottom of the terminal (see the module docstring).

    ``write`` takes text (the printer's, agent text included), ``control`` the printer's
    own cursor movements; ``size`` gives the terminal's (columns, lines)."""

    def __init__(
        self,
        write: Callable[[str], None],
        control: Callable[[str], None],
        size: Callable[[], tuple[int, int]],
    ) -> None:
        self._write = write
        self._control = control
        self._size = size
        #: The block's text as last given (None: no block), and the rows it takes on screen
        #: (0: not drawn now).
        self._text: str | None = None
        self._rows = 0

    def show(self, text: str, at_line_start: bool) -> None:
        """Replace the block by ``text``; drawn now when the cursor is at a line start,
        else when the line ends (:meth:`written`)."""
        self.erase()
        self._text = text if text.endswith("\n") else text + "\n"
        if at_line_start:
            self._draw()

    def erase(self) -> None:
        """Take the drawn block off the screen (before other text is written)."""
        if self._rows:
            self._control(f"\x1b[{self._rows}F\x1b[J")
            self._rows = 0

    def written(self, at_line_start: bool) -> None:
        """Other text was written: draw the block again below it once its line ended."""
        if self._text is not None and not self._rows and at_line_start:
            self._draw()

    def settle(self, at_line_start: bool) -> None:
        """Leave the block on screen for good, below what was written (a newline first
        when the line is not ended); the next block starts anew."""
        if self._text is None:
            return
        if not self._rows:
            if not at_line_start:
                self._write("\n")
            self._write(self._text)
        self._text, self._rows = None, 0

    def _draw(self) -> None:
        assert self._text is not None
        columns, lines = self._size()
        rows = rows_of(self._text, columns)
        self._write(self._text)
        # A block the screen cannot hold cannot be reached again: it stays as printed,
        # and the next version is printed below it.
        self._rows = rows if rows < lines else 0
        if not self._rows:
            self._text = None


def terminal_size(fileno: Callable[[], int] | None) -> Callable[[], tuple[int, int]]:
    """The terminal's (columns, lines) of the stream whose ``fileno`` is given, read each
    time (the window may be resized); 80×24 when it cannot be known."""

    def size() -> tuple[int, int]:
        try:
            found = os.get_terminal_size(fileno() if fileno is not None else 1)
        except (OSError, ValueError):
            return 80, 24
        return max(found.columns, 1), max(found.lines, 1)

    return size
