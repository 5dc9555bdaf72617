"""What the command writes to the terminal: agent text with its control characters shown,
never obeyed.

An agent's text, titles, commands, error messages and stderr tail reach stdout and stderr
(the transcript, prompts, the one-line failure). Raw, an ``ESC ] 52`` sequence writes the
clipboard and ``ESC [1A ESC [2K`` redraws the line above a prompt (``rm -rf ~`` shown as
``ls -la``), so every write of the commands that talk to a person goes through
:func:`terminal_safe`: colours and clearing the current line pass (the command's own
styling), every other C0 control but newline and tab becomes its Control Picture (``ESC`` is shown as ``␛``), C1 controls and bidirectional overrides become U+FFFD,
and lone surrogates (which cannot be encoded) too.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterator
from typing import IO, Any

from ..protocol.bounds import scrub

__all__ = ["TerminalSafe", "terminal_safe", "terminal_safe_output"]

_SHOWN: dict[int, str] = {
    **{code: chr(0x2400 + code) for code in range(0x20) if code not in (0x09, 0x0A)},
    0x7F: "\u2421",
    **dict.fromkeys(range(0x80, 0xA0), "\ufffd"),
    # Bidirectional embeddings, overrides and isolates reorder what the terminal shows.
    **dict.fromkeys([*range(0x202A, 0x202F), *range(0x2066, 0x206A)], "\ufffd"),
}


#: Any character :data:`_SHOWN` replaces.
_OBEYED = re.compile("[" + "".join(re.escape(chr(code)) for code in _SHOWN) + "]")

#: What may reach the terminal as is: colours and styles (SGR, but not 8, "conceal",
#: which could hide a command), and clearing the current line from its start (the
#: progress line's redraw). Nothing moves the cursor elsewhere or talks to the terminal.
_KEPT = re.compile(r"\x1b\[(?![0-9;]*(?<![0-9])8(?![0-9]))[0-9;]*m|\r\x1b\[2K")


#: What :meth:`TerminalSafe.write_control` writes: the plan's redraw, never agent text.
_CONTROL = re.compile(r"\x1b\[[1-9][0-9]*F\x1b\[J")


def terminal_safe(text: str) -> str:
    """``text`` with every character a terminal would obey rather than show replaced."""
    text = scrub(text)
    if _OBEYED.search(text) is None:
        # Nearly all text: nothing to replace (str.translate walks it character by character
        # when it is not ASCII: about 50 ms for a 250 KB transcript, a search about 5).
        return text
    if "\x1b" not in text:
        return text.translate(_SHOWN)
    out: list[str] = []
    kept = 0
    for match in _KEPT.finditer(text):
        out += [text[kept : match.start()].translate(_SHOWN), match.group(0)]
        kept = match.end()
    out.append(text[kept:].translate(_SHOWN))
    return "".join(out)


class TerminalSafe:
    """A text stream that writes :func:`terminal_safe` text to ``stream``."""

    def __init__(self, stream: IO[str]) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        self._stream.write(terminal_safe(text))
        return len(text)

    def write_control(self, sequence: str) -> None:
        """The printer's own cursor movement: up ``n`` lines to their start and clear the
        screen below (``ESC [ n F ESC [ J``, redrawing the plan in place); nothing else."""
        if _CONTROL.fullmatch(sequence) is None:
            raise ValueError(f"not a cursor movement this stream writes: {sequence!r}")
        self._stream.write(sequence)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, fileno, encoding, ...
        return getattr(self._stream, name)


@contextlib.contextmanager
def terminal_safe_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` made terminal-safe for the block (the commands
    that talk to a person; never an agent's stdio channel)."""
    saved = sys.stdout, sys.stderr
    sys.stdout = TerminalSafe(sys.stdout)
    sys.stderr = TerminalSafe(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
