"""Environment variables that change what a command runs, rather than what it works on.

``BASH_ENV=f bash -c 'echo hi'`` sources ``f`` first, ``BASH_FUNC_echo%%`` replaces
``echo`` with a function, ``LD_PRELOAD`` loads code into every program, ``PATH`` decides
which program a name is, ``PYTHONPATH``/``NODE_OPTIONS``/``PERL5OPT``/``RUBYOPT`` load code
into an interpreter, and ``GIT_SSH_COMMAND``, ``GIT_EXTERNAL_DIFF`` or ``GIT_CONFIG_*``
make git run commands. A command line that sets one (``PATH=. ls``, ``env LD_PRELOAD=x
ls``) or a ``terminal/create`` whose ``env`` names one cannot be read with certainty: the
words no longer say what runs. Every ``GIT_*`` variable counts except the few that only
name an author or a date; so does a name no shell would accept as a variable.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

__all__ = ["env_doubts", "variable_doubt"]

#: Variables that change which program runs, or what runs with it.
_RUNS = frozenset(
    {"PATH", "IFS", "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4",
     "CDPATH", "GLOBIGNORE", "HOME", "ZDOTDIR", "XDG_CONFIG_HOME", "EDITOR", "VISUAL",
     "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE", "BROWSER", "SHELL", "NODE_OPTIONS",
     "NODE_PATH", "PERLLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS",
     "CLASSPATH", "GCONV_PATH", "SSH_ASKPASS", "SUDO_ASKPASS", "TMUX", "PROMPT"}
)  # fmt: skip
#: Prefixes of such variables (``LD_PRELOAD``, ``PYTHONSTARTUP``, ``NPM_CONFIG_SCRIPT_SHELL``).
_RUNS_PREFIXES = (
    "LD_", "DYLD_", "BASH_FUNC_", "PYTHON", "PERL5", "RUBY", "NPM_CONFIG_", "PIP_",
)  # fmt: skip
#: ``GIT_*`` variables that only name who and when: every other one may run a command.
_GIT_HARMLESS = frozenset(
    {"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
     "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT"}
)  # fmt: skip
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: Pagers that only show text: ``PAGER=cat`` (agents set it to keep output plain) runs
#: nothing else.
_PAGERS = frozenset({"PAGER", "GIT_PAGER", "MANPAGER"})
_PLAIN_PAGERS = frozenset({"", "cat", "less", "more", "less -R", "less -FRX", "less -FX"})


def variable_doubt(name: str, value: str | None = None) -> str | None:
    """Why setting the variable ``name`` (to ``value``, when known) changes what a command
    runs (None: it does not)."""
    upper = name.upper()
    if upper in _PAGERS and value is not None and value.strip() in _PLAIN_PAGERS:
        return None
    if upper in _RUNS or upper.startswith(_RUNS_PREFIXES):
        return f"sets {name}"
    if not _NAME.fullmatch(name):
        return f"sets `{name}`, which is no variable name a shell reads"
    if upper.startswith("GIT_") and upper not in _GIT_HARMLESS:
        return f"sets {name}, which can make git run commands"
    return None


def env_doubts(env: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[str]:
    """Why an environment (names and values) changes what a command runs."""
    pairs = env.items() if isinstance(env, Mapping) else env
    return list(dict.fromkeys(d for n, v in pairs if (d := variable_doubt(n, v)) is not None))
