"""Updates for unknown sessions are kept bounded in ids as well as per id (issue 11, low)."""

from __future__ import annotations

from typing import Any

from acp_notebook.client.routing import Router


class Wire:
    """What a Router registers its handlers with (no agent behind it)."""

    def __init__(self) -> None:
        self.notifications: dict[str, Any] = {}

    def handle_notification(self, method: str, handler: Any) -> None:
        self.notifications[method] = handler

    def handle_request(self, method: str, handler: Any) -> None:
        pass


class Connection:
    def __init__(self) -> None:
        self.peer = Wire()
        self.sessions: dict[str, Any] = {}


def test_updates_for_ever_new_unknown_session_ids_keep_a_bounded_number_of_ids():
    connection = Connection()
    router = Router(connection)  # type: ignore[arg-type]
    on_update = connection.peer.notifications["session/update"]
    for n in range(20_000):
        on_update(
            {
                "sessionId": f"invented-{n}",
                "update": {
                    "sessionUpdate": "agent_message_chunk",
                    "content": {"type": "text", "text": "x"},
                },
            }
        )
    kept = router._orphans
    assert 0 < len(kept) <= 8
    assert "invented-19999" in kept  # the latest id is still kept, for the race it serves
