"""The input transformers that make a top-level ``%acp`` what ``magics.py`` describes: the
whole line reaches the magic as typed, and the cell awaits the turn."""

from __future__ import annotations

import re
from collections.abc import Callable, Coroutine
from typing import Any

from IPython.core.interactiveshell import InteractiveShell

AWAIT_HELPER = "__acp_notebook_await__"
# The transformed forms of `%acp ...` / `x = %acp ...` / `%%acp` at the top level of a cell.
_LINE_MAGIC = re.compile(
    r"^(?P<assign>[A-Za-z_][A-Za-z0-9_]*\s*=\s*)?get_ipython\(\)\.run_line_magic\('acp', (?P<args>.*)\)\s*$"
)
_CELL_MAGIC = re.compile(r"^get_ipython\(\)\.run_cell_magic\('acp', (?P<args>.*)\)\s*$", re.DOTALL)


_ACP_LINE = re.compile(r"^%acp(?=\s|$)(?P<rest>.*)$")

#: What ``await __acp_notebook_await__(line, cell)`` calls.
Awaited = Callable[[str, "str | None"], Coroutine[Any, Any, None]]


def escape_transformer(lines: list[str]) -> list[str]:
    """Turn a top-level ``%acp`` line into the magic call before IPython reads it.

    A prompt is free text: IPython would take ``%acp what can you do?`` for a help
    request on ``do`` (a trailing ``?``); here the whole line reaches the magic as typed.
    """
    out = []
    for line in lines:
        match = _ACP_LINE.match(line.rstrip("\n"))
        if match:
            line = f"get_ipython().run_line_magic('acp', {match.group('rest').strip()!r})\n"
        out.append(line)
    return out


def await_transformer(lines: list[str]) -> list[str]:
    """Make top-level ``%acp`` awaited, so the cell stays busy while clicks still work."""
    text = "".join(lines)
    cell = _CELL_MAGIC.match(text)
    if cell:
        return [f"await {AWAIT_HELPER}({cell.group('args')})\n"]
    out = []
    for line in lines:
        match = _LINE_MAGIC.match(line.rstrip("\n"))
        if match:
            line = (
                f"{match.group('assign') or ''}await {AWAIT_HELPER}({match.group('args')}, None)\n"
            )
        out.append(line)
    return out


def install(shell: InteractiveShell, awaited: Awaited) -> None:
    shell.user_ns[AWAIT_HELPER] = awaited
    shell.user_ns_hidden[AWAIT_HELPER] = awaited
    if escape_transformer not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(escape_transformer)
    if await_transformer not in shell.input_transformers_post:
        shell.input_transformers_post.append(await_transformer)


def uninstall(shell: InteractiveShell) -> None:
    if escape_transformer in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(escape_transformer)
    if await_transformer in shell.input_transformers_post:
        shell.input_transformers_post.remove(await_transformer)
    shell.user_ns.pop(AWAIT_HELPER, None)
    shell.user_ns_hidden.pop(AWAIT_HELPER, None)
