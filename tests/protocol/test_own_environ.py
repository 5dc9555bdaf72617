"""Variables set for this process alone (``acp-notebook run`` sets pydantic's plugin switch):
the processes it starts get the user's environment, not them."""

from __future__ import annotations

import os

import pytest

from acp_notebook.protocol import own_environ

NAME = "ACP_TEST_OWN_ONLY"


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(own_environ, "_OWN", {})
    monkeypatch.delenv(NAME, raising=False)


def test_a_variable_set_for_this_process_is_left_out_of_its_children() -> None:
    own_environ.set_own(NAME, "1")
    assert os.environ[NAME] == "1"
    children = own_environ.for_children()
    assert NAME not in children
    assert children == {k: v for k, v in os.environ.items() if k != NAME}


def test_a_value_the_user_set_is_kept_for_this_process_and_its_children(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(NAME, "theirs")
    own_environ.set_own(NAME, "1")
    assert os.environ[NAME] == "theirs"
    assert own_environ.for_children()[NAME] == "theirs"


def test_a_value_changed_after_it_was_set_here_is_passed_on() -> None:
    own_environ.set_own(NAME, "1")
    os.environ[NAME] = "changed"
    assert own_environ.for_children()[NAME] == "changed"
