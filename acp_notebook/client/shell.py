"""Reading a shell command line the way a person checks it: its simple commands, what each
one runs, and whether it can be read with certainty.

A command is read by a small lexer that follows bash's quoting (``'…'``, ``"…"``,
backslashes, ``$(…)`` and backticks, comments only at the start of an unquoted word) into
the commands of its pipelines and of its ``&&``/``||``/``;`` chains and subshells;
``$(…)``, backticks and ``<(…)`` are read as commands of their own, and so is the payload
of ``sh -c``/``bash -c``/``eval`` and the command of ``find -exec``. Wrappers (``sudo``,
``env``, ``nohup``, ``timeout``, ``xargs``…) are looked through to the command they run,
each by its own option grammar (``shell_wrappers.py``).

This is a reading aid, not a shell: it does not expand variables, globs or aliases. It
fails closed: whatever it does not model is a doubt, and :func:`uncertain` names them, so
no rule decides such a command without asking. Doubts are: ANSI-C or locale quoting,
heredocs, brace groups, arithmetic, process substitution, any ``${…}`` but a plain
variable, functions, keywords, ``eval``/``alias``/``source``, assignments that change what
runs (``PATH``, ``LD_*``, ``BASH_ENV``…: ``command_env.py``), a command name the shell
expands (``$(echo rm)``, ``/bin/r[m]``, ``"$X"``), a wrapper option it does not know, a
shell started with options it does not model (``bash -O extglob -c``, ``bash -c --``,
``bash +e``), a script handed to a nested shell that has expansions, code given inline to
an interpreter (``python -c``, ``node -e``, ``perl -e``…), an interpreter reading its
program from a pipe or a here-string, ``git -c``, a written path or a ``cd`` the shell
expands, anything unclosed. The risk rating (``danger.py``), the permission rules
(``rules.py``) and the written paths (``shell_writes.py``) all read commands through here.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from .command_env import env_doubts
from .shell_lexer import Pipeline, Reading, SimpleCommand, read
from .shell_wrappers import Unwrapped, is_assignment, is_expanded, unwrap

__all__ = [
    "MAX_DEPTH",
    "CommandPart",
    "Invocation",
    "Pipeline",
    "SimpleCommand",
    "Unwrapped",
    "command_forms",
    "command_parts",
    "flags",
    "inline_code",
    "is_assignment",
    "is_expanded",
    "is_harmless_target",
    "is_interpreter",
    "pipelines",
    "positional",
    "shell_invocation",
    "shell_payload",
    "substitutions",
    "uncertain",
    "unwrap",
    "unwrapped_argv",
    "walk",
]

#: How deep ``sh -c '…'`` inside ``bash -c "…"`` (or ``$(…)`` inside ``$(…)``) is followed.
MAX_DEPTH = 4

#: Where a write by redirection changes no file of anyone's.
_HARMLESS_TARGET = re.compile(r"^(/dev/(null|stdout|stderr|tty|fd/[0-9]+)|&?[0-9]+-?|&?-)$")

_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "csh", "tcsh"})
_INTERPRETERS = frozenset({"python", "python2", "python3", "perl", "ruby", "node", "php"})
_PYTHON = re.compile(r"(python[23]?(\.\d+)?|pypy3?)")
#: Interpreters and the options that give them their program on the command line.
_INLINE_OPTIONS: dict[str, frozenset[str]] = {
    "perl": frozenset("eE"),
    "ruby": frozenset("e"),
    "node": frozenset("ep"),
    "bun": frozenset("ep"),
    "php": frozenset("rBRFE"),
    "lua": frozenset("e"),
    "Rscript": frozenset("e"),
    "osascript": frozenset("e"),
}
_INLINE_LONG = frozenset({"--eval", "--print", "--command"})
#: Words that make a command line more than a list of simple commands: what follows them
#: runs under conditions, loops or definitions this reader does not follow.
_KEYWORDS = frozenset(
    {"if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case",
     "esac", "select", "function", "coproc", "{", "}", "[[", "]]", "!"}
)  # fmt: skip
#: Builtins that change what later words mean (aliases, functions, variables, options).
_META_BUILTINS = frozenset(
    {"eval", "alias", "unalias", "source", ".", "trap", "enable", "hash", "shopt", "set",
     "export", "declare", "typeset", "local", "readonly", "unset", "let"}
)  # fmt: skip
#: Builtins that take a variable's name, whose subscript (``a[$(touch M)]``) bash evaluates
#: as arithmetic, running the substitution in it even from a quoted word.
_NAMES_VARIABLES = frozenset({"printf", "read", "mapfile", "readarray", "test", "[", "wait"})
_SUBSCRIPT = re.compile(r"\w\[[^]]*[$`]")
#: Characters bash reads differently from this reader (``\r`` is part of a word there).
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")

#: Shell options read with certainty: what they change is how errors and tracing behave.
#: Not ``-i`` (aliases, history expansion, rc files), ``-H`` (``!`` expansion) or ``-k``
#: (``NAME=value`` anywhere sets a variable): they change what the words mean.
_SHELL_FLAGS = frozenset("abeflmnpuvxBCEPT")
_SHELL_LONG = frozenset({"--norc", "--noprofile", "--login", "--posix", "--noediting"})
_SHELL_SET_OPTIONS = frozenset({"pipefail", "errexit", "nounset", "xtrace", "verbose", "noclobber"})


@dataclass
class Invocation:
    """A shell started as ``bash [options] -c SCRIPT``: its script, and its doubts."""

    script: str | None
    doubts: list[str] = field(default_factory=list)
    #: No script and no script file: it runs what its input says (``curl … | sh``).
    reads_input: bool = False


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
    return name in _SHELLS or name in _INTERPRETERS or bool(_PYTHON.fullmatch(name))


def shell_invocation(argv: list[str]) -> Invocation | None:
    """``argv`` as a shell started with options (None: it is not a shell): the script of
    ``-c`` (None when it runs a file or its input) and what in its options this reader does
    not model (``--``, ``-O``, ``+o``, ``--rcfile``, an unknown letter)."""
    if not argv or os.path.basename(argv[0]) not in _SHELLS:
        return None
    found = Invocation(None)
    inline = reads_input = False
    words = argv[1:]
    while words:
        word, words = words[0], words[1:]
        if word in ("--", "-"):
            found.doubts.append(f"`{word}` in a shell's options")
            break
        if word.startswith("--"):
            if word not in _SHELL_LONG:
                found.doubts.append(f"the shell option `{word}`")
                if word in ("--rcfile", "--init-file") and words:
                    words = words[1:]
            continue
        if word.startswith("+"):
            found.doubts.append(f"the shell option `{word}`, which turns an option off")
            if ("o" in word or "O" in word) and words:
                words = words[1:]
            continue
        if not word.startswith("-"):
            words = [word, *words]
            break
        for letter in word[1:]:
            if letter == "c":
                inline = True
            elif letter == "s":
                reads_input = True
            elif letter in "oO":
                value, words = (words[0], words[1:]) if words else ("", words)
                if letter == "O" or value not in _SHELL_SET_OPTIONS:
                    found.doubts.append(f"the shell option `-{letter} {value}`".rstrip())
            elif letter not in _SHELL_FLAGS:
                found.doubts.append(f"the shell option `-{letter}`")
    if inline:
        if words:
            found.script = words[0]
        else:
            found.doubts.append("a shell's `-c` without a script")
    elif not words or words[0] == "-" or reads_input:
        found.reads_input = True
    return found


def shell_payload(argv: list[str]) -> str | None:
    """The script of ``sh -c SCRIPT`` / ``bash -lc SCRIPT`` / ``eval WORDS``; None when
    ``argv`` is none of these, or a shell started with options this reader does not model
    (then the whole command line is what must be read)."""
    if not argv:
        return None
    if os.path.basename(argv[0]) == "eval":
        return " ".join(argv[1:]) or None
    found = shell_invocation(argv)
    return found.script if found is not None and not found.doubts else None


def inline_code(argv: list[str]) -> str | None:
    """How ``argv`` runs a program given on its command line (``python -c``, ``node -e``,
    ``perl -ne``), or None. ``argv`` is what runs, wrappers already looked through."""
    if not argv:
        return None
    name = os.path.basename(argv[0])
    letters = frozenset("c") if _PYTHON.fullmatch(name) else _INLINE_OPTIONS.get(name)
    if letters is None:
        if name in ("deno", "bun") and argv[1:2] == ["eval"]:
            return f"{name} eval"
        return None
    for word in argv[1:]:
        if word == "--" or not word.startswith("-") or word == "-":
            return None
        if word.split("=", 1)[0] in _INLINE_LONG:
            return f"{name} {word.split('=', 1)[0]}"
        if not word.startswith("--") and letters & set(word[1:]):
            return f"{name} {word}"
    return None


def unwrapped_argv(cmd: SimpleCommand) -> list[str]:
    """What ``cmd`` runs, wrappers looked through."""
    return unwrap(cmd.argv).argv


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


def _find_exec(argv: list[str]) -> list[list[str]]:
    """The commands ``find … -exec CMD ;`` runs."""
    if not argv or os.path.basename(argv[0]) != "find":
        return []
    found, words = [], list(argv[1:])
    while words:
        word = words.pop(0)
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((i for i, w in enumerate(words) if w in (";", "+")), len(words))
            found.append(words[:end])
            words = words[end + 1 :]
    return [c for c in found if c]


@dataclass
class CommandPart:
    """One simple command met while walking a command line, with its level's reading."""

    cmd: SimpleCommand
    reading: Reading
    unwrapped: Unwrapped
    #: How many shells, substitutions or ``-exec``s deep it is (0: the line as given).
    depth: int
    #: The command it belongs to pipes its output into it.
    piped: bool = False


