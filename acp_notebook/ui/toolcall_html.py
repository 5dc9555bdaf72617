"""A tool call card's HTML pieces, live and saved: its header (icon, title, kind, status
badge), its locations, its frame and edge colour, and the lines of its permission
requests (the risk warning, whether it runs confined, the decision). No widgets here: the saved transcript
(``transcript_html.py``) is built from these without importing ipywidgets (a headless
turn never loads it); the live card (``toolcall.py``) and the permission prompt
(``permission.py``) import them from here."""

from __future__ import annotations

from ..client.danger import Danger
from ..client.display import kind_icon, location_label, status_text
from ..client.permission_request import PermissionRequest
from ..client.toolcall import ToolCallState
from .markdown import inline_markdown
from .style import (
    BORDER,
    ERROR,
    FG,
    MUTED,
    SMALL_SIZE,
    STATUS_COLORS,
    UI_SIZE,
    WARN,
    badge,
    code,
    esc,
    span,
)

WAITING = "waiting for permission"


def status_label(call: ToolCallState) -> str:
    """The badge text: the call's status, or that it waits for the user."""
    if not call.finished and any(r.pending for r in call.permissions):
        return WAITING
    return call.status


def edge_color(call: ToolCallState) -> str:
    """The colour of the card's left edge: its status badge's."""
    return STATUS_COLORS.get(status_label(call), STATUS_COLORS["pending"])


#: The card's frame (its left edge is :func:`edge_color`), live and saved alike.
CARD_BORDER = f"1px solid {BORDER}"
CARD_PADDING = "4px 8px"
CARD_MARGIN = "4px 0"


def header_html(call: ToolCallState) -> str:
    icon = kind_icon(call.kind)
    status = status_label(call)
    color = STATUS_COLORS.get(status, MUTED)
    title = inline_markdown(call.shown_title) if call.shown_title else code(call.tool_call_id)
    shown = f"🔐 {WAITING}" if status == WAITING else status_text(call)
    kind = span(esc("· " + call.kind), f"color: {MUTED}; font-size: {SMALL_SIZE}")
    return (
        f'<div style="font-size: {UI_SIZE}; line-height: 1.6; color: {FG}; display: flex; '
        'gap: 6px; align-items: baseline; flex-wrap: wrap">'
        f'<span>{icon}</span><span style="font-weight: 600">{title}</span>'
        f"{kind}{badge(shown, color)}</div>"
    )


def locations_html(call: ToolCallState, cwd: str | None) -> str:
    if not call.locations:
        return ""
    names = ", ".join(code(location_label(loc, cwd)) for loc in call.locations)
    return (
        f'<div style="color: {MUTED}; font-size: {SMALL_SIZE}; line-height: 1.6">📍 {names}</div>'
    )


def warning_line(danger: Danger | None) -> str:
    """The risk rating above the buttons: "⚠️ Risky: deletes files recursively; runs as
    root" (danger, red, bold) or "🔸 Caution: uses the network (curl)" (amber)."""
    if danger is None:
        return ""
    color, weight = (ERROR, "bold") if danger.level == "danger" else (WARN, "normal")
    tint = "rgba(211, 47, 47, 0.10)" if danger.level == "danger" else "rgba(245, 124, 0, 0.10)"
    return (
        f'<div class="acp-permission-{danger.level}" style="color: {color}; font-weight: '
        f"{weight}; font-size: {UI_SIZE}; background: {tint}; border-left: 3px solid {color}; "
        f'padding: 2px 6px; margin: 2px 0">{inline_markdown(danger.label)}</div>'
    )


def sandbox_line(request: PermissionRequest) -> str:
    """Whether what is asked runs confined ("🔒 confined to `project/` · network on", as
    the turn's header says it); "" when the request is about neither a command nor a
    write (``PermissionRequest.sandbox``)."""
    if not request.sandbox:
        return ""
    return (
        f'<div class="acp-permission-sandbox" style="color: {MUTED}; font-size: {SMALL_SIZE}; '
        f'margin: 2px 0">{esc(request.sandbox)}</div>'
    )


def decision_line(request: PermissionRequest) -> str:
    if request.state == "pending":
        text, color = "Waiting for your answer…", WARN
    elif request.state == "selected" and request.chosen is not None:
        icon = "✅" if request.chosen.allows else "⛔"
        text, color = f"{icon} Permission: {request.describe()}", FG
    else:
        text, color = f"⏹️ Permission: {request.describe()}", MUTED
    return span(esc(text), f"color: {color}; font-size: {UI_SIZE}")
