"""The suite's tiers (tests/tiers.py), and nbval (the notebooks under notebooks/).

nbval: a turn's ``text/html`` is not compared.

It is rendered from the same transcript as the turn's ``text/markdown`` and
``text/plain``, which are compared; its markup follows the look of the live view, which
changes more often than what a turn says.

Each notebook's kernel gets a per-user state directory of its own (``XDG_STATE_HOME``):
the demo agent keeps its sessions there across kernel restarts, so without it the session
ids a notebook stores (``demo-session-1``) would depend on earlier runs and other notebooks.
"""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest

from tests import tiers


def pytest_configure(config: pytest.Config) -> None:
    tiers.configure(config)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test gets the marker of its tier (tests/tiers.py)."""
    tiers.mark(items)


def pytest_itemcollected(item: pytest.Item) -> None:
    notebook = item.parent
    skip = getattr(notebook, "skip_compare", None)  # nbval's IPyNbFile
    if isinstance(skip, tuple) and "text/html" not in skip:
        notebook.skip_compare = (*skip, "text/html")  # type: ignore[union-attr]


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Before nbval starts a notebook's kernel (when its first cell is set up)."""
    notebook = item.parent
    if getattr(notebook, "skip_compare", None) is None or getattr(notebook, "_acp_state", None):
        return
    state = tempfile.mkdtemp(prefix="acp-notebook-nbval-")
    notebook._acp_state = state  # type: ignore[union-attr]
    os.environ["XDG_STATE_HOME"] = state
    item.config.add_cleanup(lambda: shutil.rmtree(state, ignore_errors=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A failed cell's report shows the streams it wrote: nbval names an unexpected
    ``stderr`` output but not its text."""
    outcome = yield
    report = outcome.get_result()
    outputs = getattr(item, "test_outputs", None)
    if report.when != "call" or not report.failed or not outputs:
        return
    streams = [
        f"[{output.get('name')}]\n{output.get('text', '')}"
        for output in outputs
        if output.get("output_type") == "stream"
    ]
    if streams:
        report.sections.append(("cell streams", "\n".join(streams)))
