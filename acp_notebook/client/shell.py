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

import functools
import os
import re
from dataclasses import dataclass, field

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

#: Operators, longest first so ``&&`` is not read as two ``&``.
_OPERATORS = (
    "<<<", "<<-", "&>>",
    "&&", "||", ";;", "|&", "&>", ">>", ">|", ">&", "<&", "<>", "<<",
    ";", "&", "|", "(", ")", "<", ">", "\n",
)  # fmt: skip
_OP_START = frozenset(op[0] for op in _OPERATORS)
#: Operators that end a command. ``|`` and ``|&`` also join a pipeline.
_PIPES = frozenset({"|", "|&"})
_WRITE_REDIRECTS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "<>"})
_READ_REDIRECTS = frozenset({"<", "<<", "<<<", "<<-", "<&"})
_HEREDOCS = frozenset({"<<", "<<-"})
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
    #: A wrapper adds arguments of its own (``xargs rm`` runs ``rm`` with the input's words).
    adds_arguments: bool = False


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int
    operator: bool = False


@dataclass
class _Reading:
    """One level of a command line, read: its pipelines, the commands inside ``$(…)``,
    backticks and ``<(…)``, and why it cannot be read with certainty (empty: it can)."""

    pipelines: list[Pipeline]
    substitutions: list[str]
    doubts: list[str]