def walk(command: str) -> list[CommandPart]:
    """Every simple command of ``command`` — of its pipelines and chains, of ``$(…)`` and
    backticks, of ``sh -c`` payloads and ``find -exec`` — each with what it runs."""
    out: list[CommandPart] = []

    def visit(cmd: SimpleCommand, reading: Reading, depth: int, piped: bool) -> None:
        unwrapped = unwrap(cmd.argv)
        out.append(CommandPart(cmd, reading, unwrapped, depth, piped))
        if depth >= MAX_DEPTH:
            return
        argv = unwrapped.argv
        invocation = shell_invocation(argv)
        payload = invocation.script if invocation is not None else shell_payload(argv)
        if payload is not None:
            descend(payload, depth + 1)
        for inner in _find_exec(argv):
            visit(SimpleCommand(inner, [], inner), reading, depth + 1, False)

    def descend(text: str, depth: int) -> None:
        reading = read(text)
        for pipeline in reading.pipelines:
            for index, cmd in enumerate(pipeline):
                visit(cmd, reading, depth, index > 0)
        for sub in reading.substitutions:
            if depth < MAX_DEPTH:
                descend(sub, depth + 1)

    descend(command, 0)
    return out


def command_parts(command: str) -> list[str]:
    """Every simple command of ``command`` as text: the commands of its pipelines and
    chains, of ``$(…)``/backticks, and of ``sh -c`` payloads (what a rule must cover)."""
    return [part.cmd.text for part in walk(command)]


