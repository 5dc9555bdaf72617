"""The import graph of the `acp_notebook` package and its circles.

Every import statement counts, wherever it stands: at the top of a module, inside a function,
under `TYPE_CHECKING` — a reader follows them all. `from .x import y` is an edge to `x`, and to
`x.y` too when `y` is itself a module; `from . import y` is an edge to the package and to `y`.

Run `python -m tests.import_graph` to print the circles, largest first.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "acp_notebook"


def modules(root: Path = PACKAGE) -> dict[str, Path]:
    """Each module of the package by dotted name (a package by its `__init__.py`)."""
    found = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@functools.cache
def graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name → the package's modules its import statements name (read once per
    root: callers must not change what it returns)."""
    known = modules(root)
    edges: dict[str, set[str]] = {}
    for name, path in known.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        named: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    source = ".".join(base + ([node.module] if node.module else []))
                else:
                    source = node.module or ""
                named.add(source)
                named.update(f"{source}.{alias.name}" for alias in node.names)
        edges[name] = {target for target in named if target in known and target != name}
    return edges


def circles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module, largest first (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(start: str) -> None:
        # Iterative, so a deep package cannot hit the recursion limit.
        work: list[tuple[str, Iterable[str]]] = [(start, iter(sorted(edges[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(component)

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found, key=len, reverse=True)


def main() -> int:
    found = circles(graph())
    for component in found:
        print(len(component), " ".join(sorted(component)))
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
