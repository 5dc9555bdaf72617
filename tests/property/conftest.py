"""Hypothesis profiles: a modest example count for CI (``acp``, the default here) and a
deeper run with ``--hypothesis-profile=long``."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "acp", max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def pytest_configure(config: pytest.Config) -> None:
    chosen = config.getoption("hypothesis_profile", default=None)
    settings.load_profile(chosen or "acp")
