"""The package's modules import each other in layers a reader can follow: no import circle
joins more than three modules anywhere in ``acp_notebook/`` (every import statement counted,
function-local and ``TYPE_CHECKING`` ones included, as ``tests/import_graph.py`` counts them).

A circle of 27 once ran from ``%acp``'s magics through the turn, the agents' manager and
the controls back to the package root; the client had circles of 7 and 4, the demo agent
one of 8."""

from __future__ import annotations

from pathlib import Path

from tests.import_graph import circles, graph

#: The largest circle a reader may have to hold in mind at once.
LARGEST = 3


def test_no_import_circle_in_the_package_joins_more_than_three_modules() -> None:
    found = [sorted(c) for c in circles(graph()) if len(c) > LARGEST]
    assert found == []


def test_a_circle_is_found_through_every_kind_of_edge() -> None:
    # The check itself: a circle of four closed by one back edge is reported whole.
    edges = {"a": {"b"}, "b": {"c"}, "c": {"d"}, "d": {"a"}, "e": {"a"}}
    assert circles(edges) == [{"a", "b", "c", "d"}]


def test_a_function_local_import_is_an_edge(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "low.py").write_text("def f():\n    from .high import g\n")
    (package / "high.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import low\n"
    )
    assert graph(package)["pkg.low"] == {"pkg.high"}
    assert graph(package)["pkg.high"] == {"pkg", "pkg.low"}
