"""Commands that run another command (``sudo``, ``env``, ``timeout``…), each read by its own
option grammar, so that what a wrapper runs is found where it really starts.

A wrapper's options are read as its getopt reads them: short options clustered (``-rn5``),
a short option's value attached or in the next word (``-n5``, ``-n 5``), long options by
unique prefix with ``=`` or the next word as value (``--sig=KILL``, ``--signal KILL``),
``--`` ending the options; the first word that is not an option is the command (after the
operands some wrappers take first: ``timeout``'s duration, ``chroot``'s directory). An
option this module does not know, a word the shell expands where the command or an option
is read, or a mode that hands the command to a shell of its own (``env -S``, ``sudo -s``,
``su -c``, ``watch``) is a *doubt*: the reader cannot say with certainty what runs.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .shell_lexer import read

__all__ = ["MAX_WRAPPERS", "Unwrapped", "is_assignment", "is_expanded", "unwrap"]

#: How many wrappers in a row are followed (``sudo nice timeout 5 rm``).
MAX_WRAPPERS = 8

_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
#: A word the shell changes before a command sees it: expansions, globs (``*``, ``?``,
#: ``[…]``), brace expansion (``{a,b}``, ``{1..3}``) and a tilde.
_EXPANDED = re.compile(r"[$`*?~]|\[.*\]|\{[^{}]*(,|\.\.)[^{}]*\}")


@dataclass(frozen=True)
class _Grammar:
    """One wrapper's options: short letters with and without a value, long names with and
    without one, how many operands precede the command, and what it means."""

    flags: str = ""
    values: str = ""
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()
    #: Short options whose value is optional (only attached: ``xargs -i{}``).
    optional: str = ""
    #: Words before the command that are not options (``timeout 5``, ``chroot /srv``).
    operands: int = 0
    #: It runs the command as root (or as another user).
    as_root: bool = False
    #: It adds words of its own to the command (``xargs rm`` runs ``rm`` with the input).
    adds_arguments: bool = False
    #: Words with ``=`` before the command set variables (``env A=1 cmd``); unlike the
    #: shell, these wrappers take any name (``env 'BASH_FUNC_echo%%=() { …; }'``).
    assignments: bool = False
    #: Options after which what runs is not the next words as they stand: each gives the
    #: doubt it raises (``sudo -s`` hands the words to a shell).
    doubtful: tuple[tuple[str, str], ...] = ()


def _names(*names: str) -> frozenset[str]:
    return frozenset(names)


_SIGNALS = ("block-signal", "default-signal", "ignore-signal")
_GRAMMARS: dict[str, _Grammar] = {
    "env": _Grammar(
        flags="i0v",
        values="uCS",
        long_flags=_names("ignore-environment", "null", "debug", "list-signal-handling"),
        long_values=_names("unset", "chdir", "split-string", *_SIGNALS),
        assignments=True,
        doubtful=(
            ("S", "`env -S` splits a string into a command"),
            ("split-string", "`env -S` splits a string into a command"),
            ("C", "`env -C` runs the command in another directory"),
            ("chdir", "`env -C` runs the command in another directory"),
            *((name, f"`env --{name}` changes how signals reach the command") for name in _SIGNALS),
        ),
    ),
    "nohup": _Grammar(),
    "builtin": _Grammar(),
    "time": _Grammar(
        flags="pqvV",
        values="f",
        long_flags=_names("portability", "quiet", "verbose"),
        long_values=_names("format"),
    ),
    "nice": _Grammar(flags="0123456789", values="n", long_values=_names("adjustment")),
    "ionice": _Grammar(
        flags="t",
        values="cn",
        long_flags=_names("ignore"),
        long_values=_names("class", "classdata"),
    ),
    "stdbuf": _Grammar(values="ioe", long_values=_names("input", "output", "error")),
    "timeout": _Grammar(
        flags="v",
        values="sk",
        long_flags=_names("preserve-status", "foreground", "verbose"),
        long_values=_names("signal", "kill-after"),
        operands=1,
    ),
    "command": _Grammar(flags="pvV"),
    "exec": _Grammar(flags="cl", values="a"),
    "xargs": _Grammar(
        flags="0prtx",
        values="aEdILnPs",
        optional="eil",
        long_flags=_names(
            "null", "interactive", "no-run-if-empty", "exit", "verbose", "open-tty", "show-limits"
        ),
        long_values=_names(
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ),
        adds_arguments=True,
    ),
    "setsid": _Grammar(flags="cfw", long_flags=_names("ctty", "fork", "wait")),
    "caffeinate": _Grammar(flags="dimsu", values="tw"),
    "chroot": _Grammar(
        long_flags=_names("skip-chdir"),
        long_values=_names("userspec", "groups"),
        operands=1,
        as_root=True,
    ),
    "taskset": _Grammar(flags="ac", long_flags=_names("all-tasks", "cpu-list"), operands=1),
    "sudo": _Grammar(
        flags="AbBEHiklnNPsSV",
        values="CDghpRrtTUu",
        long_flags=_names(
            "askpass",
            "background",
            "bell",
            "preserve-env",
            "set-home",
            "login",
            "non-interactive",
            "preserve-groups",
            "shell",
            "stdin",
            "reset-timestamp",
            "remove-timestamp",
            "list",
        ),
        long_values=_names(
            "close-from",
            "chdir",
            "group",
            "host",
            "prompt",
            "chroot",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "user",
        ),
        as_root=True,
        assignments=True,
        doubtful=(
            ("s", "`sudo -s` hands the command to a shell"),
            ("shell", "`sudo -s` hands the command to a shell"),
            ("i", "`sudo -i` hands the command to a login shell"),
            ("login", "`sudo -i` hands the command to a login shell"),
            ("D", "`sudo -D` runs the command in another directory"),
            ("chdir", "`sudo -D` runs the command in another directory"),
            ("R", "`sudo -R` runs the command in another root directory"),
            ("chroot", "`sudo -R` runs the command in another root directory"),
        ),
    ),
    "doas": _Grammar(
        flags="nsL", values="uC", as_root=True, doubtful=(("s", "`doas -s` runs a shell"),)
    ),
    "pkexec": _Grammar(
        long_flags=_names("keep-cwd", "disable-internal-agent"),
        long_values=_names("user"),
        as_root=True,
    ),
    "run0": _Grammar(values="ug", long_values=_names("user", "group"), as_root=True),
    # Multi-call binaries and wrappers without options of their own: the next word runs.
    "busybox": _Grammar(),
    "toybox": _Grammar(),
    "unbuffer": _Grammar(),
    "chronic": _Grammar(),
}
#: Wrappers whose words are joined and read by a shell: what runs is a script.
_SHELL_WRAPPERS = {
    "watch": "`watch` runs its words through `sh -c`",
    "script": "`script` runs a command through a shell",
    "flock": "`flock` runs a command through a shell",
    "runuser": "`runuser` runs a command through a shell",
    "sg": "`sg` runs a command through a shell",
}


@dataclass
class Unwrapped:
    """What a command line runs once its wrappers are looked through."""

    argv: list[str]
    #: A wrapper runs it as root (``sudo``, ``su``, ``doas``…).
    as_root: bool = False
    #: A wrapper adds arguments of its own (``xargs rm`` runs ``rm`` with the input's words).
    adds_arguments: bool = False
    #: Why what runs cannot be read with certainty (empty: it can).
    doubts: list[str] = field(default_factory=list)
    #: Variables set on the way (``FOO=1``, ``env A=1``, ``sudo A=1``): name and value.
    assigned: list[tuple[str, str]] = field(default_factory=list)


def is_expanded(word: str) -> bool:
    """Whether the shell may change ``word`` before a command sees it (``$X``, a glob,
    braces, ``~``): quotes are gone by now, so a quoted ``'$X'`` counts too."""
    return bool(_EXPANDED.search(word))


def is_assignment(word: str) -> bool:
    """``NAME=value`` (or ``NAME[i]=``, ``NAME+=``): a variable set before a command."""
    return bool(_ASSIGNMENT.match(word))


def _assignment(word: str) -> tuple[str, str]:
    """``NAME=value`` (``NAME[i]=``, ``NAME+=``) as the name and the value."""
    head, _, value = word.partition("=")
    return re.split(r"[\[+]", head, maxsplit=1)[0], value


def unwrap(argv: list[str]) -> Unwrapped:
    """The command the wrappers of ``argv`` run (``sudo -u x nice -n 5 cmd`` → ``cmd``), as
    root or not, with every doubt met on the way. ``NAME=value`` words before the command
    are looked through (and their names kept in ``assigned``)."""
    out = Unwrapped(list(argv))
    rest = list(argv)
    for _ in range(MAX_WRAPPERS):
        while rest and is_assignment(rest[0]):
            out.assigned.append(_assignment(rest.pop(0)))
        if not rest:
            break
        name = os.path.basename(rest[0])
        if name == "su":
            return _su(rest[1:], out)
        if name in _SHELL_WRAPPERS:
            out.doubts.append(_SHELL_WRAPPERS[name])
            script = " ".join(w for w in rest[1:] if not w.startswith("-"))
            out.argv = ["sh", "-c", script] if script else []
            return out
        grammar = _GRAMMARS.get(name)
        if grammar is None:
            break
        out.as_root = out.as_root or grammar.as_root
        out.adds_arguments = out.adds_arguments or grammar.adds_arguments
        rest = _options(name, grammar, rest[1:], out)
    else:
        if rest and os.path.basename(rest[0]) in _GRAMMARS:
            out.doubts.append("wrappers nested too deep to follow")
    out.argv = rest
    if rest and _EXPANDED.search(rest[0]):
        out.doubts.append("a command name that the shell expands")
    return out


def _options(name: str, grammar: _Grammar, words: list[str], out: Unwrapped) -> list[str]:
    """``words`` after ``name``'s options and operands: the command it runs."""
    doubtful = dict(grammar.doubtful)
    split: list[str] = []

    def note(option: str, value: str | None = None) -> None:
        if option in doubtful:
            out.doubts.append(doubtful[option])
        if option in ("S", "split-string") and value is not None:
            # `env -S 'rm -rf x' y`: the string is split into words that come first.
            split.extend(w for p in read(value).pipelines for c in p for w in c.argv)
        if value is not None and _EXPANDED.search(value):
            out.doubts.append(f"`{name}` with an option value that the shell expands")

    def unknown(word: str) -> list[str]:
        out.doubts.append(f"`{name}` with the option `{word}`, which this reader does not know")
        return []

    while words:
        word = words[0]
        if _EXPANDED.search(word) and word.startswith("-"):
            out.doubts.append(f"`{name}` with a word that the shell expands (`{word}`)")
        if word == "--":
            words = words[1:]
            break
        if grammar.assignments and "=" in word and not word.startswith("-"):
            out.assigned.append(_assignment(word))
            words = words[1:]
            continue
        if word == "-" and name == "env":
            words = words[1:]  # `env -` is `env -i`
            continue
        if word.startswith("--"):
            option, eq, value = word[2:].partition("=")
            known = _long(option, grammar)
            if known is None:
                return unknown(word)
            words = words[1:]
            if known in grammar.long_values and not eq:
                if not words:
                    return unknown(word)
                value, words = words[0], words[1:]
            elif known in grammar.long_flags and eq:
                return unknown(word)
            note(known, value if known in grammar.long_values else None)
            continue
        if not word.startswith("-") or word == "-":
            break
        words = words[1:]
        for index, letter in enumerate(word[1:], 1):
            attached = word[index + 1 :]
            if letter in grammar.values:
                if not attached:
                    if not words:
                        return unknown(word)
                    attached, words = words[0], words[1:]
                note(letter, attached)
                break
            if letter in grammar.optional:
                note(letter, attached or None)
                break
            if letter not in grammar.flags:
                return unknown(word)
            note(letter)
    for _ in range(grammar.operands):
        if not words:
            break
        if _EXPANDED.search(words[0]):
            out.doubts.append(f"`{name}` with a word that the shell expands (`{words[0]}`)")
        words = words[1:]
    return [*split, *words]


def _long(option: str, grammar: _Grammar) -> str | None:
    """A long option as getopt reads it: exactly, or by a prefix of one name only."""
    names = grammar.long_flags | grammar.long_values
    if option in names:
        return option
    found = [n for n in names if n.startswith(option)] if option else []
    return found[0] if len(found) == 1 else None


def _su(words: list[str], out: Unwrapped) -> Unwrapped:
    """``su [-] [-l] [USER] -c SCRIPT``: the script, as ``sh -c`` runs it."""
    out.as_root = True
    script: str | None = None
    while words:
        word, words = words[0], words[1:]
        if word in ("-c", "--command") and words:
            script, words = words[0], words[1:]
        elif word.startswith("--command="):
            script = word.partition("=")[2]
        elif word in ("-", "-l", "--login", "-m", "-p", "--preserve-environment"):
            continue
        elif word.startswith("-"):
            out.doubts.append(f"`su` with the option `{word}`, which this reader does not know")
        elif _EXPANDED.search(word):
            out.doubts.append(f"`su` with a word that the shell expands (`{word}`)")
    if script is None:
        out.doubts.append("`su` without `-c` runs a shell")
        out.argv = []
        return out
    out.argv = ["sh", "-c", script]
    return out
