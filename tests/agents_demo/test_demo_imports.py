"""The demo agent's modules import one another in one direction, and nothing of the client."""

from __future__ import annotations

from tests.import_graph import circles, graph

DEMO = "acp_notebook.agents.demo"


def test_the_demo_agent_has_no_import_circle() -> None:
    """`from . import edits` in three scenes made the package's `__init__` (and through it the
    server and every scene) part of one circle of 8 modules."""
    demo = [c for c in circles(graph()) if any(name.startswith(DEMO) for name in c)]
    assert demo == []


def test_the_demo_agent_rates_risk_without_the_client() -> None:
    """An agent is its own program: the demo imported the client's risk rating."""
    edges = graph()
    rating = {"acp_notebook.client.danger", "acp_notebook.client.decision"}
    assert {
        name: sorted(edges[name] & rating)
        for name in edges
        if name.startswith(DEMO) and edges[name] & rating
    } == {}
