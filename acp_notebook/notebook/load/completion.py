"""Tab completion for ``%acp``: the options and controls, the values an option offers
(presets after ``-a``, policies after ``-p``), and the agent's slash commands (known
once a session announced them).

These words are the only candidates where they apply: IPython splits words at ``/`` and
``-``, so its own matchers (Jedi, Python names) would offer ``/repr`` and ``/reversed``
after ``%acp /re``, and ``--str`` after ``%acp --st``. The matcher here (IPython's
matcher API v2) runs first and suppresses them there; anywhere else on the line (the
prompt's words, a path, a ``{name}``) it offers nothing and the others complete as usual.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from IPython.core.interactiveshell import InteractiveShell

#: How the matcher is known to IPython (``IPCompleter.suppress_competing_matchers`` and
#: ``disable_matchers`` take it).
MATCHER_ID = "acp_notebook.completion"
_ACP_LINE = re.compile(r"\s*%%?acp(\s|$)")
_LAST_WORD = re.compile(r"\S*$")


class _Event(Protocol):
    line: str
    symbol: str


def completions(line: str, symbol: str, slash_commands: Callable[[], Iterable[str]]) -> list[str]:
    """Candidates for the word being typed (``symbol``) on a ``%acp`` line."""
    return _candidates(line, symbol, slash_commands) or []


def _candidates(
    line: str, symbol: str, slash_commands: Callable[[], Iterable[str]]
) -> list[str] | None:
    """The candidates where ``symbol`` is an option, an option's value or a slash command
    (possibly none); None anywhere else on the line."""
    # The tables of options and controls load on the first Tab, not at `%load_ext`.
    from ..controls import REGISTRY
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
    if symbol.startswith("/") and _prompt_starts_here(words[1 : len(words) - bool(symbol)]):
        return sorted(c for c in {f"/{name}" for name in slash_commands()} if c.startswith(symbol))
    return None


def _prompt_starts_here(before: list[str]) -> bool:
    """Whether the words after ``%acp`` and before the one typed are all options (and
    their values): a slash command is the prompt's first word; later, ``/`` starts a path."""
    from .options import OPTION_BY_FLAG

    takes_value = False
    for word in before:
        if takes_value:
            takes_value = False
        elif word.startswith("-"):
            option = OPTION_BY_FLAG.get(word)
            takes_value = option is not None and option.metavar is not None
        else:
            return False
    return True


def matcher(slash_commands: Callable[[], Iterable[str]]) -> Callable[[Any], dict[str, Any]]:
    """The IPython matcher (API v2) of ``%acp`` lines (see the module docstring)."""
    from IPython.core.completer import SimpleCompletion, completion_matcher

    @completion_matcher(identifier=MATCHER_ID, priority=1000, api_version=2)
    def complete(context: Any) -> dict[str, Any]:
        line = context.text_until_cursor
        if not _ACP_LINE.match(line):
            return {"completions": [], "suppress": False}
        word = _LAST_WORD.search(line).group()  # type: ignore[union-attr]  # always matches
        found = _candidates(line, word, slash_commands)
        if found is None:
            return {"completions": [], "suppress": False}
        # IPython lets only a non-empty result suppress the other matchers: with nothing
        # to offer, the word as typed (Tab changes nothing) rather than Python names.
        kind = "slash command" if word.startswith("/") else "option" if word[:1] == "-" else "value"
        shown = [SimpleCompletion(text, type=kind) for text in (found or [word])]
        return {"completions": shown, "suppress": True, "matched_fragment": word, "ordered": True}

    return complete


def install(shell: InteractiveShell, slash_commands: Callable[[], Iterable[str]]) -> None:
    completer = getattr(shell, "Completer", None)
    try:
        made = matcher(slash_commands)
    except ImportError:  # an IPython before the matcher API v2 (8.6): the command hook
        made = None
    if made is not None and completer is not None and hasattr(completer, "custom_matchers"):
        uninstall(shell)
        completer.custom_matchers.append(made)
        return

    def complete(_self: object, event: _Event) -> list[str]:
        return completions(event.line, event.symbol, slash_commands)

    shell.set_hook("complete_command", complete, str_key="%acp")
    shell.set_hook("complete_command", complete, str_key="%%acp")


def uninstall(shell: InteractiveShell) -> None:
    """Remove the matcher :func:`install` added (``%unload_ext``, ``%reload_ext``)."""
    completer = getattr(shell, "Completer", None)
    matchers = getattr(completer, "custom_matchers", None)
    if matchers is not None:
        matchers[:] = [m for m in matchers if getattr(m, "matcher_identifier", None) != MATCHER_ID]
