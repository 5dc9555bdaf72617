"""Reading a shell command line the way a person checks it: its simple commands, what each
one runs, and the files its redirections write.

A command is split with :mod:`shlex` into the commands of its pipelines and of its
``&&``/``||``/``;`` chains and subshells; ``$(…)``, backticks and ``<(…)`` are read as
commands of their own, and so is the payload of ``sh -c``/``bash -c``/``eval``. Wrappers
(``sudo``, ``env``, ``nohup``, ``timeout``, ``xargs``…) are looked through to the command
they run.

This is a reading aid, not a shell: it does not expand variables, globs or aliases, and a
command it cannot split (an unclosed quote) is read word by word. The risk rating
(``danger.py``) and the permission rules (``rules.py``) both read commands through here.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field

__all__ = [
    "MAX_DEPTH",
    "Pipeline",
    "SimpleCommand",
    "Unwrapped",
    "command_parts",
    "flags",
    "is_interpreter",
    "pipelines",
    "positional",
    "shell_payload",
    "substitutions",
    "unwrap",
]

#: How deep ``sh -c '…'`` inside ``bash -c "…"`` (or ``$(…)`` inside ``$(…)``) is followed.
MAX_DEPTH = 4

_PUNCTUATION = "();<>|&\n"
#: Operators that end a command. ``|`` and ``|&`` also join a pipeline.
_PIPES = frozenset({"|", "|&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_READ_REDIRECTS = frozenset({"<", "<<", "<<<", "<<-"})
_SUBSTITUTION = re.compile(r"\$\(([^()]*)\)|`([^`]*)`|<\(([^()]*)\)")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")

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


@dataclass
class SimpleCommand:
    """One command of a pipeline: its words, and the files its redirections write."""

    argv: list[str]
    writes: list[str] = field(default_factory=list)
    #: Every token as read (words and redirections), for matching rules against.
    tokens: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return os.path.basename(self.argv[0]) if self.argv else ""

    @property
    def text(self) -> str:
        return " ".join(self.tokens)


Pipeline = list[SimpleCommand]


@dataclass
class Unwrapped:
    """What a command line runs once its wrappers are looked through."""

    argv: list[str]
    #: A wrapper runs it as root (``sudo``, ``su``, ``doas``…).
    as_root: bool = False


def _tokens(command: str) -> list[str]:
    lexer = shlex.shlex(command, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace_split = True
    lexer.whitespace = " \t\r"
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:  # an unclosed quote: read it word by word instead
        return re.findall(r"[;&|()<>\n]+|[^\s;&|()<>]+", command)


def _is_operator(token: str) -> bool:
    return bool(token) and all(ch in _PUNCTUATION for ch in token)


def pipelines(command: str) -> list[Pipeline]:
    """The pipelines of a command line, each a list of simple commands, in order."""
    found: list[Pipeline] = []
    current: Pipeline = []
    words: list[str] = []
    writes: list[str] = []
    tokens: list[str] = []
    pending: str | None = None  # "write" / "read": the next word is a redirection's target
    comment = False

    def end_command() -> None:
        nonlocal words, writes, tokens
        if words and words[-1] == "$":  # `$` of a `$(` that the lexer split off
            words.pop()
            tokens.pop()
        if words or writes:
            current.append(SimpleCommand(words, writes, tokens))
        words, writes, tokens = [], [], []

    def end_pipeline() -> None:
        nonlocal current
        end_command()
        if current:
            found.append(current)
        current = []

    for token in _tokens(command):
        if comment:
            if "\n" in token and _is_operator(token):
                comment = False
                end_pipeline()
            continue
        if _is_operator(token):
            pending = None
            if token in _WRITE_REDIRECTS:
                pending = "write"
                tokens.append(token)
            elif token in _READ_REDIRECTS:
                pending = "read"
                tokens.append(token)
            elif token in _PIPES:
                end_command()
            else:  # ; && || & ( ) <( newline, and runs of them
                end_pipeline()
            continue
        if pending is not None:
            if pending == "write" and not token.isdigit() and token != "-":
                writes.append(token)
            tokens.append(token)
            pending = None
            continue
        if token.startswith("#") and not words:
            comment = True
            continue
        words.append(token)
        tokens.append(token)
    end_pipeline()
    return found


def substitutions(command: str) -> list[str]:
    """The commands inside ``$(…)``, backticks and ``<(…)`` (not nested)."""
    return [
        next(g for g in match.groups() if g is not None)
        for match in _SUBSTITUTION.finditer(command)
    ]


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
    root = False
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
                return Unwrapped(["sh", "-c", payload] if payload else [], root)
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
                if flag in ("-n", "-u", "-s", "-k", "-I", "-L", "-P", "-o") and rest:
                    rest.pop(0)  # an option with a value (nice -n 5, env -u NAME, xargs -I {})
            if name == "timeout" and rest:
                rest.pop(0)  # the duration
            argv = rest
        else:
            break
    return Unwrapped(argv, root)


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


def command_parts(command: str) -> list[str]:
    """Every simple command of ``command`` as text: the commands of its pipelines and
    chains, of ``$(…)``/backticks, and of ``sh -c`` payloads (what a rule must cover)."""
    parts: list[str] = []

    def walk(text: str, depth: int) -> None:
        for pipeline in pipelines(text):
            for cmd in pipeline:
                parts.append(cmd.text)
                payload = shell_payload(unwrap(cmd.argv).argv)
                if payload is not None and depth < MAX_DEPTH:
                    walk(payload, depth + 1)
        for sub in substitutions(text):
            if depth < MAX_DEPTH:
                walk(sub, depth + 1)

    walk(command, 0)
    return parts
