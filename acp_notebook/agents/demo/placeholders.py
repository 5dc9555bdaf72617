"""The demo agent's "refactoring" of Python code: a placeholder docstring for every
function without one, and ``Any`` type-hint placeholders for unannotated parameters and
returns.

Found with :mod:`ast`, applied as pure insertions, so every other byte of the text stays
as it was; deterministic, so the same code always gets the same proposal. It is a
mechanical demonstration, not an AI refactoring.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from typing import NamedTuple

__all__ = ["DOCSTRING", "PlaceholderEdit", "add_placeholders"]

#: The placeholder docstring; ``{name}`` is the function's name.
DOCSTRING = '"""TODO: describe {name}. (Placeholder added by the acp_notebook demo agent.)"""'


class PlaceholderEdit(NamedTuple):
    """What :func:`add_placeholders` did: the new text and one note per change (none: the
    text is unchanged)."""

    text: str
    changes: list[str]


def _lines(text: str) -> list[str]:
    # Split only at "\n" (keeping it): ast and tokenize number lines the same way, and a
    # "\r\n" file keeps its "\r" at the end of each line.
    # (str.splitlines would also split at form feeds and other separators.)
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _char_col(line: str, byte_col: int) -> int:
    # ast columns are UTF-8 byte offsets; the edit works on characters.
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _signature_end(
    tokens: list[tokenize.TokenInfo], start: tuple[int, int]
) -> tuple[tuple[int, int], int]:
    """(position right after the ``)`` closing the parameters, line of the header's ``:``)
    for the ``def`` that starts at ``start``."""
    index = next(i for i, tok in enumerate(tokens) if tok.start >= start)
    depth = 0
    close: tuple[int, int] | None = None
    for tok in tokens[index:]:
        if tok.type != tokenize.OP:
            continue
        if tok.string in "([{":
            depth += 1
        elif tok.string in ")]}":
            depth -= 1
            if depth == 0 and close is None and tok.string == ")":
                close = tok.end
        elif tok.string == ":" and depth == 0 and close is not None:
            return close, tok.start[0]
    raise ValueError("no function header found")  # cannot happen for code ast accepted


def add_placeholders(source: str) -> PlaceholderEdit:
    """Add a placeholder docstring and ``Any`` type-hint placeholders to every function
    that lacks them; every other character of ``source`` stays as it was.

    ``self`` / ``cls`` (the first parameter of a method) are left alone, ``__init__``
    gets ``-> None``, one-line functions get no docstring (there is no line for it), and
    ``from typing import Any`` is added when a placeholder needs it and the module does
    not import ``Any`` yet. Raises :class:`SyntaxError` for text that is not Python.
    """
    tree = ast.parse(source)
    lines = _lines(source)
    newline = "\r\n" if "\r\n" in source else "\n"
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    inline: dict[int, list[tuple[int, str]]] = {}  # 0-based row -> [(char col, text)]
    before: dict[int, list[str]] = {}  # 0-based row -> lines inserted before it
    changes: list[str] = []
    uses_any = False

    parents: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent

    functions = [
        node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    functions.sort(key=lambda node: (node.lineno, node.col_offset))
    for node in functions:
        notes: list[str] = []
        is_method = isinstance(parents.get(node), ast.ClassDef) and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
        )
        args = node.args
        params = [*args.posonlyargs, *args.args]
        if is_method and params:
            params = params[1:]  # self / cls: their type is obvious
        params += [a for a in (args.vararg, *args.kwonlyargs, args.kwarg) if a is not None]
        unannotated = [a for a in params if a.annotation is None]
        for arg in unannotated:
            row = (arg.end_lineno or arg.lineno) - 1
            col = _char_col(lines[row], arg.end_col_offset or arg.col_offset)
            if lines[row][col : col + 1] == "=":
                # PEP 8: an annotated parameter's default gets spaces around "=".
                inline.setdefault(row, []).append((col, ": Any "))
                if lines[row][col + 1 : col + 2] not in (" ", "\n", "\r"):
                    inline.setdefault(row, []).append((col + 1, " "))
            else:
                inline.setdefault(row, []).append((col, ": Any"))
            uses_any = True
        if unannotated:
            notes.append("type hints for " + ", ".join(f"`{a.arg}`" for a in unannotated))
        start = (node.lineno, _char_col(lines[node.lineno - 1], node.col_offset))
        close, colon_row = _signature_end(tokens, start)
        if node.returns is None:
            returns = "None" if node.name == "__init__" else "Any"
            uses_any = uses_any or returns == "Any"
            inline.setdefault(close[0] - 1, []).append((close[1], f" -> {returns}"))
            notes.append("a return type")
        first = node.body[0]
        if ast.get_docstring(node) is None and first.lineno > colon_row:
            # Right below the header (above any comment), indented like the body.
            body_line = lines[first.lineno - 1]
            indent = body_line[: len(body_line) - len(body_line.lstrip(" \t"))]
            docstring = indent + DOCSTRING.format(name=node.name) + newline
            before.setdefault(colon_row, []).append(docstring)
            notes.insert(0, "a docstring")
        if notes:
            changes.append(f"`{node.name}` (line {node.lineno}): " + ", ".join(notes))

    if uses_any and not _imports_any(tree):
        row = _import_row(tree)
        if row == 0:
            row = _skip_header_comments(lines)
        elif row < len(lines) and not lines[row].strip():
            row += 1  # keep the blank line after the module docstring where it is
        line = "from typing import Any" + newline
        following = lines[row] if row < len(lines) else ""
        if following.strip() and not following.startswith(("import ", "from ")):
            line += newline  # keep the import apart from the code it precedes
        if row > 0 and not lines[row - 1].endswith("\n"):
            lines[row - 1] += newline
        before.setdefault(row, []).insert(0, line)
        changes.append("`from typing import Any` for the placeholders")

    out: list[str] = []
    for row, text in enumerate(lines):
        out.extend(before.get(row, []))
        for col, piece in sorted(inline.get(row, []), reverse=True):
            text = text[:col] + piece + text[col:]
        out.append(text)
    out.extend(before.get(len(lines), []))
    return PlaceholderEdit("".join(out), changes)


def _imports_any(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(
            (alias.asname or alias.name) == "Any" for alias in node.names
        ):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "Any" for t in targets):
                return True
    return False


def _import_row(tree: ast.Module) -> int:
    """0-based row where a new import goes: after the module docstring and any
    ``from __future__`` imports (which must stay first)."""
    row = 0
    for index, node in enumerate(tree.body):
        is_docstring = (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (is_docstring or is_future):
            break
        row = node.end_lineno or node.lineno
    return row


def _skip_header_comments(lines: list[str]) -> int:
    # A shebang and an encoding declaration only work on the first two lines.
    row = 0
    while row < min(2, len(lines)) and lines[row].startswith("#"):
        row += 1
    return row
