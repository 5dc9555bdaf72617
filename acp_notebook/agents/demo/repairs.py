"""The demo agent's fixes for errors it can recognise in a notebook cell, found with
:mod:`ast` and :mod:`difflib`, never by understanding words:

- ``ZeroDivisionError``: the division on the line that raised is guarded, giving NaN when
  its divisor is zero (and saying that NaN is a choice the user may change);
- ``NameError``: the undefined name is replaced, everywhere the cell reads it, by the
  closest name the agent knows of (the kernel's variables, the names bound in the code it
  was sent, Python's builtins);
- ``KeyError``: the missing string key is replaced by the closest column (or key) of the
  value it indexes, when the agent was told that value's columns.

Pure and deterministic: the same error, code and names always give the same fix, and
every other character of the cell stays as it was. :func:`read_failure` reads the error
the client attached (acp_notebook's ``notebook://error``: a traceback, then the cell).
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

__all__ = [
    "Failure",
    "Repair",
    "bound_names",
    "columns_in",
    "lookups",
    "read_failure",
    "repair",
]

#: How close a name must be to count as the one meant (difflib's ratio).
CUTOFF = 0.6

_FENCED = re.compile(
    r"^(?P<fence>`{3,})[^\n]*\n(?P<body>.*?)\n(?P=fence)$", re.MULTILINE | re.DOTALL
)
_RAISED_IN = re.compile(
    r"It was raised in (?:cell \[(?P<number>\d+)\]|this cell):\s*$", re.MULTILINE
)
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)(?::\s?(?P<message>.*))?$")
_NAME_ERROR = re.compile(r"name '(?P<name>[A-Za-z_]\w*)' is not defined")
_COLUMN_LINE = re.compile(r"^- `(?P<name>(?:[^`]|``)+)`: ", re.MULTILINE)


@dataclass(frozen=True)
class Failure:
    """An error as the client described it: the exception's type and message, the code
    of the cell that raised it, and the line of that code it was raised on (if known)."""

    error: str
    message: str
    code: str
    #: The cell's execution count, when the client gave it.
    number: int | None = None
    #: 1-based line in ``code`` where the cell's frame was when it raised.
    line: int | None = None


@dataclass(frozen=True)
class Repair:
    """A fix: the cell's new code, what was changed (a short phrase for titles) and why
    (sentences for the reply)."""

    code: str
    what: str
    why: str


def read_failure(text: str) -> Failure | None:
    """The failure in the text of an error attachment: its first fenced block is the
    traceback, the block after "It was raised in cell [N]:" the cell. None when the
    text has no traceback or no cell."""
    blocks = list(_FENCED.finditer(text))
    raised = _RAISED_IN.search(text)
    if not blocks or raised is None:
        return None
    cell = next((b for b in blocks if b.start() > raised.end()), None)
    if cell is None:
        return None
    traceback = blocks[0]["body"]
    number = int(raised["number"]) if raised["number"] else None
    error, message = _exception(traceback)
    if error is None:
        return None
    return Failure(error, message, cell["body"], number, _line_in_cell(traceback, number))


def _exception(traceback: str) -> tuple[str | None, str]:
    """The exception's type (unqualified) and message: the traceback's last line that
    reads ``Type: message`` (or a bare ``Type``), below its last frame."""
    for line in reversed(traceback.splitlines()):
        if not line or line.startswith((" ", "\t")):
            continue
        match = _EXCEPTION.match(line)
        if match is not None:
            return match["type"].rsplit(".", 1)[-1], (match["message"] or "").strip()
    return None, ""


def _line_in_cell(traceback: str, number: int | None) -> int | None:
    """The line of the cell's own frame: ``Cell In[N], line L`` (the first such frame:
    the cell's code, before any function it called)."""
    cell = rf"\[{number}\]" if number is not None else r"\[\d+\]"
    match = re.search(rf"Cell In{cell}, line (\d+)", traceback)
    return int(match.group(1)) if match else None


