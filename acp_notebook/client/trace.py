"""The ``--trace`` format: one JSON object per JSON-RPC message, in files only their owner
can read (a trace holds the conversation, and the agent's answers may echo secrets).

``acp-notebook run --trace FILE`` and ``acp.messages().save(FILE)`` both write it;
``replay-agent TRACE`` reads it back.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import IO

from ..protocol.bounds import bounded
from ..protocol.trace_event import TraceEvent

__all__ = ["TraceWriter", "open_private", "trace_line"]


def open_private(path: str) -> IO[str]:
    """``path`` opened for writing text, created (or truncated) with mode 0600."""
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    # An existing file keeps its mode otherwise (unless we do not own it).
    with contextlib.suppress(OSError):
        os.fchmod(descriptor, 0o600)
    return os.fdopen(descriptor, "w", encoding="utf-8")


def trace_line(event: TraceEvent) -> str:
    """One line of a trace file (with its newline); any value can be written."""
    try:
        line = json.dumps(event.to_json(), ensure_ascii=False)
        line.encode()  # raises on a lone surrogate
        return line + "\n"
    except (UnicodeEncodeError, RecursionError):
        return json.dumps(bounded(event.to_json()), ensure_ascii=False) + "\n"


class TraceWriter:
    """``--trace FILE``: one line per message, flushed as it happens."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream

    def __call__(self, event: TraceEvent) -> None:
        self.stream.write(trace_line(event))
        self.stream.flush()
