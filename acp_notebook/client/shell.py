"""Reading a shell command line the way a person checks it: its simple commands, what each
one runs, the files its redirections write, and whether it can be read with certainty.

A command is read by a small lexer that follows bash's quoting (``'…'``, ``"…"``,
backslashes, ``$(…)`` and backticks, comments only at the start of an unquoted word) into
the commands of its pipelines and of its ``&&``/``||``/``;`` chains and subshells;
``$(…)``, backticks and ``<(…)`` are read as commands of their own, and so is the payload
of ``sh -c``/``bash -c``/``eval``. Wrappers (``sudo``, ``env``, ``nohup``, ``timeout``,
``xargs``…) are looked through to the command they run.

This is a reading aid, not a shell: it does not expand variables, globs or aliases. What
it cannot read with certainty — ANSI-C or locale quoting, heredocs, brace groups,
arithmetic, process substitution, functions, keywords, ``eval``/``alias``/``source``,
assignments to ``PATH``/``IFS``/…, a command name that is expanded, writes by redirection,
anything unclosed — :func:`uncertain` names, so a rule never allows it unasked (fail
closed). The risk rating (``danger.py``) and the permission rules (``rules.py``) both read
commands through here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from .shell_lexer import Pipeline, Reading, SimpleCommand, read

__all__ = [
    "MAX_DEPTH",
    "Pipeline",
    "SimpleCommand",
    "Unwrapped",
    "command_forms",
    "command_parts",
    "flags",
    "is_harmless_target",
    "is_interpreter",
    "pipelines",
    "positional",
    "shell_payload",
    "substitutions",
    "uncertain",
    "unwrap",
]

#: How deep ``sh -c '…'`` inside ``bash -c "…"`` (or ``$(…)`` inside ``$(…)``) is followed.
MAX_DEPTH = 4

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
#: Where a write by redirection changes no file of anyone's.
_HARMLESS_TARGET = re.compile(r"^(/dev/(null|stdout|stderr|tty|fd/[0-9]+)|&?[0-9]+-?|&?-)$")

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh"})
_INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php"})
#: Commands that run the rest of their words as another command.
_WRAPPERS = frozenset(
    {
        "env",
        "nohup",
        "time",
        "nice",
        "ionice",
        "command",
        "exec",
        "builtin",
        "xargs",
        "stdbuf",
        "timeout",
        "caffeinate",
    }
)
#: Commands that run another command as root (or as another user).
_AS_ROOT = frozenset({"sudo", "su", "doas", "pkexec", "run0"})
#: Words that make a command line more than a list of simple commands: what follows them
#: runs under conditions, loops or definitions this reader does not follow.
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
     "esac", "select", "function", "coproc", "{", "}", "[[", "]]", "!"}
)  # fmt: skip
#: Builtins that change what later words mean (aliases, functions, variables, options).
_META_BUILTINS = frozenset(
    {"eval", "alias", "unalias", "source", ".", "trap", "enable", "hash", "shopt", "set",
     "export", "declare", "typeset", "local", "readonly", "unset"}
)  # fmt: skip
#: Variables that change which program a name runs, or what runs before it.
_RISKY_VARIABLES = frozenset(
    {"PATH", "IFS", "BASH_ENV", "ENV", "PROMPT_COMMAND", "SHELLOPTS", "BASHOPTS", "PS4",
     "CDPATH", "GLOBIGNORE", "HOME", "PYTHONPATH", "PYTHONSTARTUP", "NODE_OPTIONS",
     "PERL5OPT", "RUBYOPT", "GIT_CONFIG_GLOBAL", "GIT_DIR", "EDITOR", "PAGER"}
)  # fmt: skip
_EXPANDED_NAME = re.compile(r"[$`*?\[{}~]")
#: Characters bash reads differently from this reader (``\r`` is part of a word there).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


@dataclass
class Unwrapped:
    """What a command line runs once its wrappers are looked through."""

    argv: list[str]
    #: A wrapper runs it as root (``sudo``, ``su``, ``doas``…).
    as_root: bool = False
    #: A wrapper adds arguments of its own (``xargs rm`` runs ``rm`` with the input's words).
    adds_arguments: bool = False


def pipelines(command: str) -> list[Pipeline]:
    """The pipelines of a command line, each a list of simple commands, in order."""
    return read(command).pipelines


def substitutions(command: str) -> list[str]:
    """The commands inside ``$(…)``, backticks and ``<(…)`` (each nested one is a
    substitution of its outer one)."""
    return list(read(command).substitutions)


def is_harmless_target(target: str) -> bool:
    """A redirection target that is no file of anyone's (``/dev/null``, ``&2``)."""
    return bool(_HARMLESS_TARGET.match(target))


