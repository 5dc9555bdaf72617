"""The demo agent's command line: ``python -m acp_notebook.agents.demo [OPTIONS]``
(also ``acp-notebook demo-agent``); the options are in the package docstring."""

from __future__ import annotations

import argparse
import hashlib
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from ..._state_dir import state_dir
from ...protocol.stdio import serve_stdio
from .server import DEFAULT_PAGE_SIZE, DemoOptions, serve

__all__ = ["main"]


#: ``--state-file`` not given: the default below.
_DEFAULT = Path("\0default")


def _default_state_file(require_auth: bool) -> Path | None:
    """``ACP_DEMO_STATE_FILE`` (empty: none), else a file in the per-user state directory
    for this notebook (``JPY_SESSION_NAME``, which the kernel's agents inherit) or, without
    one, this working directory: the sessions of a notebook outlive its kernel. Agents with
    other options (``--require-auth``) keep files of their own."""
    given = os.environ.get("ACP_DEMO_STATE_FILE")
    if given is not None:
        return Path(given) if given else None
    owner = os.environ.get("JPY_SESSION_NAME") or os.path.realpath(os.getcwd())
    key = f"{owner}\0{'auth' if require_auth else ''}"
    digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return state_dir() / "demo" / f"{digest}.json"


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
    state = parser.add_mutually_exclusive_group()
    state.add_argument(
        "--state-file",
        type=Path,
        default=_DEFAULT,
        help="keep sessions in this JSON file so later processes (a restarted kernel) can "
        "list, load and resume them (env ACP_DEMO_STATE_FILE; default: one file per notebook, "
        "or per working directory, under $XDG_STATE_HOME/acp-notebook/demo/)",
    )
    state.add_argument(
        "--no-state-file",
        dest="state_file",
        action="store_const",
        const=None,
        help="keep sessions in memory only (also ACP_DEMO_STATE_FILE set to an empty value)",
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
        state_file=(
            _default_state_file(bool(args.require_auth))
            if args.state_file == _DEFAULT
            else args.state_file
        ),
        page_size=args.page_size,
    )
    return serve_stdio(lambda receive, send: serve(receive, send, options))
