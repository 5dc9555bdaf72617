"""The deploy tier's fixtures: the browser tier's JupyterLab, page and notebook (one
server per set of options, a fresh notebook per test), and the servers it runs beside."""

from __future__ import annotations

import pytest

from ..browser.conftest import (  # noqa: F401  (fixtures and the report hook, shared)
    browser,
    lab,
    lab_servers,
    notebook,
    pytest_runtest_makereport,
)


@pytest.fixture(scope="module")
def shared_lab() -> None:
    """No shared page here: these tests restart kernels and reload pages behind gateways
    and hubs, each in a browser context of its own."""
    return None
