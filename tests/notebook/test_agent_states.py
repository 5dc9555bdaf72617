"""What each session of the notebook is doing, as the page's sidebar shows it
(notebook/runtime/agent_states.py): waiting for a login, then for a permission, then running,
else idle; the running turn's cell is where its card waits; the page is sent the states
only when they change, and again when it connects."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest

from acp_notebook.notebook.runtime import agent_states
from acp_notebook.notebook.runtime.agent_states import AgentStates, session_states


def session(*, pending: int = 0, busy: bool = False, title: str | None = None) -> Any:
    return SimpleNamespace(
        permissions=SimpleNamespace(pending=[object()] * pending),
        turns=[SimpleNamespace(done=not busy)],
        transcript=SimpleNamespace(title=title),
    )


def runtime(key: str, sessions: dict[str, Any], *, login: bool = False) -> Any:
    return SimpleNamespace(key=key, sessions=sessions, login_waiting=login)


def handle(agent: str, name: str, cell_id: str | None, *, done: bool = False) -> Any:
    return SimpleNamespace(
        done=done, settings=SimpleNamespace(agent=agent, session=name, cell_id=cell_id)
    )


def states(runtimes: list[Any], handles: list[Any]) -> dict[tuple[str, str], tuple[Any, ...]]:
    return {
        (s.agent, s.session): (s.state, s.cell_id, s.waiting)
        for s in session_states(runtimes, handles)
    }


def test_a_waiting_permission_names_the_cell_of_its_turn() -> None:
    found = states(
        [runtime("demo", {"default": session(pending=2, busy=True), "other": session()})],
        [handle("demo", "default", "c-7"), handle("demo", "other", "c-1", done=True)],
    )
    assert found == {
        ("demo", "default"): ("waiting_permission", "c-7", 2),
        ("demo", "other"): ("idle", None, 0),
    }


def test_a_turn_opening_its_session_is_running_and_a_login_prompt_waits_for_the_login() -> None:
    turn = handle("claude", "review", "c-3")
    assert states([runtime("claude", {})], [turn]) == {("claude", "review"): ("running", "c-3", 0)}
    assert states([runtime("claude", {}, login=True)], [turn]) == {
        ("claude", "review"): ("waiting_login", "c-3", 0)
    }


class Pages:
    """The connected pages as the publisher reads them, recording what each is sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.listeners: list[Callable[[], None]] = []

    def connected(self) -> list[Any]:
        return [SimpleNamespace(send=lambda type_, **fields: self.sent.append(fields))]

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: None


def test_the_page_is_sent_the_states_when_they_change_and_when_it_connects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pages = Pages()
    monkeypatch.setattr(agent_states, "frontends", pages)
    sessions = {"default": session(busy=True)}
    runtimes = [runtime("demo", sessions)]
    loop = SimpleNamespace(post=lambda fn: fn())
    publisher = AgentStates(lambda: session_states(runtimes, []), lambda: loop)  # type: ignore[arg-type,return-value]

    publisher.poke()
    publisher.poke()
    sessions["default"] = session(pending=1, busy=True)
    publisher.poke()
    pages.listeners[0]()  # a page connects: it is sent the states as they are
    assert [s["sessions"][0]["state"] for s in pages.sent] == [
        "running",
        "waiting_permission",
        "waiting_permission",
    ]
