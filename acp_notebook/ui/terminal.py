"""A client terminal embedded in a tool call: ``$ command``, live output, exit status.

Read through ``Session.terminal_view(id)``, which keeps answering after
`terminal/release`, so the output stays in the card once the agent is done with it.
Output that only grows is shown as frozen segments plus a live tail (O(n) bytes);
past the cap (``client.display.terminal_shown``), only the end is shown, like the saved
transcript does.
"""

from __future__ import annotations

import ipywidgets as w

from ..client.display import TerminalLookup, TerminalShown, terminal_shown
from ..client.terminals import TerminalSnapshot
from . import layouts
from .markdown import cut_lines
from .segments import GrowingText, flat_html
from .style import CODE_BG, CODE_FONT, CODE_SIZE, ERROR, FG, MUTED, SUCCESS, div, esc, span

_PRE = (
    f"margin: 0; padding: 0 8px; background: {CODE_BG}; font-family: {CODE_FONT}; "
    f"font-size: {CODE_SIZE}; line-height: 1.45; white-space: pre-wrap; "
    f"overflow-wrap: anywhere; color: {FG}"
)
_EDGE = f"padding: 4px 8px; background: {CODE_BG}; font-family: {CODE_FONT}; font-size: {CODE_SIZE}"


def _output_html(text: str) -> str:
    return f'<pre style="{_PRE}">{esc(text)}</pre>'


def status_html(shown: TerminalShown) -> str:
    """The last line: exit code, signal, or still running (the transcript's wording)."""
    if shown.status is None:
        return f'<div style="{_EDGE}; color: {MUTED}; border-radius: 0 0 3px 3px">running…</div>'
    color = SUCCESS if shown.exit_code == 0 and not shown.signal else ERROR
    return (
        f'<div style="{_EDGE}; color: {color}; border-radius: 0 0 3px 3px">'
        f"[{esc(shown.status)}]</div>"
    )


def header_html(shown: TerminalShown) -> str:
    """The first line: ``$ command`` (or that the terminal is not known)."""
    if not shown.known:
        return (
            f'<div style="{_EDGE}; color: {MUTED}; border-radius: 3px 3px 0 0">'
            f"terminal {esc(shown.terminal_id)} (no output available)</div>"
        )
    return (
        f'<div style="{_EDGE}; border-radius: 3px 3px 0 0; color: {FG}">'
        f"{span('$', f'color: {MUTED}')} {esc(shown.command)}</div>"
    )


def terminal_html(shown: TerminalShown) -> str:
    """The whole terminal at once, as it ended (the saved transcript's view)."""
    if not shown.known:
        return div(header_html(shown), "margin: 4px 0")
    note = "… (earlier output dropped)\n" if shown.dropped else ""
    return div(
        header_html(shown) + _output_html(note + shown.output) + status_html(shown),
        "margin: 4px 0",
    )


class TerminalOutputView:
    """One terminal's command, output and exit status; :meth:`refresh` re-reads it."""

    def __init__(self, terminal_id: str, lookup: TerminalLookup | None) -> None:
        self.terminal_id = terminal_id
        self._lookup = lookup
        self._header = flat_html()
        self._output = GrowingText(_output_html, cut_lines)
        self._tail: w.HTML | None = None  # replaces the segments once output passes the cap
        self._status = flat_html()
        self.widget = layouts.vbox(
            [self._header, self._output.widget, self._status], margin="4px 0", width="100%"
        )
        self._signature: tuple[object, ...] | None = None
        #: The last snapshot seen; kept if the terminal later disappears (session closed).
        self.snapshot: TerminalSnapshot | None = None
        self.refresh()

    @property
    def output_text(self) -> str:
        """The output currently shown (for tests and the inspector)."""
        return self.snapshot.output if self.snapshot is not None else ""

    def refresh(self) -> bool:
        if self.snapshot is not None and self.snapshot.exited:
            return False  # an exited command's output is final
        snapshot = self._lookup(self.terminal_id) if self._lookup is not None else None
        if snapshot is None:
            snapshot = self.snapshot  # released and forgotten, or never known: keep what we showed
        signature = (
            None
            if snapshot is None
            else (
                snapshot.command,
                len(snapshot.output),
                snapshot.truncated,
                snapshot.exited,
                snapshot.exit_code,
                snapshot.signal,
            )
        )
        if signature == self._signature and self._header.value:
            return False
        self._signature = signature
        self.snapshot = snapshot
        shown = terminal_shown(self.terminal_id, snapshot)
        self._header.value = header_html(shown)
        if shown.known:
            self._show_output(shown)
        self._status.value = status_html(shown)
        return True

    def _show_output(self, shown: TerminalShown) -> None:
        if self._tail is None and not shown.dropped:
            self._output.update(shown.output)
            return
        # Past the cap (or the terminal dropped early output): the window slides, so
        # segments would be rebuilt on every refresh; one bounded widget is cheaper.
        if self._tail is None:
            self._tail = flat_html()
            self._output.close()
            self.widget.children = (self._header, self._tail, self._status)
        note = "… (earlier output dropped)\n" if shown.dropped else ""
        self._tail.value = _output_html(note + shown.output)
