"""The client's modules import each other in layers a reader can follow: no import circle
(every import statement counted, as ``tests/import_graph.py`` counts them) joins more than
three of them."""

from __future__ import annotations

from tests.import_graph import circles, graph


def test_no_import_circle_in_the_client_joins_more_than_three_modules() -> None:
    # A tool call naming its permission requests closed a circle of 7 client modules, and
    # a session naming its connection one of 4.
    client = {
        name: {target for target in targets if target.startswith("acp_notebook.client")}
        for name, targets in graph().items()
        if name.startswith("acp_notebook.client")
    }
    assert [sorted(c) for c in circles(client) if len(c) > 3] == []
