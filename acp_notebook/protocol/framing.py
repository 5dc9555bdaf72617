"""Newline-delimited framing: the lines of a byte stream, each bounded in size.

spec: ACP messages are JSON-RPC objects, one per line, delimited by ``\\n``; a message
never contains a newline. What a line holds is the peer's business
(:mod:`~acp_notebook.protocol.jsonrpc`); this module only cuts the stream and refuses lines
longer than ``max_line_bytes`` without ever holding more than that in memory.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import anyio.abc

__all__ = ["READ_SIZE", "read_lines"]

#: Bytes asked of the stream per read.
READ_SIZE = 1 << 16


async def read_lines(
    receive: anyio.abc.ByteReceiveStream,
    *,
    max_line_bytes: int,
    on_line: Callable[[bytes], None],
    on_too_long: Callable[[bytes], None],
) -> None:
    """Call ``on_line(line)`` for every line (without its newline) until the stream ends.

    A line longer than ``max_line_bytes`` is not delivered: ``on_too_long(start)`` gets
    its beginning instead, and the rest of it is skipped as it arrives. A last line
    without its newline is delivered too.
    """
    pieces: list[bytes] = []  # the unfinished line, kept as pieces: no O(n²) joins
    size = 0
    discarding = False  # inside a line longer than max_line_bytes

    def deliver(line: bytes) -> None:
        # A long line that arrived together with its newline never went through the
        # unfinished-line check below.
        if len(line) > max_line_bytes:
            on_too_long(line)
        else:
            on_line(line)

    read = receive.receive
    while True:
        try:
            chunk = await read(READ_SIZE)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            break
        newline = chunk.find(b"\n")
        if newline < 0:
            if not discarding:
                pieces.append(chunk)
                size += len(chunk)
                if size > max_line_bytes:
                    on_too_long(b"".join(pieces))
                    pieces.clear()
                    size = 0
                    discarding = True
            continue
        if discarding:
            discarding = False
        elif pieces:
            pieces.append(chunk[:newline])
            deliver(b"".join(pieces))
        else:
            deliver(chunk[:newline])
        pieces.clear()
        size = 0
        lines = chunk[newline + 1 :].split(b"\n")
        rest = lines.pop()
        for line in lines:  # deliver(line), inlined: this loop runs once per message
            if len(line) > max_line_bytes:
                on_too_long(line)
            else:
                on_line(line)
        if rest:
            pieces.append(rest)
            size = len(rest)
    if pieces and not discarding:
        deliver(b"".join(pieces))
