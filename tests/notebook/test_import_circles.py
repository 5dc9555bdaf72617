"""The notebook layer's import graph: a reader follows every import statement, so no circle
of more than three modules (the first `%acp` once went magics → runner → manager → turns →
… and back to the package root: one circle of 27 modules)."""

from __future__ import annotations

from tests.import_graph import circles, graph

#: The largest circle a reader may have to hold in mind at once.
LARGEST = 3


def _in_notebook_layer(module: str) -> bool:
    return module == "acp_notebook" or module.startswith("acp_notebook.notebook")


def test_no_import_circle_in_the_notebook_layer_has_more_than_three_modules() -> None:
    found = [c for c in circles(graph()) if any(_in_notebook_layer(m) for m in c)]
    assert [sorted(c) for c in found if len(c) > LARGEST] == []
