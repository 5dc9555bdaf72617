"""A terminal's output as the agent reads it: decoded incrementally, and at most a byte
limit of it kept, the beginning dropped first (spec: truncate from the beginning, at a
character boundary)."""

from __future__ import annotations

import codecs

__all__ = ["TerminalOutput"]


class TerminalOutput:
    """Decoded output, at most ``limit`` bytes of UTF-8, dropping from the beginning."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.truncated = False
        # Always valid UTF-8: it holds re-encoded decoder output.
        self._buf = bytearray()
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed(self, chunk: bytes, *, final: bool = False) -> bool:
        """Add raw bytes; True when the visible text changed."""
        # The incremental decoder keeps an incomplete multibyte tail for the next read,
        # so a character split across two reads comes out whole.
        text = self._decoder.decode(chunk, final)
        if not text:
            return False
        self._buf += text.encode("utf-8")
        excess = len(self._buf) - self.limit
        if excess > 0:
            # spec: drop from the beginning at a character boundary — skip forward over
            # continuation bytes (0b10xxxxxx) so no multibyte sequence is split, even if
            # that keeps slightly fewer bytes than the limit.
            cut = excess
            while cut < len(self._buf) and self._buf[cut] & 0xC0 == 0x80:
                cut += 1
            del self._buf[:cut]  # bytearray deletes from the front in O(1) amortised
            self.truncated = True
        return True

    def text(self) -> str:
        return self._buf.decode("utf-8")