def command_forms(command: str) -> list[str]:
    """Every part of ``command`` as written and as the risk rater sees it — wrappers and
    assignments looked through, the program by its name (``sudo /bin/rm -rf x`` is also
    ``rm -rf x``): what a deny or ask rule is matched against."""
    forms: list[str] = []
    for part in walk(command):
        forms.append(part.cmd.text)
        argv = part.unwrapped.argv
        if argv:
            extra = ["…"] if part.unwrapped.adds_arguments else []
            forms.append(" ".join([os.path.basename(argv[0]), *argv[1:], *extra]))
    return list(dict.fromkeys(forms))


def uncertain(command: str) -> str | None:
    """Why ``command`` cannot be read with certainty (None: it can). No rule decides such
    a command without asking (the rules fail closed). Writes by redirection to a path
    read literally are no doubt: they are facts (``shell_writes.write_targets``)."""
    doubts: list[str] = ["control characters"] if _CONTROL.search(command) else []
    parts = walk(command)
    for part in parts:
        doubts += part.reading.doubts
        doubts += _doubts_of(part)
    if not parts:
        doubts += read(command).doubts or ["no command"]
    if max((p.depth for p in parts), default=0) >= MAX_DEPTH:
        doubts.append("shells nested too deep to follow")
    return "; ".join(dict.fromkeys(doubts)) or None


