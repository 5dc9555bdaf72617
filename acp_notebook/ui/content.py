"""How one ACP content block looks inline: text, image, audio, resource link, embedded
resource, or a block this client does not know (collapsed raw JSON, never dropped).

Wording and limits come from ``client/render.py`` so a live cell and its saved
transcript say the same thing.
"""

from __future__ import annotations

import re
from typing import Any

from ..client.render import (
    MAX_EMBEDDED_IMAGE_BYTES,
    MAX_RESOURCE_LINES,
    human_bytes,
    lang_of,
    short_path,
)
from ..protocol import models as m
from .markdown import highlight_code, render_markdown
from .style import FG, MUTED, UI_SIZE, code, details, div, esc, json_pre, link, span

_BASE64 = re.compile(r"^[A-Za-z0-9+/=\s]*$")
_IMAGE_MIME = re.compile(r"^image/[\w.+-]+$", re.IGNORECASE)
_AUDIO_MIME = re.compile(r"^audio/[\w.+-]+$", re.IGNORECASE)

#: Images are shown at most this tall (the cell should not become one picture).
IMAGE_MAX_HEIGHT = "420px"
#: Plain text content of a tool call longer than this is cut (a whole file read back).
MAX_TEXT_CHARS = 50_000


def _line(body_html: str) -> str:
    return div(body_html, f"margin: 2px 0; font-size: {UI_SIZE}; color: {FG}; line-height: 1.5")


def _decoded_size(data: str) -> int:
    return len(data) * 3 // 4


def _inline_data(data: str, mime: str, pattern: re.Pattern[str]) -> str | None:
    """A ``data:`` URI for ``data`` when it is small, base64 and of the expected type:
    anything else could break out of the attribute or bloat the notebook."""
    if (
        _decoded_size(data) <= MAX_EMBEDDED_IMAGE_BYTES
        and pattern.match(mime)
        and _BASE64.match(data)
    ):
        return f"data:{mime};base64,{data}"
    return None


def image_html(block: m.ImageContentBlock) -> str:
    size = human_bytes(_decoded_size(block.data))
    src = _inline_data(block.data, block.mime_type, _IMAGE_MIME)
    if src is None:
        note = f"🖼 image {block.mime_type}, {size} (too large or not inline-able)"
        if block.uri:
            return _line(f"{esc(note)} · {link(block.uri, block.uri)}")
        return _line(esc(note))
    return div(
        f'<img src="{src}" alt="{esc(f"image ({block.mime_type}, {size})")}" '
        f'style="max-width: 100%; max-height: {IMAGE_MAX_HEIGHT}; border-radius: 3px">',
        "margin: 4px 0",
    )


def audio_html(block: m.AudioContentBlock) -> str:
    size = human_bytes(_decoded_size(block.data))
    src = _inline_data(block.data, block.mime_type, _AUDIO_MIME)
    label = span(esc(f"🔊 audio {block.mime_type}, {size}"), f"color: {MUTED}")
    if src is None:
        return _line(label)
    return _line(f'{label}<br><audio controls src="{src}"></audio>')


def resource_link_html(block: m.ResourceLinkContentBlock, cwd: str | None) -> str:
    label = block.title or block.name or short_path(block.uri.removeprefix("file://"), cwd)
    target = block.uri
    extra = ", ".join(
        x
        for x in (block.mime_type, human_bytes(block.size) if block.size is not None else None)
        if x
    )
    body = "🔗 " + link(target, label)
    if extra:
        body += " " + span(esc(f"({extra})"), f"color: {MUTED}")
    if block.description:
        body += "<br>" + span(esc(block.description), f"color: {MUTED}")
    return _line(body)


def embedded_resource_html(block: m.EmbeddedResourceContentBlock, cwd: str | None) -> str:
    resource: Any = block.resource
    if isinstance(resource, m.TextResourceContents):
        name = short_path(resource.uri.removeprefix("file://"), cwd)
        lines = resource.text.splitlines(keepends=True)
        size = human_bytes(len(resource.text.encode()))
        summary = f"📎 {code(name)} " + esc(f"({resource.mime_type or 'text'}, {size})")
        shown = "".join(lines[:MAX_RESOURCE_LINES])
        body = highlight_code(shown, lang_of(resource.uri))
        if len(lines) > MAX_RESOURCE_LINES:
            body += div(esc(f"… {len(lines) - MAX_RESOURCE_LINES} more lines"), f"color: {MUTED}")
        return details(summary, body)
    if isinstance(resource, m.BlobResourceContents):
        name = short_path(resource.uri.removeprefix("file://"), cwd)
        size = human_bytes(_decoded_size(resource.blob))
        return _line(f"📎 {code(name)} " + esc(f"({resource.mime_type or 'binary'}, {size})"))
    raw = resource.to_wire() if hasattr(resource, "to_wire") else {}
    return details(esc("Embedded resource (shown raw)"), json_pre(raw))


def unknown_html(what: str, raw: Any) -> str:
    """Something this client does not know, kept and shown raw (never dropped)."""
    kind = raw.get("type", "?") if isinstance(raw, dict) else "?"
    return details(f"Unknown {esc(what)} {code(str(kind))} (shown raw)", json_pre(raw))


def text_html(text: str) -> str:
    if len(text) > MAX_TEXT_CHARS:
        text = (
            text[:MAX_TEXT_CHARS]
            + f"\n\n… {len(text) - MAX_TEXT_CHARS:,} more characters not shown"
        )
    return render_markdown(text)


def block_html(block: m.ContentBlock, cwd: str | None) -> str:
    """Any content block as HTML."""
    if isinstance(block, m.TextContentBlock):
        return text_html(block.text)
    if isinstance(block, m.ImageContentBlock):
        return image_html(block)
    if isinstance(block, m.AudioContentBlock):
        return audio_html(block)
    if isinstance(block, m.ResourceLinkContentBlock):
        return resource_link_html(block, cwd)
    if isinstance(block, m.EmbeddedResourceContentBlock):
        return embedded_resource_html(block, cwd)
    raw = block.to_wire() if hasattr(block, "to_wire") else {"value": repr(block)}
    return unknown_html("content", raw)
