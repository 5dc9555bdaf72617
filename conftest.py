"""nbval (the notebooks under notebooks/): a turn's ``text/html`` is not compared.

It is rendered from the same transcript as the turn's ``text/markdown`` and
``text/plain``, which are compared; its markup follows the look of the live view, which
changes more often than what a turn says.
"""

from __future__ import annotations

import pytest


def pytest_itemcollected(item: pytest.Item) -> None:
    notebook = item.parent
    skip = getattr(notebook, "skip_compare", None)  # nbval's IPyNbFile
    if isinstance(skip, tuple) and "text/html" not in skip:
        notebook.skip_compare = (*skip, "text/html")  # type: ignore[union-attr]
