"""A terminal's output as the agent reads it: decoded incrementally, and at most a byte
limit of it kept, the beginning dropped first (spec: truncate from the beginning, at a
character boundary)."""

from __future__ import annotations

import codecs
from collections import deque

__all__ = ["TerminalOutput"]


class TerminalOutput:
    """Decoded output, at most ``limit`` bytes of UTF-8, dropping from the beginning.

    Kept as the encoded pieces as they came (each whole characters), so a flood costs each
    piece once: dropping from the beginning pops whole pieces and cuts at most one (one
    flat buffer moved its whole kept megabyte on every read once it was full)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.truncated = False
        # Always valid UTF-8, piece by piece: they hold re-encoded decoder output.
        self._parts: deque[bytes] = deque()
        self._size = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: bytes, *, final: bool = False) -> bool:
        """Add raw bytes; True when the visible text changed."""
        # The incremental decoder keeps an incomplete multibyte tail for the next read,
        # so a character split across two reads comes out whole.
        text = self._decoder.decode(chunk, final)
        if not text:
            return False
        data = text.encode("utf-8")
        self._parts.append(data)
        self._size += len(data)
        excess = self._size - self.limit
        if excess > 0:
            self.truncated = True
            while self._parts and excess >= len(self._parts[0]):
                excess -= len(self._parts[0])
                self._size -= len(self._parts.popleft())
        if excess > 0 and self._parts:
            # spec: drop from the beginning at a character boundary — skip forward over
            # continuation bytes (0b10xxxxxx) so no multibyte sequence is split, even if
            # that keeps slightly fewer bytes than the limit (a piece starts a character).
            first, cut = self._parts[0], excess
            while cut < len(first) and first[cut] & 0xC0 == 0x80:
                cut += 1
            self._parts[0] = first[cut:]
            self._size -= cut
        return True

    def text(self) -> str:
        data = b"".join(self._parts)
        self._parts = deque([data])
        return data.decode("utf-8")
