"""How one piece of content looks inline, as HTML: text, image, audio, resource link,
embedded resource, or something this client does not know (collapsed raw JSON, never
dropped).

What is shown — labels, sizes, whether an image may be inlined, the lines kept — comes
from ``client/display.py``, the same facts the saved transcript is written from; this
module only says how they look.
"""

from __future__ import annotations

from ..client.display import (
    FileShown,
    LinkShown,
    MediaShown,
    RawShown,
    Shown,
    TextShown,
    block_shown,
)
from ..protocol import models as m
from .markdown import highlight_code, render_markdown
from .style import FG, MUTED, UI_SIZE, code, details, div, esc, json_pre, link, span

#: Images are shown at most this tall (the cell should not become one picture).
IMAGE_MAX_HEIGHT = "420px"
#: The icon before a medium's label. An image is drawn with ``<img>``; any other kind is
#: played by the HTML element of its name (``<audio controls>``).
MEDIA_ICONS = {"image": "🖼", "audio": "🔊"}


def _line(body_html: str) -> str:
    return div(body_html, f"margin: 2px 0; font-size: {UI_SIZE}; color: {FG}; line-height: 1.5")


def media_html(shown: MediaShown) -> str:
    icon = MEDIA_ICONS.get(shown.kind, "📦")
    if shown.kind == "image" and shown.data_uri is not None:
        return div(
            f'<img src="{shown.data_uri}" alt="{esc(f"image ({shown.type_and_size})")}" '
            f'style="max-width: 100%; max-height: {IMAGE_MAX_HEIGHT}; border-radius: 3px">',
            "margin: 4px 0",
        )
    if shown.kind == "image":
        note = esc(f"{icon} {shown.label} (too large or not inline-able)")
        return _line(f"{note} · {link(shown.uri, shown.uri)}" if shown.uri else note)
    label = span(esc(f"{icon} {shown.label}"), f"color: {MUTED}")
    if shown.data_uri is None:
        return _line(label)
    player = f'<{shown.kind} controls src="{shown.data_uri}"></{shown.kind}>'
    return _line(f"{label}<br>{player}")


def link_html(shown: LinkShown) -> str:
    body = "🔗 " + link(shown.uri, shown.label)
    if shown.details:
        body += " " + span(esc(f"({shown.details})"), f"color: {MUTED}")
    if shown.description:
        body += "<br>" + span(esc(shown.description), f"color: {MUTED}")
    return _line(body)


def file_html(shown: FileShown) -> str:
    head = f"📎 {code(shown.name)} " + esc(f"({shown.type_and_size})")
    if shown.text is None:
        return _line(head)
    body = highlight_code(shown.text, shown.language)
    if shown.more_lines:
        body += div(esc(f"… {shown.more_lines} more lines"), f"color: {MUTED}")
    return details(head, body)


def raw_html(shown: RawShown) -> str:
    """Something this client does not know, kept and shown raw (never dropped)."""
    # The summary's words are this client's; only the kind (escaped by ``code``) is the agent's.
    return details(shown.summary(code), json_pre(shown.raw))


def shown_html(shown: Shown) -> str:
    """One piece of content, from its display facts."""
    if isinstance(shown, TextShown):
        return render_markdown(shown.text)
    if isinstance(shown, MediaShown):
        return media_html(shown)
    if isinstance(shown, LinkShown):
        return link_html(shown)
    if isinstance(shown, FileShown):
        return file_html(shown)
    return raw_html(shown)


def block_html(block: m.ContentBlock, cwd: str | None) -> str:
    """Any content block as HTML."""
    return shown_html(block_shown(block, cwd))
