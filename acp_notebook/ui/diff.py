"""A file diff: path, +/− counts, and a unified diff with added and removed lines tinted.

What is shown is ``client.display.diff_shown`` (the same lines, the same caps and the
same "… N more diff lines" note as the saved transcript). A new file (``oldText``
null) is all added lines. Diffs rebuilt from a tool call's ``rawInput`` carry a note
saying so, because the agent did not send them as diffs. HTML only, no widgets: the live
view of a diff (``DiffView``) is in ``toolcall.py``.
"""

from __future__ import annotations

from ..client.display import DiffShown
from .style import (
    ADDED_BG,
    CODE_BG,
    CODE_FONT,
    CODE_SIZE,
    ERROR,
    FG,
    INFO,
    MUTED,
    REMOVED_BG,
    SUCCESS,
    UI_SIZE,
    WARN,
    badge,
    esc,
    span,
)

_LINE = "display: block; padding: 0 8px; min-height: 1.45em"


def _line_style(line: str) -> str:
    if line.startswith(("+++", "---", "diff ", "index ", "*** ")):
        return f"{_LINE}; color: {MUTED}"
    if line.startswith("+"):
        return f"{_LINE}; background: {ADDED_BG}"
    if line.startswith("-"):
        return f"{_LINE}; background: {REMOVED_BG}"
    if line.startswith("@@"):
        return f"{_LINE}; color: {INFO}"
    if line.startswith(("\\", "…")):
        return f"{_LINE}; color: {MUTED}; font-style: italic"
    return _LINE


def diff_body_html(diff_text: str, *, skip_file_headers: bool = False) -> str:
    """The lines of a unified diff, each tinted by its kind."""
    lines = []
    for line in diff_text.splitlines():
        if skip_file_headers and line.startswith(("--- ", "+++ ")):
            continue
        lines.append(f'<span style="{_line_style(line)}">{esc(line) or " "}</span>')
    # The inline-block makes every line's tint as wide as the longest line when scrolling.
    return (
        f'<pre style="margin: 0; padding: 4px 0; background: {CODE_BG}; font-family: {CODE_FONT}; '
        f"font-size: {CODE_SIZE}; line-height: 1.45; overflow-x: auto; color: {FG}; "
        'border-radius: 0 0 3px 3px">'
        f'<div style="display: inline-block; min-width: 100%">{"".join(lines)}</div></pre>'
    )


def diff_header_html(shown: DiffShown) -> str:
    added, removed = shown.stats
    parts = [
        span(esc(shown.label), f"font-family: {CODE_FONT}; font-weight: 600; color: {FG}"),
    ]
    if shown.new_file:
        parts.append(badge("new file", SUCCESS))
    parts.append(span(f"+{added}", f"color: {SUCCESS}; font-family: {CODE_FONT}"))
    parts.append(span(f"−{removed}", f"color: {ERROR}; font-family: {CODE_FONT}"))
    if shown.note:
        parts.append(badge(shown.note, WARN))
    return (
        f'<div style="padding: 3px 8px; background: {CODE_BG}; border-radius: 3px 3px 0 0; '
        f'font-size: {UI_SIZE}; line-height: 1.6; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0)">'
        f"📝 {' '.join(parts)}</div>"
    )


def diff_html(shown: DiffShown) -> str:
    """The whole diff: its header, then its lines. A unified diff of old and new text
    names its file in the header already; a patch the agent passed keeps its own file
    lines."""
    body = diff_body_html(shown.text, skip_file_headers=not shown.patch)
    return f'<div style="margin: 4px 0">{diff_header_html(shown)}{body}</div>'
