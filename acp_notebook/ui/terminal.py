"""A client terminal embedded in a tool call: ``$ command``, live output, exit status.

Read through ``Session.terminal_view(id)``, which keeps answering after
`terminal/release`, so the output stays in the card once the agent is done with it.
Output that only grows is shown as frozen segments plus a live tail (O(n) bytes);
past the cap (``client.display.terminal_shown``), only the end is shown, like the saved
transcript does. This module is the terminal's HTML, live and saved, without widgets; the
live view (``TerminalOutputView``) is in ``toolcall.py``, the card that shows it.
"""

from __future__ import annotations

from ..client.display import TerminalShown
from .style import CODE_BG, CODE_FONT, CODE_SIZE, ERROR, FG, MUTED, SUCCESS, div, esc, span

_PRE = (
    f"margin: 0; padding: 0 8px; background: {CODE_BG}; font-family: {CODE_FONT}; "
    f"font-size: {CODE_SIZE}; line-height: 1.45; white-space: pre-wrap; "
    f"overflow-wrap: anywhere; color: {FG}"
)
_EDGE = f"padding: 4px 8px; background: {CODE_BG}; font-family: {CODE_FONT}; font-size: {CODE_SIZE}"


def output_html(text: str) -> str:
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
        header_html(shown) + output_html(note + shown.output) + status_html(shown),
        "margin: 4px 0",
    )
