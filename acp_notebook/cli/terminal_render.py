"""A turn printed on a terminal as it happens (``acp-notebook run`` with stdout a TTY):
the streamed plain text of :class:`~..client.text_stream.TextPrinter`, styled with ANSI
codes unless ``NO_COLOR`` is set; here, whether to colour, and the agent's start-up lines.

Piped, or with ``--format markdown``, ``run`` prints the Markdown transcript at the end
instead (:func:`acp_notebook.cli.run.run`).
"""

from __future__ import annotations

import os
from typing import IO

__all__ = ["StartProgress", "use_color"]


def use_color(stream: IO[str]) -> bool:
    """ANSI styles on a terminal, unless ``NO_COLOR`` is set (https://no-color.org)."""
    return stream.isatty() and not os.environ.get("NO_COLOR")


class StartProgress:
    """While the agent starts, its stderr lines (``npx``/``uvx`` download progress) as one
    status line on a terminal, rewritten in place and cleared once it answered."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.active = stream.isatty()

    def __call__(self, line: str) -> None:
        line = line.strip()
        if self.active and line:
            width = max(20, _columns() - 20)
            self.stream.write(f"\r\x1b[2Kstarting the agent… {line[:width]}")
            self.stream.flush()

    def done(self) -> None:
        if self.active:
            self.active = False
            self.stream.write("\r\x1b[2K")
            self.stream.flush()


def _columns() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 80
