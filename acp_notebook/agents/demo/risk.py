"""How careful the demo agent is before it acts: its own judgement, as every agent has its own.

An agent decides for itself which actions it asks about and which answers it remembers; the
client rates every request again by its own reading and decides by its own rules, so nothing
here is a safeguard. The rank (0, 1 or 2) decides two things: a command ranked 2 is offered
no "Allow always" (what is allowed always must be safe to allow again unseen), and an
"Allow always" answer covers actions of its rank or less, never a riskier one.

* 2 — hard to undo: a forced or recursive ``rm``, ``dd``, ``mkfs``, ``shred``, ``sudo``,
  ``git reset --hard``, ``git clean``, a force push, a download piped into a shell;
* 1 — worth a look: the network, installing packages, stopping processes, a file outside
  the session's directory;
* 0 — nothing noticed.

A command line is read word by word (``shlex``) between its separators (``;``, ``&&``,
``||``, ``|``, ``&``, subshells and substitutions); anything not recognised ranks 0.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Iterable

__all__ = ["command_risk", "path_risk"]

#: Where one command of a line ends and the next begins.
_SEPARATORS = re.compile(r"&&|\|\||\$\(|[;|&\n()`]")
#: Output piped into a shell runs whatever came before it.
_INTO_SHELL = re.compile(r"\|\s*(?:sudo\s+)?(?:ba|z|da)?sh\b")
_HARD_TO_UNDO = frozenset({"dd", "shred", "sudo", "su", "doas", "shutdown", "reboot", "halt"})
_WORTH_A_LOOK = frozenset(
    {"curl", "wget", "ssh", "scp", "rsync", "nc", "kill", "pkill", "killall"}
    | {"pip", "pip3", "npm", "yarn", "apt", "apt-get", "brew", "conda", "uv"}
)


def command_risk(command: str) -> int:
    """The rank of a shell command line: the highest of its commands'."""
    rank = 2 if _INTO_SHELL.search(command) else 0
    for part in _SEPARATORS.split(command):
        words = _words(part)
        if words:
            rank = max(rank, _rank(words))
    return rank


def path_risk(paths: Iterable[str], cwd: str) -> int:
    """1 when a path (relative ones taken from ``cwd``) lies outside ``cwd``, else 0."""
    base = os.path.realpath(cwd)
    for path in paths:
        real = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
        if os.path.commonpath([real, base]) != base:
            return 1
    return 0


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part)
    except ValueError:  # an unclosed quote: its words as written
        return part.split()


def _rank(words: list[str]) -> int:
    name = os.path.basename(words[0])
    args = words[1:]
    short_flags = {c for w in args if w.startswith("-") and not w.startswith("--") for c in w[1:]}
    if name in _HARD_TO_UNDO or name.startswith("mkfs"):
        return 2
    if name == "rm" and (short_flags & {"r", "R", "f"} or {"--recursive", "--force"} & set(args)):
        return 2
    if name == "git" and args and _git_hard_to_undo(args[0], args[1:]):
        return 2
    return 1 if name in _WORTH_A_LOOK else 0


def _git_hard_to_undo(sub: str, args: list[str]) -> bool:
    if sub == "reset":
        return "--hard" in args
    if sub == "push":
        return bool({"-f", "--force", "--force-with-lease"} & set(args))
    return sub == "clean"
