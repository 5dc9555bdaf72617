"""How the ``acp-notebook`` command ends: its exit codes, and one line on stderr."""

from __future__ import annotations

import sys

from ..protocol.stdio import EXIT_INTERRUPTED

__all__ = ["EXIT_AGENT_FAILED", "EXIT_INTERRUPTED", "EXIT_USAGE", "fail"]

EXIT_AGENT_FAILED = 1
#: argparse's code for a usage error.
EXIT_USAGE = 2


def fail(message: str, code: int = EXIT_AGENT_FAILED) -> int:
    """Say what went wrong in one line on stderr; the exit code."""
    print(f"acp-notebook: {message}", file=sys.stderr)
    return code
