"""The demo agent's command line: ``python -m acp_notebook.agents.demo [OPTIONS]``
(also ``acp-notebook demo-agent``); the options are in the package docstring."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ...protocol.stdio import serve_stdio
from .server import DEFAULT_PAGE_SIZE, DemoOptions, serve

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-notebook demo-agent",
        description="The acp_notebook demo agent: an ACP agent on stdio that demonstrates the protocol.",
    )
    parser.add_argument(
        "--require-auth",
        action="store_true",
        default=os.environ.get("ACP_DEMO_REQUIRE_AUTH", "") not in ("", "0", "false", "no"),
        help="answer session/new, load and resume with -32000 until authenticate "
        "(method demo-login) is called (env ACP_DEMO_REQUIRE_AUTH=1)",
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        default=os.environ.get("ACP_DEMO_STATE_FILE") or None,
        help="keep sessions in this JSON file so later processes can list and load them "
        "(env ACP_DEMO_STATE_FILE)",
    )
    parser.add_argument(
        "--page-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        help=f"sessions per session/list page (default {DEFAULT_PAGE_SIZE})",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what to log to stderr (default WARNING)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo agent on stdin/stdout until stdin closes; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.page_size < 1:
        parser.error("--page-size must be at least 1")
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="demo-agent %(levelname)s %(name)s: %(message)s",
    )
    options = DemoOptions(
        require_auth=bool(args.require_auth),
        state_file=Path(args.state_file) if args.state_file else None,
        page_size=args.page_size,
    )
    return serve_stdio(lambda receive, send: serve(receive, send, options))
