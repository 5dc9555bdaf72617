"""The plan kept at the bottom of a terminal (``client/bottom_block.py``), drawn on a
terminal emulator (pyte): replaced in place, out of the way of text streaming above it,
left for good when settled, and printed plainly when the screen cannot hold it."""

from __future__ import annotations

import pyte
import pytest

from acp_notebook.cli.output import TerminalSafe
from acp_notebook.client.bottom_block import BottomBlock, rows_of
from acp_notebook.client.formatting import FIELD_CHARS, fields_text


class Terminal:
    """A COLUMNS×LINES screen and the block's writes to it (``at_line_start`` kept)."""

    def __init__(self, columns: int = 40, lines: int = 12) -> None:
        self.screen = pyte.Screen(columns, lines)
        self.stream = pyte.Stream(self.screen)
        self.at_line_start = True
        self.controls: list[str] = []
        self.block = BottomBlock(self.emit, self.control, lambda: (columns, lines))

    def emit(self, text: str) -> None:
        self.stream.feed(text.replace("\n", "\r\n"))  # as a terminal's onlcr does
        self.at_line_start = text.endswith("\n")

    def control(self, sequence: str) -> None:
        self.controls.append(sequence)
        self.stream.feed(sequence)

    def write(self, text: str) -> None:
        """Text written above the block, as the printer writes it."""
        self.block.erase()
        self.emit(text)
        self.block.written(self.at_line_start)

    def show(self, text: str) -> None:
        self.block.show(text, self.at_line_start)

    @property
    def lines(self) -> list[str]:
        shown = [line.rstrip() for line in self.screen.display]
        while shown and not shown[-1]:
            shown.pop()
        return shown


def test_a_new_version_replaces_the_block_in_place() -> None:
    term = Terminal()
    term.write("intro\n")
    term.show("Plan\n- [ ] one")
    term.show("Plan\n- [x] one")
    assert term.lines == ["intro", "Plan", "- [x] one"]


def test_text_streamed_mid_line_is_written_above_the_block_which_comes_back_below() -> None:
    term = Terminal()
    term.show("Plan\n- [~] one")
    term.write("Reading ")
    assert term.lines == ["Reading"]  # out of the way while the line is open
    term.write("the files… done.\n")
    assert term.lines == ["Reading the files… done.", "Plan", "- [~] one"]
    term.show("Plan\n- [x] one")  # a version given mid-line waits for the line's end
    assert term.lines == ["Reading the files… done.", "Plan", "- [x] one"]


def test_a_settled_block_stays_and_the_next_starts_below_it() -> None:
    term = Terminal()
    term.show("Plan\n- [x] one")
    term.write("half a line")
    term.block.settle(term.at_line_start)
    term.write("after\n")
    assert term.lines == ["half a line", "Plan", "- [x] one", "after"]


def test_a_block_taller_than_the_screen_is_printed_as_plain_lines() -> None:
    term = Terminal(lines=4)
    tall = "Plan\n" + "\n".join(f"- [ ] step {n}" for n in range(6))
    term.show(tall)
    term.show(tall.replace("[ ]", "[x]", 1))
    assert term.controls == []  # what scrolled away cannot be reached to erase it
    assert term.lines[-1] == "- [ ] step 5"


def test_rows_count_wrapped_lines_and_wide_characters() -> None:
    assert rows_of("abc\n" + "x" * 41 + "\n", 40) == 3
    assert rows_of("💭" * 20 + "\n", 40) == 1 and rows_of("💭" * 21 + "\n", 40) == 2
    assert rows_of("\x1b[1mPlan\x1b[0m\n", 4) == 1  # styles take no columns
    assert rows_of("\tab\n", 8) == 2  # a tab goes to column 8
    # A plan entry's carriage return or form feed is shown as a character, on the line.
    assert rows_of("- [ ] one\rtwo\x0cthree\n", 40) == 1


def test_the_terminal_safe_stream_writes_only_the_blocks_own_movement() -> None:
    written: list[str] = []

    class Out:
        def write(self, text: str) -> int:
            written.append(text)
            return len(text)

    safe = TerminalSafe(Out())  # type: ignore[arg-type]
    safe.write_control("\x1b[6F\x1b[J")
    with pytest.raises(ValueError):
        safe.write_control("\x1b]52;c;aGk=\x07")
    safe.write("\x1b[6F\x1b[J")  # in text, as an agent would send it: shown, not obeyed
    assert written == ["\x1b[6F\x1b[J", "␛[6F␛[J"]


def test_raw_input_fields_are_one_line_each_and_long_values_cut() -> None:
    text = fields_text(
        {"path": "a.py", "content": "line 1\nline 2\nline 3", "n": 3, "x": "y" * 500}
    )
    path, content, n, x = text.splitlines()
    assert (path, content, n) == ("path: a.py", "content: line 1 … (+2 lines)", "n: 3")
    assert x.startswith("x: yyy") and x.endswith("…") and len(x) == len("x: ") + FIELD_CHARS
    assert fields_text([1, 2]) == "[1, 2]"