class _Lexer:
    """bash's tokens: words with their quotes removed (not expanded), and operators."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.doubts: list[str] = []
        self.substitutions: list[str] = []

    def doubt(self, reason: str) -> None:
        if reason not in self.doubts:
            self.doubts.append(reason)

    def tokens(self) -> list[_Token]:
        text, i, out = self.text, 0, []
        while i < len(text):
            ch = text[i]
            if ch in " \t\r":
                i += 1
            elif text.startswith("\\\n", i):
                i += 2  # a line continuation
            elif ch == "#":  # only an unquoted `#` that starts a word starts a comment
                end = text.find("\n", i)
                i = len(text) if end < 0 else end
            elif text.startswith(("<(", ">("), i):
                self.doubt("process substitution")
                end = self._balanced(i + 1)
                self.substitutions.append(text[i + 2 : end - 1])
                out.append(_Token(text[i:end], i, end))
                i = end
            elif ch in _OP_START:
                op = next(o for o in _OPERATORS if text.startswith(o, i))
                out.append(_Token(op, i, i + len(op), operator=True))
                i += len(op)
            else:
                word, end = self._word(i)
                out.append(_Token(word, i, end))
                i = end
        return out

    def _word(self, i: int) -> tuple[str, int]:
        text, buf = self.text, []
        while i < len(text):
            ch = text[i]
            if ch in " \t\r\n;&|()<>":
                break
            if ch == "\\":
                if text.startswith("\\\n", i):
                    i += 2
                    continue
                buf.append(text[i + 1 : i + 2])
                i += 2
            elif ch == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    self.doubt("an unclosed quote")
                    end = len(text)
                buf.append(text[i + 1 : end])
                i = end + 1
            elif text.startswith("$'", i):
                self.doubt("ANSI-C quoting ($'…')")
                end = i + 2
                while end < len(text) and text[end] != "'":
                    end += 2 if text[end] == "\\" else 1
                if end >= len(text):
                    self.doubt("an unclosed quote")
                buf.append(text[i + 2 : end])
                i = end + 1
            elif text.startswith('$"', i):
                self.doubt('locale quoting ($"…")')
                i += 1
            elif ch == '"':
                i = self._double_quoted(i + 1, buf)
            elif text.startswith("$(", i) or ch == "`":
                end = self._substitution(i)
                buf.append(text[i:end])
                i = end
            elif text.startswith("${", i):
                end = text.find("}", i)
                if end < 0:
                    self.doubt("an unclosed ${")
                    end = len(text) - 1
                buf.append(text[i : end + 1])
                i = end + 1
            else:
                buf.append(ch)
                i += 1
        return "".join(buf), min(i, len(text))

    def _double_quoted(self, i: int, buf: list[str]) -> int:
        text = self.text
        while i < len(text) and text[i] != '"':
            if text[i] == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if nxt != "\n":
                    buf.append(nxt if nxt in '$`"\\' else "\\" + nxt)
                i += 2
            elif text.startswith("$(", i) or text[i] == "`":
                end = self._substitution(i)
                buf.append(text[i:end])
                i = end
            else:
                buf.append(text[i])
                i += 1
        if i >= len(text):
            self.doubt("an unclosed quote")
        return i + 1

    def _substitution(self, i: int) -> int:
        """``$(…)`` or a backtick substitution at ``i``: its end; its body is recorded."""
        text = self.text
        if text[i] == "`":
            end = i + 1
            while end < len(text) and text[end] != "`":
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                self.doubt("an unclosed backtick")
            self.substitutions.append(text[i + 1 : end].replace("\\`", "`"))
            return min(end + 1, len(text))
        if text.startswith("$((", i):
            self.doubt("arithmetic ($((…)))")
        end = self._balanced(i + 1)
        self.substitutions.append(text[i + 2 : end - 1])
        return end

    def _balanced(self, i: int) -> int:
        """The position after the ``)`` closing the ``(`` at ``i`` (quotes skipped)."""
        text, depth = self.text, 0
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                i += 2
                continue
            if ch in "'\"":
                end = text.find(ch, i + 1)
                if end < 0:
                    break
                i = end
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self.doubt("unbalanced parentheses")
        return len(text) + 1


@functools.lru_cache(maxsize=512)
def _read(command: str) -> _Reading:
    lexer = _Lexer(command)
    tokens = lexer.tokens()
    found: list[Pipeline] = []
    current: Pipeline = []
    words: list[str] = []
    writes: list[str] = []
    texts: list[str] = []
    pending: str | None = None  # "write" / "read": the next word is a redirection's target
    previous: _Token | None = None

    def end_command() -> None:
        nonlocal words, writes, texts
        if words or writes:
            current.append(SimpleCommand(words, writes, texts))
        words, writes, texts = [], [], []

    def end_pipeline() -> None:
        nonlocal current
        end_command()
        if current:
            found.append(current)
        current = []

    for token in tokens:
        if token.operator:
            if pending is not None:
                lexer.doubt("a redirection without a target")
            pending = None
            op = token.text
            if op in _WRITE_REDIRECTS or op in _READ_REDIRECTS:
                if (
                    previous is not None
                    and previous.end == token.start
                    and words
                    and re.fullmatch(r"[0-9]+|\{\w+\}", previous.text)
                ):
                    words.pop()  # `2>file`: the number names a descriptor, not a word
                    texts.pop()
                    op = previous.text + op
                pending = "write" if token.text in _WRITE_REDIRECTS else "read"
                if token.text in _HEREDOCS:
                    lexer.doubt("a heredoc")
                texts.append(op)
            elif op in _PIPES:
                end_command()
            else:  # ; && || & ;; ( ) newline
                if op == "(" and words:
                    lexer.doubt("a function definition")
                if op == "(" and previous is not None and previous.text == "(":
                    lexer.doubt("arithmetic ((…))")
                end_pipeline()
        elif pending is not None:
            if pending == "write":
                writes.append(token.text)
            texts.append(token.text)
            pending = None
        else:
            if token.text.startswith("#"):
                # Unquoted it would start a comment; a reader that drops quotes first
                # sees one where bash runs the rest (issue 11: `pytest; '#'; rm -rf ~`).
                lexer.doubt("a quoted `#` at the start of a word")
            words.append(token.text)
            texts.append(token.text)
        previous = token
    if pending is not None:
        lexer.doubt("a redirection without a target")
    end_pipeline()
    return _Reading(found, lexer.substitutions, lexer.doubts)


def pipelines(command: str) -> list[Pipeline]:
    """The pipelines of a command line, each a list of simple commands, in order."""
    return _read(command).pipelines


def substitutions(command: str) -> list[str]:
    """The commands inside ``$(…)``, backticks and ``<(…)`` (each nested one is a
    substitution of its outer one)."""
    return list(_read(command).substitutions)


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


def _walk(command: str) -> list[tuple[SimpleCommand, _Reading]]:
    """Every simple command of ``command`` — of its pipelines and chains, of ``$(…)`` and
    backticks, of ``sh -c`` payloads — with the reading of the level it belongs to."""
    out: list[tuple[SimpleCommand, _Reading]] = []

    def walk(text: str, depth: int) -> None:
        reading = _read(text)
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
        doubts += _read(command).doubts or ["no command"]
    if _nesting(command) >= MAX_DEPTH:
        doubts.append("shells nested too deep to follow")
    return "; ".join(dict.fromkeys(doubts)) or None


def _nesting(command: str, depth: int = 0) -> int:
    if depth >= MAX_DEPTH:
        return depth
    deepest = depth
    reading = _read(command)
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
