"""What ``{name}``, ``{name.attr}``, ``{name[key]}``, ``{In[n]}`` and ``{Out[n]}`` name.

The expression is parsed, never evaluated: only a name, attribute access and
subscripts with literal keys (a string, a number, ``None``, ``True``, a negative
number) are followed. Anything else — a call, an operator, a variable used as a key
— names nothing, so a prompt can never run code by mentioning it. Names starting
with ``_`` (IPython's ``_``, ``__``, private attributes) name nothing either.
"""

from __future__ import annotations

import ast
import enum
from collections.abc import Mapping


class _NotFound(enum.Enum):
    NOT_FOUND = "NOT_FOUND"

    def __repr__(self) -> str:
        return "NOT_FOUND"


#: What :func:`resolve` returns for an expression that names nothing.
NOT_FOUND = _NotFound.NOT_FOUND


def _literal(node: ast.expr) -> tuple[bool, object]:
    if isinstance(node, ast.Constant) and isinstance(
        node.value, (str, int, float, bool, type(None))
    ):
        return True, node.value
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, ast.USub)
        and isinstance(node.operand, ast.Constant)
        and type(node.operand.value) in (int, float)
    ):
        return True, -node.operand.value  # type: ignore[operator]
    return False, None


def _follow(node: ast.expr, namespace: Mapping[str, object]) -> object:
    if isinstance(node, ast.Name):
        if node.id.startswith("_") or node.id not in namespace:
            return NOT_FOUND
        return namespace[node.id]
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            return NOT_FOUND
        owner = _follow(node.value, namespace)
        return NOT_FOUND if owner is NOT_FOUND else getattr(owner, node.attr)
    if isinstance(node, ast.Subscript):
        ok, key = _literal(node.slice)
        if not ok:
            return NOT_FOUND
        owner = _follow(node.value, namespace)
        return NOT_FOUND if owner is NOT_FOUND else owner[key]  # type: ignore[index]
    return NOT_FOUND


def resolve(expression: str, namespace: Mapping[str, object]) -> object:
    """The value ``expression`` names in ``namespace``, or :data:`NOT_FOUND`."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return NOT_FOUND
    try:
        return _follow(tree.body, namespace)
    except Exception:  # a missing attribute or key, or the object's own lookup failing
        return NOT_FOUND
