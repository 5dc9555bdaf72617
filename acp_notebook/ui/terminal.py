"""A client terminal embedded in a tool call: ``$ command``, live output, exit status.

Read through ``Session.terminal_view(id)``, which keeps answering after
`terminal/release`, so the output stays in the card once the agent is done with it.
Output that only grows is shown as frozen segments plus a live tail (O(n) bytes);
past the transcript's cap, only the last ``MAX_TERMINAL_CHARS`` are shown, like the
saved transcript does.
"""

from __future__ import annotations

import ipywidgets as w

from ..client.render import MAX_TERMINAL_CHARS, TerminalLookup, TerminalView
from .markdown import cut_lines
from .segments import GrowingText, flat_html
from .style import CODE_BG, CODE_FONT, CODE_SIZE, ERROR, FG, MUTED, SUCCESS, esc, span

_PRE = (
    f"margin: 0; padding: 0 8px; background: {CODE_BG}; font-family: {CODE_FONT}; "
    f"font-size: {CODE_SIZE}; line-height: 1.45; white-space: pre-wrap; "
    f"overflow-wrap: anywhere; color: {FG}"
)
_EDGE = f"padding: 4px 8px; background: {CODE_BG}; font-family: {CODE_FONT}; font-size: {CODE_SIZE}"


def _output_html(text: str) -> str:
    return f'<pre style="{_PRE}">{esc(text)}</pre>'


def status_html(view: TerminalView | None) -> str:
    """The last line: exit code, signal, or still running (the transcript's wording)."""
    if view is None or not view.finished:
        return f'<div style="{_EDGE}; color: {MUTED}; border-radius: 0 0 3px 3px">running…</div>'
    if view.signal:
        text, color = f"killed by {view.signal}", ERROR
    else:
        text = f"exit code {view.exit_code}"
        color = SUCCESS if view.exit_code == 0 else ERROR
    return f'<div style="{_EDGE}; color: {color}; border-radius: 0 0 3px 3px">[{esc(text)}]</div>'


class TerminalOutputView:
    """One terminal's command, output and exit status; :meth:`refresh` re-reads it."""

    def __init__(self, terminal_id: str, lookup: TerminalLookup | None) -> None:
        self.terminal_id = terminal_id
        self._lookup = lookup
        self._header = flat_html()
        self._output = GrowingText(_output_html, cut_lines)
        self._tail: w.HTML | None = None  # replaces the segments once output passes the cap
        self._status = flat_html()
        self.widget = w.VBox(
            [self._header, self._output.widget, self._status],
            layout=w.Layout(margin="4px 0", width="100%"),
        )
        self._signature: tuple[object, ...] | None = None
        #: The last snapshot seen; kept if the terminal later disappears (session closed).
        self.view: TerminalView | None = None
        self.refresh()

    @property
    def output_text(self) -> str:
        """The output currently shown (for tests and the inspector)."""
        return self.view.output if self.view is not None else ""

    def refresh(self) -> bool:
        if self.view is not None and self.view.finished:
            return False  # an exited command's output is final
        view = self._lookup(self.terminal_id) if self._lookup is not None else None
        if view is None:
            view = self.view  # released and forgotten, or never known: keep what we showed
        signature = (
            None
            if view is None
            else (
                view.command,
                len(view.output),
                view.truncated,
                view.finished,
                view.exit_code,
                view.signal,
            )
        )
        if signature == self._signature and self._header.value:
            return False
        self._signature = signature
        self.view = view
        if view is None:
            self._header.value = (
                f'<div style="{_EDGE}; color: {MUTED}; border-radius: 3px 3px 0 0">'
                f"terminal {esc(self.terminal_id)} (no output available)</div>"
            )
        else:
            self._header.value = (
                f'<div style="{_EDGE}; border-radius: 3px 3px 0 0; color: {FG}">'
                f"{span('$', f'color: {MUTED}')} {esc(view.command)}</div>"
            )
            self._show_output(view)
        self._status.value = status_html(view)
        return True

    def _show_output(self, view: TerminalView) -> None:
        if self._tail is None and not view.truncated and len(view.output) <= MAX_TERMINAL_CHARS:
            self._output.update(view.output)
            return
        # Past the cap (or the terminal dropped early output): the window slides, so
        # segments would be rebuilt on every refresh; one bounded widget is cheaper.
        if self._tail is None:
            self._tail = flat_html()
            self._output.close()
            self.widget.children = (self._header, self._tail, self._status)
        shown = view.output[-MAX_TERMINAL_CHARS:]
        note = (
            "… (earlier output dropped)\n"
            if view.truncated or len(view.output) > len(shown)
            else ""
        )
        self._tail.value = _output_html(note + shown)
