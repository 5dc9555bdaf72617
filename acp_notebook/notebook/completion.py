"""Tab completion for ``%acp``: options and controls, preset names after ``-a``, and the
agent's slash commands (known once a session announced them)."""

from __future__ import annotations

from typing import Any

from .options import _FLAGS, _VALUED, CONTROLS, VALUED_CONTROLS


def completions(magics: Any, line: str, symbol: str) -> list[str]:
    """Candidates for the word being typed (``symbol``) on a ``%acp`` line."""
    words = line.split()
    before = (
        words[-2] if symbol and len(words) >= 2 else (words[-1] if words and not symbol else "")
    )
    if before in ("-a", "--agent"):
        from ..agents.presets import load_presets

        return sorted(p for p in load_presets() if p.startswith(symbol))
    if before in ("-p", "--permissions"):
        return [p for p in ("ask", "allow", "deny") if p.startswith(symbol)]
    if symbol.startswith("-"):
        names = [*CONTROLS, *VALUED_CONTROLS, *_VALUED, *_FLAGS]
        return sorted(
            n
            for n in names
            if n.startswith(symbol)
            and n.startswith("--" if len(symbol) > 1 and symbol[1] == "-" else "-")
        )
    if symbol.startswith("/"):
        commands: set[str] = set()
        for runtime in magics.agents.runtimes.values():
            for session in runtime.sessions.values():
                commands.update(f"/{c.name}" for c in session.transcript.commands)
        return sorted(c for c in commands if c.startswith(symbol))
    return []


def install(shell: Any, magics: Any) -> None:
    def complete(_self: Any, event: Any) -> list[str]:
        return completions(magics, event.line, event.symbol)

    shell.set_hook("complete_command", complete, str_key="%acp")
    shell.set_hook("complete_command", complete, str_key="%%acp")