def is_interpreter(name: str) -> bool:
    """A shell or a language interpreter: a program that runs code it is given."""
    return name in _SHELLS or name in _INTERPRETERS or bool(re.fullmatch(r"python3?(\.\d+)?", name))


def shell_payload(argv: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` / ``bash -lc SCRIPT`` / ``eval WORDS``."""
    if not argv:
        return None
    name = os.path.basename(argv[0])
    if name == "eval":
        return " ".join(argv[1:]) or None
    if name not in _SHELLS:
        return None
    for index, word in enumerate(argv[1:], 1):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return argv[index + 1] if index + 1 < len(argv) else None
        if not word.startswith("-"):
            return None
    return None


def unwrap(argv: list[str]) -> Unwrapped:
    """The command a wrapper runs (``sudo -u x cmd`` → ``cmd``), and whether it is as root."""
    root = adds = False
    argv = list(argv)
    while argv and _ASSIGNMENT.match(argv[0]):
        argv.pop(0)  # FOO=1 cmd
    for _ in range(MAX_DEPTH):
        if not argv:
            break
        name = os.path.basename(argv[0])
        if name in _AS_ROOT:
            root = True
            if name == "su":
                payload = argv[argv.index("-c") + 1] if "-c" in argv[:-1] else None
                return Unwrapped(["sh", "-c", payload] if payload else [], root, adds)
            rest = argv[1:]
            while rest and rest[0].startswith("-"):
                flag = rest.pop(0)
                if flag in ("-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D") and rest:
                    rest.pop(0)
            argv = rest
        elif name in _WRAPPERS:
            rest = argv[1:]
            while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
                flag = rest.pop(0)
                if flag in ("-n", "-u", "-s", "-k", "-I", "-L", "-P", "-o", "-S") and rest:
                    rest.pop(0)  # an option with a value (nice -n 5, env -u NAME, xargs -I {})
            if name == "timeout" and rest:
                rest.pop(0)  # the duration
            adds = adds or name == "xargs"
            argv = rest
        else:
            break
    return Unwrapped(argv, root, adds)


def flags(argv: list[str]) -> tuple[set[str], set[str]]:
    """Short flag letters (``-rf`` → r, f) and long options (``--force``) of a command."""
    short: set[str] = set()
    long: set[str] = set()
    for word in argv[1:]:
        if word == "--":
            break
        if word.startswith("--"):
            long.add(word.split("=", 1)[0])
        elif word.startswith("-") and len(word) > 1:
            short.update(word[1:])
    return short, long


def positional(argv: list[str]) -> list[str]:
    """The arguments of a command that are not options."""
    out: list[str] = []
    options = True
    for word in argv[1:]:
        if options and word == "--":
            options = False
        elif options and word.startswith("-") and len(word) > 1:
            continue
        else:
            out.append(word)
    return out


def _walk(command: str) -> list[tuple[SimpleCommand, Reading]]:
    """Every simple command of ``command`` — of its pipelines and chains, of ``$(…)`` and
    backticks, of ``sh -c`` payloads — with the reading of the level it belongs to."""
    out: list[tuple[SimpleCommand, Reading]] = []

    def walk(text: str, depth: int) -> None:
        reading = read(text)
        for pipeline in reading.pipelines:
            for cmd in pipeline:
                out.append((cmd, reading))
                payload = shell_payload(unwrap(cmd.argv).argv)
                if payload is not None and depth < MAX_DEPTH:
                    walk(payload, depth + 1)
        for sub in reading.substitutions:
            if depth < MAX_DEPTH:
                walk(sub, depth + 1)

    walk(command, 0)
    return out


def command_parts(command: str) -> list[str]:
    """Every simple command of ``command`` as text: the commands of its pipelines and
    chains, of ``$(…)``/backticks, and of ``sh -c`` payloads (what a rule must cover)."""
    return [cmd.text for cmd, _ in _walk(command)]


def command_forms(command: str) -> list[str]:
    """Every part of ``command`` as written and as the risk rater sees it — wrappers and
    assignments looked through, the program by its name (``sudo /bin/rm -rf x`` is also
    ``rm -rf x``): what a deny or ask rule is matched against."""
    forms: list[str] = []
    for cmd, _ in _walk(command):
        forms.append(cmd.text)
        unwrapped = unwrap(cmd.argv)
        argv = unwrapped.argv
        if argv:
            extra = ["…"] if unwrapped.adds_arguments else []
            forms.append(" ".join([os.path.basename(argv[0]), *argv[1:], *extra]))
    return list(dict.fromkeys(forms))


def uncertain(command: str) -> str | None:
    """Why ``command`` cannot be read with certainty (None: it can). Such a command is
    never allowed by a rule without asking (the rules fail closed)."""
    doubts: list[str] = ["control characters"] if _CONTROL.search(command) else []
    parts = _walk(command)
    for cmd, reading in parts:
        doubts += reading.doubts
        doubts += _doubts_of(cmd)
    if not parts:
        doubts += read(command).doubts or ["no command"]
    if _nesting(command) >= MAX_DEPTH:
        doubts.append("shells nested too deep to follow")
    return "; ".join(dict.fromkeys(doubts)) or None


def _nesting(command: str, depth: int = 0) -> int:
    if depth >= MAX_DEPTH:
        return depth
    deepest = depth
    reading = read(command)
    inner = [shell_payload(unwrap(c.argv).argv) for p in reading.pipelines for c in p]
    for text in [*(t for t in inner if t), *reading.substitutions]:
        deepest = max(deepest, _nesting(text, depth + 1))
    return deepest


def _doubts_of(cmd: SimpleCommand) -> list[str]:
    doubts = [
        f"writes `{target}` by redirection"
        for target in cmd.writes
        if not is_harmless_target(target)
    ]
    argv = unwrap(cmd.argv).argv
    # FOO=1 cmd, env FOO=1 cmd, a lone FOO=1: the words before the command it runs.
    for word in cmd.argv[: max(len(cmd.argv) - len(argv), 0)]:
        match = _ASSIGNMENT.match(word)
        name = re.split(r"[\[+=]", word, maxsplit=1)[0] if match else ""
        if name in _RISKY_VARIABLES or name.startswith(("LD_", "DYLD_", "BASH_FUNC")):
            doubts.append(f"sets {name}")
    if argv:
        name = argv[0]
        if name in _KEYWORDS or cmd.argv[0] in _KEYWORDS:
            doubts.append(f"the shell keyword `{name if name in _KEYWORDS else cmd.argv[0]}`")
        elif os.path.basename(name) in _META_BUILTINS:
            doubts.append(f"`{name}`, which changes what later commands mean")
        elif _EXPANDED_NAME.search(name):
            doubts.append("a command name that the shell expands")
    elif cmd.argv and cmd.argv[0] in _KEYWORDS:
        doubts.append(f"the shell keyword `{cmd.argv[0]}`")
    return doubts
