"""Content the demo agent generates: the PNG of ``/image``, the long Markdown of
``/long``, and Markdown as a tool call's content. Deterministic: the same bytes every time.
"""

from __future__ import annotations

import struct
import zlib
from typing import Any

from ...protocol import models as m

__all__ = ["demo_png", "long_markdown_pieces", "text_content"]


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def text_content(text: str) -> dict[str, Any]:
    """A tool call ``content`` item holding Markdown text."""
    return m.ContentToolCallContent(content=m.TextContentBlock(text=text)).to_wire()


def demo_png(size: int = 64) -> bytes:
    """A small valid RGB PNG, the same bytes every time: four coloured quadrants with a
    diagonal gradient (built with zlib and struct, no imaging library)."""
    rows = []
    half = size // 2
    for y in range(size):
        row = bytearray([0])  # filter type 0: the raw pixels follow
        for x in range(size):
            shade = (x + y) * 255 // (2 * size - 2)
            if y < half:
                pixel = (40, 90 + shade // 2, 200) if x < half else (250, 180, shade // 3)
            else:
                pixel = (60 + shade // 2, 180, 90) if x < half else (230, 70, 70 + shade // 2)
            row += bytes(pixel)
        rows.append(bytes(row))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + _png_chunk(b"IEND", b"")
    )


def long_markdown_pieces(count: int) -> list[str]:
    """``count`` pieces of Markdown that concatenate into one long document (headings,
    paragraphs, lists, code blocks), about 40 bytes a piece; one piece per streamed chunk."""
    pieces: list[str] = []
    section = 0
    while len(pieces) < count:
        section += 1
        pieces.append(f"\n## Section {section}\n\n")
        pieces.append(f"This is section {section} of a long streamed reply, sent as ")
        pieces.append("many small `agent_message_chunk` updates in a row.\n\n")
        for item in range(1, 6):
            pieces.append(f"- Item {item} of section {section}: one chunk per list item.\n")
        pieces.append("\n```python\n")
        pieces.append(f"def section_{section}() -> int:\n")
        pieces.append(f"    return {section} * {section}  # code fences survive streaming\n")
        pieces.append("```\n")
        pieces.append(f"> Quote {section}: a client should render this while it streams.\n")
    del pieces[count:]
    if pieces and not pieces[-1].endswith("\n"):
        pieces[-1] += "\n"
    # A fence left open by the cut would swallow whatever the client shows next.
    if sum(piece.count("```") for piece in pieces) % 2:
        pieces[-1] += "```\n"
    return pieces