def _doubts_of(part: CommandPart) -> list[str]:
    from .shell_writes import written_words  # one module each; it reads commands through here

    cmd, unwrapped = part.cmd, part.unwrapped
    doubts = list(unwrapped.doubts)
    doubts += env_doubts(unwrapped.assigned)
    doubts += [
        f"writes to `{word}`, a path the shell expands"
        for word in [*cmd.writes, *written_words(unwrapped.argv)]
        if not is_harmless_target(word) and is_expanded(word)
    ]
    argv = unwrapped.argv
    if not argv:
        if cmd.argv and cmd.argv[0] in _KEYWORDS:
            doubts.append(f"the shell keyword `{cmd.argv[0]}`")
        return doubts
    name = os.path.basename(argv[0])
    if argv[0] in _KEYWORDS or cmd.argv[0] in _KEYWORDS:
        doubts.append(f"the shell keyword `{argv[0] if argv[0] in _KEYWORDS else cmd.argv[0]}`")
    elif name in _META_BUILTINS:
        doubts.append(f"`{argv[0]}`, which changes what later commands mean")
    invocation = shell_invocation(argv)
    if invocation is not None:
        doubts += invocation.doubts
        # The line as given is read whole; a nested shell's script is expanded by the
        # outer shell first (`bash -c "echo $X"`), so what it runs is not what is written.
        if invocation.script is not None and ("$" in invocation.script or "`" in invocation.script):
            doubts.append(f"a script given to `{name} -c` with expansions")
        if invocation.reads_input and (part.piped or _fed_text(cmd)):
            doubts.append(f"`{name}` runs a script from its input, which this reader does not see")
    code = inline_code(argv)
    if code is not None:
        doubts.append(f"code given inline (`{code}`)")
    elif (
        is_interpreter(name)
        and invocation is None
        and (part.piped or _fed_text(cmd))
        and _reads_stdin(argv)
    ):
        doubts.append(f"`{name}` runs a program from its input, which this reader does not see")
    if name in _NAMES_VARIABLES and any(_SUBSCRIPT.search(w) for w in argv[1:]):
        doubts.append(f"`{name}` with a subscript the shell evaluates as arithmetic")
    git_options = _git_globals(argv) if name == "git" else []
    if any(w in ("-c", "--config-env") or w.startswith("--config-env=") for w in git_options):
        doubts.append("`git -c`, whose settings can run commands")
    if name in ("cd", "pushd") and any(is_expanded(w.lstrip("~")) for w in positional(argv)):
        doubts.append("changes to a directory the shell expands")
    return doubts


def _fed_text(cmd: SimpleCommand) -> bool:
    """Its input is a here-string or a heredoc (``bash <<< 'rm -rf x'``)."""
    return any(t in ("<<<", "<<", "<<-") or t.endswith(("<<<", "<<", "<<-")) for t in cmd.tokens)


def _reads_stdin(argv: list[str]) -> bool:
    """An interpreter with no program file: it reads its program from its input."""
    if any(w in ("-m", "-c", "-e", "-r") for w in argv[1:]):
        return False
    args = positional(argv)
    return not args or args[0] == "-"


def _git_globals(argv: list[str]) -> list[str]:
    """git's own options, before its subcommand."""
    out: list[str] = []
    words = argv[1:]
    while words and words[0].startswith("-"):
        out.append(words.pop(0))
        if out[-1] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") and words:
            words.pop(0)
    return out
