"""The demo agent's refactoring of Python code: rewrites that keep what the code does and
read better, found with :mod:`ast`, never by understanding words.

- A loop that only accumulates becomes the expression it spells out: ``total = 0`` then
  ``for v in values: total += v`` becomes ``total = sum(values)``; ``out = []`` then
  ``for v in values: out.append(f(v))`` (maybe under an ``if``) becomes a list
  comprehension; and when the next statement returns the accumulator, the expression is
  returned directly.
- ``if test: return True`` / ``else: return False`` becomes ``return test`` (a
  comparison) or ``return bool(test)``.

Nothing is added that the code does not say (no placeholder docstrings, no ``Any``
hints): code with none of these patterns is left as it is, and the reply says so.
Deterministic, and every other character of the text stays as it was.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["PATTERNS", "Refactoring", "refactor"]

#: What the refactoring looks for, for the reply when it finds nothing.
PATTERNS = (
    "loops that only add up or collect values (a `sum` or a comprehension says it in one "
    "line) and `if …: return True else: return False` (`return` the test)"
)


@dataclass(frozen=True)
class Refactoring:
    """The refactored text and one note per change (none: the text is unchanged)."""

    text: str
    changes: list[str]
    #: What was done, as a title's phrase ("use `sum(…)` for the loop that builds `total`").
    what: str = ""


@dataclass(frozen=True)
class _Rewrite:
    """The text from ``first`` to ``last`` replaced by ``source`` (one statement); it
    takes ``count`` statements of their body."""

    first: ast.stmt
    last: ast.stmt
    source: str
    #: Where (the function, or "the module") and what, in words.
    scope: str
    what: str
    count: int


def refactor(source: str) -> Refactoring:
    """Refactor every function (and the module's own code) of ``source``; raises
    :class:`SyntaxError` for text that is not Python."""
    tree = ast.parse(source)
    text = _Text(source)
    rewrites: list[_Rewrite] = []
    for scope, body in _bodies(tree):
        rewrites.extend(_rewrites(text, scope, body))
    # A comment inside the statements replaced would be lost with them: those stay.
    rewrites = [r for r in rewrites if "#" not in source[text.start(r.first) : text.end(r.last)]]
    edits = [(text.start(r.first), text.end(r.last), r.source) for r in rewrites]
    out = source
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    phrases = list(dict.fromkeys(r.what for r in rewrites))
    what = phrases[0] if len(phrases) == 1 else f"{len(rewrites)} rewrites"
    changes = [f"{r.scope} (line {r.first.lineno}): {r.what}" for r in rewrites]
    return Refactoring(out, changes, what if rewrites else "")


class _Text:
    """The source with ast positions (UTF-8 byte columns) turned into string offsets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._starts = [0]
        for line in source.splitlines(keepends=True):
            self._starts.append(self._starts[-1] + len(line))

    def _offset(self, line: int, col: int) -> int:
        start = self._starts[line - 1]
        return start + len(self.source[start:].encode("utf-8")[:col].decode("utf-8", "replace"))

    def start(self, node: ast.AST) -> int:
        return self._offset(node.lineno, node.col_offset)  # type: ignore[attr-defined]

    def end(self, node: ast.AST) -> int:
        return self._offset(node.end_lineno, node.end_col_offset)  # type: ignore[attr-defined]

    def of(self, node: ast.AST) -> str:
        return self.source[self.start(node) : self.end(node)]

    def single_line(self, node: ast.AST) -> bool:
        return bool(node.lineno == node.end_lineno)  # type: ignore[attr-defined]


def _bodies(tree: ast.Module) -> Iterator[tuple[str, list[ast.stmt]]]:
    """Every statement list of the code, each once, named by the function holding it."""

    def visit(node: ast.AST, scope: str) -> Iterator[tuple[str, list[ast.stmt]]]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope = f"`{node.name}`"
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                yield scope, block
        for child in ast.iter_child_nodes(node):
            yield from visit(child, scope)

    yield from visit(tree, "the module")


def _rewrites(text: _Text, scope: str, body: list[ast.stmt]) -> Iterator[_Rewrite]:
    index = 0
    while index < len(body):
        found = _accumulation(text, scope, body, index) or _bool_return(text, scope, body[index])
        if found is None:
            index += 1
            continue
        yield found
        index += found.count


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _accumulation(text: _Text, scope: str, body: list[ast.stmt], index: int) -> _Rewrite | None:
    """``acc = 0`` / ``acc = []`` and the loop right after it that only adds to ``acc``."""
    if index + 1 >= len(body):
        return None
    init, loop = body[index], body[index + 1]
    if not (
        isinstance(init, ast.Assign)
        and len(init.targets) == 1
        and isinstance(init.targets[0], ast.Name)
        and isinstance(loop, ast.For)
        and not loop.orelse
        and len(loop.body) == 1
        and text.single_line(init)
    ):
        return None
    name = init.targets[0].id
    start = init.value
    step: ast.stmt = loop.body[0]
    condition: ast.expr | None = None
    if isinstance(step, ast.If) and not step.orelse and len(step.body) == 1:
        condition, step = step.test, step.body[0]
    item = _added(step, name, start)
    if item is None:
        return None
    # The loop's own reads of the accumulator, or its variable used after the loop, would
    # change meaning once the loop is gone.
    parts = [loop.iter, item] + ([condition] if condition is not None else [])
    if any(name in _names(part) for part in parts):
        return None
    rest = body[index + 2 :]
    if _names(loop.target) & set().union(*(_names(s) for s in rest)):
        return None
    clause = f"for {text.of(loop.target)} in {text.of(loop.iter)}"
    if condition is not None:
        clause += f" if {text.of(condition)}"
    plain = (
        condition is None
        and isinstance(item, ast.Name)
        and isinstance(loop.target, ast.Name)
        and item.id == loop.target.id
    )
    if isinstance(start, ast.List):
        expression = f"list({text.of(loop.iter)})" if plain else f"[{text.of(item)} {clause}]"
        what = "a list comprehension" if not plain else "`list(…)`"
    else:
        numbers = f"{text.of(loop.iter)}" if plain else f"{text.of(item)} {clause}"
        zero = "" if isinstance(start.value, int) else f", {text.of(start)}"  # type: ignore[attr-defined]
        expression = f"sum({numbers}{zero})" if not zero or plain else f"sum(({numbers}){zero})"
        what = "`sum(…)`"
    last: ast.stmt = loop
    count, statement = 2, f"{name} = {expression}"
    following = rest[0] if rest else None
    if (
        isinstance(following, ast.Return)
        and isinstance(following.value, ast.Name)
        and following.value.id == name
    ):
        last, count, statement = following, 3, f"return {expression}"
    return _Rewrite(
        init, last, statement, scope, f"use {what} for the loop that builds `{name}`", count
    )


def _added(step: ast.stmt, name: str, start: ast.expr) -> ast.expr | None:
    """What ``step`` adds to ``name``, when that is all it does and fits how it started."""
    numeric = isinstance(start, ast.Constant) and type(start.value) in (int, float)
    if (
        numeric
        and start.value == 0  # type: ignore[attr-defined]
        and isinstance(step, ast.AugAssign)
        and isinstance(step.op, ast.Add)
        and isinstance(step.target, ast.Name)
        and step.target.id == name
    ):
        return step.value
    if isinstance(start, ast.List) and not start.elts:
        call = step.value if isinstance(step, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Attribute)
            and call.func.attr == "append"
            and isinstance(call.func.value, ast.Name)
            and call.func.value.id == name
            and len(call.args) == 1
            and not call.keywords
            and not isinstance(call.args[0], ast.Starred)
        ):
            return call.args[0]
    return None


def _bool_return(text: _Text, scope: str, node: ast.stmt) -> _Rewrite | None:
    """``if test: return True`` / ``else: return False`` (or the other way round)."""
    if not (isinstance(node, ast.If) and len(node.body) == 1 and len(node.orelse) == 1):
        return None
    yes, no = node.body[0], node.orelse[0]
    values = [
        s.value.value
        for s in (yes, no)
        if isinstance(s, ast.Return) and isinstance(s.value, ast.Constant)
    ]
    if values not in ([True, False], [False, True]):
        return None
    test = text.of(node.test)
    if values == [False, True]:
        tight = isinstance(
            node.test, (ast.Name, ast.Call, ast.Compare, ast.Attribute, ast.Subscript)
        )
        expression = f"not {test}" if tight else f"not ({test})"
    elif isinstance(node.test, ast.Compare) or (
        isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
    ):
        expression = test
    else:
        expression = f"bool({test})"
    what = f"`return {expression}` for the if/else returning True or False"
    return _Rewrite(node, no, f"return {expression}", scope, what, 1)
