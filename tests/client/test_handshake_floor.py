"""The handshake floor: a turn's timeout leaves each handshake request at least ten seconds
(an agent's start takes seconds), and the test suite lowers it through its variable."""

from __future__ import annotations

import pytest

from acp_notebook.client.handshake import (
    HANDSHAKE_FLOOR,
    HANDSHAKE_FLOOR_ENV,
    handshake_floor,
    handshake_limit,
)


def test_a_short_turn_timeout_still_gives_each_handshake_request_the_floor(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(HANDSHAKE_FLOOR_ENV, raising=False)
    assert HANDSHAKE_FLOOR == 10.0
    assert handshake_limit(2, None) == HANDSHAKE_FLOOR
    assert handshake_limit(30, None) == 30
    assert handshake_limit(None, 180.0) == 180.0


def test_the_floor_is_lowered_by_its_environment_variable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(HANDSHAKE_FLOOR_ENV, "0.2")
    assert handshake_floor() == 0.2
    assert handshake_limit(0.1, None) == 0.2


@pytest.mark.parametrize("value", ["", "soon", "0", "-3", "nan"])
def test_an_unreadable_or_non_positive_floor_leaves_the_default(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(HANDSHAKE_FLOOR_ENV, value)
    assert handshake_floor() == HANDSHAKE_FLOOR