def bound_names(code: str) -> set[str]:
    """The names ``code`` binds (assignments, definitions, imports, parameters); empty
    when it is not Python."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return names


def columns_in(summary: str) -> list[str]:
    """The columns a value's summary lists (a data frame's "Columns" section), or the
    keys of a mapping summarised as JSON."""
    section = summary.partition("Columns (")[2].split("\n\n")[0]
    if section:
        return [found["name"].replace("``", "`") for found in _COLUMN_LINE.finditer(section)]
    try:
        loaded = json.loads(summary)
    except ValueError:
        return []
    return [str(key) for key in loaded] if isinstance(loaded, dict) else []


def lookups(failure: Failure) -> list[str]:
    """The expressions the cell indexes with a ``KeyError``'s missing key (``df`` in
    ``df["prce"]``): whose columns the fix needs."""
    if failure.error != "KeyError":
        return []
    try:
        code = _Code(failure, ast.parse(failure.code))
    except SyntaxError:
        return []
    return list(dict.fromkeys(code.source(n.value) for n in _key_lookups(code)))


def repair(
    failure: Failure, names: Iterable[str] = (), columns: Mapping[str, list[str]] | None = None
) -> Repair | str:
    """The fix of ``failure``, or one sentence saying why there is none. ``names``: the
    names the kernel is known to have; ``columns``: known columns (or keys) by the
    expression that holds them (``"df"``)."""
    try:
        tree = ast.parse(failure.code)
    except SyntaxError:
        return "I could not parse the cell as Python, so I cannot point at what to change."
    fixer = _FIXERS.get(failure.error)
    if fixer is None:
        return (
            f"I only recognise ZeroDivisionError, NameError and KeyError; for a "
            f"{failure.error} I can only show you what I was sent."
        )
    return fixer(_Code(failure, tree), set(names), dict(columns or {}))


class _Code:
    """The cell's code with the positions ast gives turned into string offsets."""

    def __init__(self, failure: Failure, tree: ast.Module) -> None:
        self.failure = failure
        self.text = failure.code
        self.tree = tree
        self._starts = [0]
        for line in self.text.splitlines(keepends=True):
            self._starts.append(self._starts[-1] + len(line))

    def offset(self, line: int, col: int) -> int:
        # ast columns are UTF-8 byte offsets into the line.
        start = self._starts[line - 1]
        raw = self.text[start:].encode("utf-8")[:col]
        return start + len(raw.decode("utf-8", "replace"))

    def span(self, node: ast.AST) -> tuple[int, int]:
        end_line = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
        end_col = getattr(node, "end_col_offset", None) or 0
        return self.offset(node.lineno, node.col_offset), self.offset(end_line, end_col)  # type: ignore[attr-defined]

    def source(self, node: ast.AST) -> str:
        start, end = self.span(node)
        return self.text[start:end]

    def on_failing_line(self, nodes: list[ast.AST]) -> list[ast.AST]:
        """``nodes`` on the line that raised, when that line is known and has one."""
        line = self.failure.line
        if line is None:
            return nodes
        here = [
            n
            for n in nodes
            if n.lineno <= line <= (getattr(n, "end_lineno", None) or n.lineno)  # type: ignore[attr-defined]
        ]
        return here or nodes

    def replaced(self, edits: list[tuple[ast.AST, str]]) -> str:
        text = self.text
        for node, new in sorted(edits, key=lambda e: self.span(e[0]), reverse=True):
            start, end = self.span(node)
            text = text[:start] + new + text[end:]
        return text


def _parents(tree: ast.AST) -> dict[ast.AST, ast.AST]:
    return {child: parent for parent in ast.walk(tree) for child in ast.iter_child_nodes(parent)}


_DIVISIONS = (ast.Div, ast.FloorDiv, ast.Mod)
#: Where an expression can be replaced by a conditional one without parentheses.
_WHOLE = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr, ast.Return, ast.keyword)
#: Divisors that read unambiguously on the left of ``!= 0``.
_PLAIN = (ast.Name, ast.Attribute, ast.Subscript, ast.Call, ast.Constant, ast.BinOp, ast.UnaryOp)


def _fix_division(code: _Code, names: set[str], columns: dict[str, list[str]]) -> Repair | str:
    divisions = [
        node
        for node in ast.walk(code.tree)
        if isinstance(node, ast.BinOp)
        and isinstance(node.op, _DIVISIONS)
        and not (isinstance(node.right, ast.Constant) and node.right.value)
    ]
    divisions.sort(key=lambda n: (n.lineno, n.col_offset))
    found = code.on_failing_line(list(divisions))
    if not found:
        return "I found no division in the cell: the zero divisor is inside a function it calls."
    node = found[0]
    assert isinstance(node, ast.BinOp)
    divisor = code.source(node.right)
    if not isinstance(node.right, _PLAIN):
        divisor = f"({divisor})"
    division = code.source(node)
    guarded = f'{division} if {divisor} != 0 else float("nan")'
    parent = _parents(code.tree).get(node)
    is_whole = isinstance(parent, _WHOLE) or (isinstance(parent, ast.Call) and node in parent.args)
    start, end = code.span(node)
    # Already in parentheses of its own, `(x / n) * 2`: none added.
    wrapped = code.text[:start].rstrip().endswith("(") and code.text[end:].lstrip().startswith(")")
    new = guarded if is_whole or wrapped else f"({guarded})"
    why = (
        f"`{division}` divides by zero: `{divisor}` was 0. I guarded the division so it "
        f"gives NaN (not a number) when `{divisor}` is 0, the usual choice for a mean or a "
        "rate with nothing to divide. Whether NaN, 0 or an error is right depends on what the "
        "result means: change the fallback if another value suits, or make sure the divisor "
        "cannot be 0 upstream."
    )
    if isinstance(node.right, ast.Constant):
        why = (
            f"`{division}` divides by the literal `{divisor}`, so it raises every time. I "
            "guarded it so the cell runs (NaN where the division was), but the guard only "
            "shows the pattern: you most likely meant another divisor, so put it in place "
            f"of `{divisor}`."
        )
    return Repair(code.replaced([(node, new)]), f"guard the division `{division}`", why)


