"""Colours, fonts and tiny HTML helpers shared by the views.

Styles are inline (but for streamed Markdown, see ``markdown.MARKDOWN_SHEET``): JupyterLab
ships no stylesheet for our markup, and a widget's HTML must look right in the light and
the dark theme alike. So colours are JupyterLab
CSS variables with a light-theme fallback (classic notebook, VS Code), and tints are
translucent so they sit on any background.

Everything the agent sent is untrusted: it goes through :func:`esc` (or the Markdown
renderer, which escapes too) before it reaches an ``HTML`` widget, because the widget
sets ``innerHTML`` with no sanitising.
"""

from __future__ import annotations

import html
from typing import Any

from ..client.display import raw_json, safe_href

# Text colours.
FG = "var(--jp-content-font-color1, #212121)"
MUTED = "var(--jp-ui-font-color2, #616161)"
FAINT = "var(--jp-ui-font-color3, #9e9e9e)"
LINK = "var(--jp-content-link-color, #1976d2)"

# State colours (JupyterLab's own, so a theme that restyles them restyles us).
SUCCESS = "var(--jp-success-color1, #388e3c)"
ERROR = "var(--jp-error-color1, #d32f2f)"
WARN = "var(--jp-warn-color1, #f57c00)"
INFO = "var(--jp-brand-color1, #1976d2)"

# Surfaces.
BORDER = "var(--jp-border-color2, #e0e0e0)"
CODE_BG = "var(--jp-cell-editor-background, #f7f7f7)"
SOFT_BG = "var(--jp-layout-color2, #eeeeee)"
ADDED_BG = "rgba(46, 160, 67, 0.16)"
REMOVED_BG = "rgba(248, 81, 73, 0.16)"

CODE_FONT = "var(--jp-code-font-family, SFMono-Regular, Menlo, Consolas, monospace)"
CODE_SIZE = "var(--jp-code-font-size, 13px)"
UI_SIZE = "var(--jp-ui-font-size1, 13px)"
SMALL_SIZE = "var(--jp-ui-font-size0, 11px)"

#: The container of rendered Markdown: JupyterLab's own Markdown class (headings,
#: tables, quotes look like a Markdown cell), plus a line height of our own because the
#: HTML widget otherwise inherits its one-line control height (28 px) for every line.
PROSE_STYLE = f"line-height: 1.55; color: {FG}; overflow-wrap: anywhere; padding-right: 4px"

PRE_STYLE = (
    f"margin: 0; padding: 6px 8px; background: {CODE_BG}; font-family: {CODE_FONT}; "
    f"font-size: {CODE_SIZE}; line-height: 1.45; white-space: pre; overflow-x: auto; "
    f"border-radius: 3px; color: {FG}"
)

# A tool call's status and the colour its badge and card edge take.
STATUS_COLORS = {
    "pending": MUTED,
    "in_progress": INFO,
    "completed": SUCCESS,
    "failed": ERROR,
    "cancelled": MUTED,
    "waiting for permission": WARN,
}


def esc(text: object) -> str:
    """``text`` as HTML text (quotes too, so it is safe inside attributes)."""
    return html.escape(str(text), quote=True)


def span(text_html: str, style: str) -> str:
    return f'<span style="{style}">{text_html}</span>'


def div(body_html: str, style: str = "") -> str:
    return f'<div style="{style}">{body_html}</div>' if style else f"<div>{body_html}</div>"


def badge(text: str, color: str) -> str:
    """A small rounded label, outlined in ``color`` (outline, not fill: readable on any theme)."""
    return span(
        esc(text),
        f"display: inline-block; padding: 0 6px; border: 1px solid {color}; color: {color}; "
        f"border-radius: 9px; font-size: {SMALL_SIZE}; line-height: 16px; vertical-align: 1px; "
        "white-space: nowrap",
    )


def muted(text_html: str, *, italic: bool = False, small: bool = True) -> str:
    style = f"color: {MUTED}; font-size: {SMALL_SIZE if small else UI_SIZE}; line-height: 1.5"
    if italic:
        style += "; font-style: italic"
    return div(text_html, style)


def code(text: str) -> str:
    """Inline code."""
    return span(
        esc(text),
        f"font-family: {CODE_FONT}; font-size: 0.92em; background: {SOFT_BG}; "
        "padding: 0 3px; border-radius: 3px",
    )


def pre(text: str, style: str = PRE_STYLE) -> str:
    return f'<pre style="{style}">{esc(text)}</pre>'


def details(summary_html: str, body_html: str) -> str:
    """A native collapsed section, for content that is rendered once and never again
    (an ``HTML`` widget re-render would close it; live content uses an Accordion)."""
    return (
        f'<details style="margin: 2px 0; font-size: {UI_SIZE}">'
        f'<summary style="cursor: pointer; color: {MUTED}">{summary_html}</summary>'
        f'<div style="margin-top: 4px">{body_html}</div></details>'
    )


def json_pre(value: Any, cwd: str | None = None) -> str:
    """``value`` as pretty JSON; with ``cwd``, the session's directory written as ``.``
    (what a saved notebook keeps must not hold this machine's paths)."""
    return pre(raw_json(value, cwd))


def link(uri: str, label: str) -> str:
    """A link that opens in a new tab (never replaces JupyterLab), or plain text if unsafe."""
    href = safe_href(uri)
    if href is None:
        return esc(label)
    return (
        f'<a href="{esc(href)}" target="_blank" rel="noopener noreferrer" '
        f'style="color: {LINK}">{esc(label)}</a>'
    )
