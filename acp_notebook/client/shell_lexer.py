"""The lexer and reader behind ``shell.py`` (read commands through ``shell.py``, not
here): bash's tokens — words with their quotes removed but not expanded, and operators —
grouped into the simple commands of pipelines, with the substitutions found and the
doubts met on the way (what this reader cannot follow with certainty)."""

from __future__ import annotations

import functools
import os
import re
from dataclasses import dataclass, field

__all__ = ["Pipeline", "Reading", "SimpleCommand", "read"]

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
#: What inside ``${…}`` is only a variable's value: a name, a positional or special
#: parameter, or its length.
_SIMPLE_PARAMETER = re.compile(r"#?([A-Za-z_][A-Za-z0-9_]*|[0-9]+|[@*#?$!-])")


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


@dataclass(frozen=True)
class _Token:
    text: str
    start: int
    end: int
    operator: bool = False


@dataclass
class Reading:
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
                end = self._parameter(i)
                buf.append(text[i:end])
                i = end
            elif text.startswith("$[", i):
                self.doubt("arithmetic ($[…])")
                buf.append(ch)
                i += 1
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
            elif text.startswith("${", i):
                end = self._parameter(i)
                buf.append(text[i:end])
                i = end
            else:
                if text.startswith("$[", i):
                    self.doubt("arithmetic ($[…])")
                buf.append(text[i])
                i += 1
        if i >= len(text):
            self.doubt("an unclosed quote")
        return i + 1

    def _parameter(self, i: int) -> int:
        """``${…}`` at ``i``: its end. Only ``${NAME}`` (and ``${#NAME}``, ``${1}``, ``${@}``…)
        is modelled; anything else inside — defaults, substitutions, patterns, indirection —
        is a doubt, and the commands of ``$(…)`` and backticks inside are recorded."""
        text, j, depth = self.text, i + 2, 1
        while j < len(text):
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if ch == "'":
                end = text.find("'", j + 1)
                j = len(text) if end < 0 else end + 1
                continue
            if ch == '"':
                j = self._double_quoted(j + 1, [])
                continue
            if text.startswith("$(", j) or ch == "`":
                j = self._substitution(j)
                continue
            if text.startswith("${", j):
                depth += 1
                j += 2
                continue
            if ch == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        if j >= len(text):
            self.doubt("an unclosed ${")
            return len(text)
        if not _SIMPLE_PARAMETER.fullmatch(text[i + 2 : j]):
            self.doubt("an expansion inside ${…}")
        return j + 1

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
        """The position after the ``)`` closing the ``(`` at ``i``, skipping what bash
        skips: quoted text (a double-quoted string with its escapes and substitutions),
        ``${…}`` and comments."""
        text, depth = self.text, 0
        while i < len(text):
            ch = text[i]
            if ch == "\\":
                i += 2
                continue
            if ch == "'":
                end = text.find("'", i + 1)
                if end < 0:
                    break
                i = end + 1
                continue
            if ch == '"':
                i = self._double_quoted(i + 1, [])
                continue
            if text.startswith("${", i):
                i = self._parameter(i)
                continue
            if ch == "#" and (i == 0 or text[i - 1] in " \t\n;&|("):
                end = text.find("\n", i)
                if end < 0:
                    break
                i = end
                continue
            if ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        self.doubt("unbalanced parentheses")
        return len(text) + 1


@functools.lru_cache(maxsize=512)
def read(command: str) -> Reading:
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
                # sees one where bash runs the rest (`pytest; '#'; rm -rf ~`).
                lexer.doubt("a quoted `#` at the start of a word")
            words.append(token.text)
            texts.append(token.text)
        previous = token
    if pending is not None:
        lexer.doubt("a redirection without a target")
    end_pipeline()
    return Reading(found, lexer.substitutions, lexer.doubts)
