"""Tab completion for ``%acp``: the options and controls, the values an option offers
(presets after ``-a``, policies after ``-p``), and the agent's slash commands (known
once a session announced them)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from IPython.core.interactiveshell import InteractiveShell


class _Event(Protocol):
    line: str
    symbol: str


def completions(line: str, symbol: str, slash_commands: Callable[[], Iterable[str]]) -> list[str]:
    """Candidates for the word being typed (``symbol``) on a ``%acp`` line."""
    # The tables of options and controls load on the first Tab, not at `%load_ext`.
    from .controls import REGISTRY
    from .options import OPTION_BY_FLAG

    words = line.split()
    before = (
        words[-2] if symbol and len(words) >= 2 else (words[-1] if words and not symbol else "")
    )
    option = OPTION_BY_FLAG.get(before)
    if option is not None and option.choices is not None:
        return [c for c in option.choices() if c.startswith(symbol)]
    if symbol.startswith("-"):
        return sorted(f for f in [*REGISTRY.by_flag, *OPTION_BY_FLAG] if f.startswith(symbol))
    if symbol.startswith("/"):
        return sorted(c for c in {f"/{name}" for name in slash_commands()} if c.startswith(symbol))
    return []


def install(shell: InteractiveShell, slash_commands: Callable[[], Iterable[str]]) -> None:
    def complete(_self: object, event: _Event) -> list[str]:
        return completions(event.line, event.symbol, slash_commands)

    shell.set_hook("complete_command", complete, str_key="%acp")
    shell.set_hook("complete_command", complete, str_key="%%acp")
