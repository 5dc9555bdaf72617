"""A window of a file's lines, read in chunks (``fs/read_text_file`` with ``line`` /
``limit``): a huge file is never held whole."""

from __future__ import annotations

from typing import BinaryIO

from ..protocol.errors import INVALID_PARAMS, RpcError

__all__ = ["read_window"]

_CHUNK = 1024 * 1024


def read_window(f: BinaryIO, start: int, limit: int | None, max_bytes: int, path: str) -> bytes:
    """Lines ``start`` .. ``start + limit - 1`` (1-based) of ``f``, terminators included.

    Streams in chunks so a huge file is never held whole, and keeps only the requested
    lines. Lines end at ``\\n`` (so ``\\r\\n`` stays attached to its line and a lone
    ``\\r`` does not start a new one): the same numbering as ``grep -n`` / ``wc -l``,
    which is where agents get line numbers from. ``\\n`` is never part of a multibyte
    UTF-8 sequence, so splitting raw bytes on it is safe.
    """
    stop = None if limit is None else start + limit
    if stop is not None and stop <= start:
        return b""
    out = bytearray()
    line_no = 1
    while True:
        chunk = f.read(_CHUNK)
        if not chunk:
            break
        if line_no < start:
            newlines = chunk.count(b"\n")
            if line_no + newlines < start:  # the window starts in a later chunk
                line_no += newlines
                continue
        i = 0
        while i < len(chunk):
            nl = chunk.find(b"\n", i)
            end = len(chunk) if nl < 0 else nl + 1
            if line_no >= start:
                out += chunk[i:end]
                if len(out) > max_bytes:
                    raise RpcError(
                        INVALID_PARAMS,
                        f"The requested lines of {path} exceed {max_bytes} bytes; ask for fewer lines with `limit`.",
                        {"path": path, "maxBytes": max_bytes},
                    )
            if nl < 0:
                break
            line_no += 1
            i = end
            if stop is not None and line_no >= stop:
                return bytes(out)
    return bytes(out)
