"""A file diff: path, +/− counts, and a unified diff with added and removed lines tinted.

The diff text is ``client.render.unified_diff`` (the same lines, the same cap and the
same "… N more diff lines" note as the saved transcript). A new file (``oldText``
null) is all added lines. Diffs rebuilt from a tool call's ``rawInput`` carry a note
saying so, because the agent did not send them as diffs.
"""

from __future__ import annotations

from ..client.render import MAX_DIFF_LINES, short_path, unified_diff
from ..protocol import models as m
from .segments import flat_html
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

#: A diff whose text is longer than this is cut (one minified line can be megabytes).
MAX_DIFF_CHARS = 200_000

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


def diff_stats(diff_text: str) -> tuple[int, int]:
    """(added, removed) line counts, file header lines excluded."""
    added = removed = 0
    for line in diff_text.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            added += 1
        elif line.startswith("-") and not line.startswith("---"):
            removed += 1
    return added, removed


def diff_body_html(diff_text: str, *, skip_file_headers: bool = False) -> str:
    """The lines of a unified diff, each tinted by its kind."""
    if len(diff_text) > MAX_DIFF_CHARS:
        cut = diff_text[:MAX_DIFF_CHARS]
        diff_text = (
            cut[: cut.rfind("\n") + 1]
            + f"… {len(diff_text) - MAX_DIFF_CHARS:,} more characters of diff\n"
        )
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


def diff_header_html(label: str, diff_text: str, *, new_file: bool, note: str | None) -> str:
    added, removed = diff_stats(diff_text)
    parts = [
        span(esc(label), f"font-family: {CODE_FONT}; font-weight: 600; color: {FG}"),
    ]
    if new_file:
        parts.append(badge("new file", SUCCESS))
    parts.append(span(f"+{added}", f"color: {SUCCESS}; font-family: {CODE_FONT}"))
    parts.append(span(f"−{removed}", f"color: {ERROR}; font-family: {CODE_FONT}"))
    if note:
        parts.append(badge(note, WARN))
    return (
        f'<div style="padding: 3px 8px; background: {CODE_BG}; border-radius: 3px 3px 0 0; '
        f'font-size: {UI_SIZE}; line-height: 1.6; border-bottom: 1px solid var(--jp-border-color2, #e0e0e0)">'
        f"📝 {' '.join(parts)}</div>"
    )


class DiffView:
    """One diff as a single ``HTML`` widget (it never changes: a changed diff is a new view)."""

    def __init__(
        self,
        label: str,
        diff_text: str,
        *,
        new_file: bool = False,
        note: str | None = None,
        skip_file_headers: bool = False,
    ) -> None:
        self.label = label
        self.diff_text = diff_text
        self.new_file = new_file
        self.note = note
        self.html = diff_header_html(
            label, diff_text, new_file=new_file, note=note
        ) + diff_body_html(diff_text, skip_file_headers=skip_file_headers)
        self.widget = flat_html(f'<div style="margin: 4px 0">{self.html}</div>')

    @classmethod
    def from_diff(
        cls,
        diff: m.Diff,
        cwd: str | None,
        *,
        note: str | None = None,
        label: str | None = None,
        new_file: bool | None = None,
    ) -> DiffView:
        """A `diff` tool call content item (or a diff rebuilt from rawInput). ``new_file``
        defaults to the spec's meaning of a null ``oldText``."""
        return cls(
            short_path(label or diff.path, cwd),
            unified_diff(diff, cwd),
            new_file=diff.old_text is None if new_file is None else new_file,
            note=note,
            skip_file_headers=True,  # the path is in the header already
        )

    @classmethod
    def from_patch(cls, patch: str, label: str, *, note: str | None = None) -> DiffView:
        """A unified diff (or apply_patch text) the agent passed as a string."""
        lines = patch.splitlines(keepends=True)
        if len(lines) > MAX_DIFF_LINES:
            lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines\n"]
        return cls(label, "".join(lines), note=note)

    @property
    def stats(self) -> tuple[int, int]:
        return diff_stats(self.diff_text)