def _fix_name(code: _Code, names: set[str], columns: dict[str, list[str]]) -> Repair | str:
    match = _NAME_ERROR.search(code.failure.message)
    if match is None:
        return (
            f"The NameError says “{code.failure.message}”, which names no variable I can look for."
        )
    missing = match["name"]
    known = (names | bound_names(code.text) | set(dir(builtins))) - {missing}
    close = difflib.get_close_matches(missing, sorted(known), n=1, cutoff=CUTOFF)
    if not close:
        return (
            f"`{missing}` is not defined, and no name the kernel has is close to it: run the "
            "cell that defines it (a restarted kernel forgets every variable), or define it "
            "in a cell above."
        )
    meant = close[0]
    reads = [
        node
        for node in ast.walk(code.tree)
        if isinstance(node, ast.Name) and node.id == missing and isinstance(node.ctx, ast.Load)
    ]
    if not reads:
        return (
            f"`{missing}` is not read in the cell itself: it is used by a function the cell calls."
        )
    why = (
        f"`{missing}` is not defined in the kernel; `{meant}` is, and its name is the "
        f"closest to `{missing}`, so I take it for a typo and use `{meant}` where the cell "
        f"reads `{missing}`."
    )
    return Repair(code.replaced([(n, meant) for n in reads]), f"use `{meant}` for `{missing}`", why)


def _fix_key(code: _Code, names: set[str], columns: dict[str, list[str]]) -> Repair | str:
    key = _missing_key(code.failure)
    if key is None:
        return f"The KeyError's key is {code.failure.message or 'not given'}, not a column name I can look for."
    lookups = _key_lookups(code)
    found = code.on_failing_line(list(lookups))
    if not found:
        return f"The cell does not index anything with `{key!r}` itself: the lookup is in a function it calls."
    node = found[0]
    assert isinstance(node, ast.Subscript)
    holder = code.source(node.value)
    known = columns.get(holder)
    if not known:
        return (
            f"`{holder}` has no column (or key) `{key}`, and I was not told its columns: "
            f"send it with the prompt (`{{{holder}}}`) and I can look for the closest one."
        )
    close = difflib.get_close_matches(key, known, n=1, cutoff=CUTOFF)
    if not close:
        listed = ", ".join(f"`{c}`" for c in known[:20])
        return f"`{holder}` has no column `{key}` and none close to it; its columns are {listed}."
    meant = close[0]
    edits: list[tuple[ast.AST, str]] = [
        (n.slice, _string_like(code.source(n.slice), meant))
        for n in lookups
        if code.source(n.value) == holder
    ]
    why = (
        f"`{holder}` has no column `{key}`; its column `{meant}` is the closest, so I take "
        f"`{key}` for a typo and index `{meant}` instead."
    )
    return Repair(code.replaced(edits), f"use the column `{meant}`", why)


def _string_like(literal: str, text: str) -> str:
    """``text`` as a string literal quoted as ``literal`` is (where it can be)."""
    quote = literal[:1] if literal[:1] in ("'", '"') else "'"
    return f"{quote}{text}{quote}" if quote not in text and "\\" not in text else repr(text)


def _missing_key(failure: Failure) -> str | None:
    try:
        key = ast.literal_eval(failure.message)
    except (ValueError, SyntaxError):
        return None
    return key if isinstance(key, str) else None


def _key_lookups(code: _Code) -> list[ast.Subscript]:
    """The subscripts of the cell whose index is the missing key, in source order."""
    key = _missing_key(code.failure)
    found = [
        node
        for node in ast.walk(code.tree)
        if isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and node.slice.value == key
    ]
    return sorted(found, key=lambda n: (n.lineno, n.col_offset))


_FIXERS = {
    "ZeroDivisionError": _fix_division,
    "NameError": _fix_name,
    "KeyError": _fix_key,
}
