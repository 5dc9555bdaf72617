"""A union member validated alone (protocol/variants.py): it reads what the union's lenient
parse reads wherever it reads anything, leaves every other shape to that parse, and makes
no other member of the union."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from typing import Any

import pytest

from acp_notebook.client.routing import _read_update
from acp_notebook.protocol import models as m
from acp_notebook.protocol.variants import member

UPDATES = [
    {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "help", "description": "d"}],
    },
    {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi"},
        "_meta": {"k": 1},
    },
    {
        "sessionUpdate": "agent_thought_chunk",
        "content": {"type": "image", "data": "", "mimeType": "image/png"},
    },
    {
        "sessionUpdate": "tool_call",
        "toolCallId": "t1",
        "title": "Read",
        "kind": "read",
        "status": "pending",
    },
    {"sessionUpdate": "tool_call_update", "toolCallId": "t1", "status": "completed", "extra": [1]},
    {
        "sessionUpdate": "plan",
        "entries": [{"content": "a", "priority": "high", "status": "pending"}],
    },
    {"sessionUpdate": "current_mode_update", "currentModeId": "ask"},
    {"sessionUpdate": "session_info_update", "title": None},
    {
        "sessionUpdate": "usage_update",
        "used": 1,
        "size": 2,
        "cost": {"amount": 0.5, "currency": "USD"},
    },
    {"sessionUpdate": "notice", "severity": "someday", "title": "t"},
]


@pytest.mark.parametrize("raw", UPDATES, ids=lambda raw: raw["sessionUpdate"])
def test_a_member_reads_as_the_union_reads_it(raw: dict[str, Any]) -> None:
    repairs: list[str] = []
    whole = m.parse(m.SessionUpdate, copy.deepcopy(raw), repairs=repairs)
    assert repairs == []
    alone = member("SessionUpdate", copy.deepcopy(raw))
    assert type(alone) is type(whole)
    assert alone == whole and alone.to_wire() == whole.to_wire() == raw


LEFT = {
    "not an object": ["sessionUpdate", "plan"],
    "no discriminator": {"availableCommands": []},
    "discriminator not a string": {"sessionUpdate": ["plan"], "entries": []},
    "unknown discriminator": {"sessionUpdate": "from_the_future", "x": 1},
    "does not validate as it stands": {"sessionUpdate": "plan"},
    "an item to drop": {
        "sessionUpdate": "available_commands_update",
        "availableCommands": [{"name": "ok", "description": "d"}, {"name": 3}],
    },
}


@pytest.mark.parametrize("raw", LEFT.values(), ids=LEFT.keys())
def test_other_shapes_are_left_to_the_union(raw: Any) -> None:
    assert member("SessionUpdate", copy.deepcopy(raw)) is None


@pytest.mark.parametrize("raw", [*UPDATES, *LEFT.values()], ids=lambda raw: str(raw)[:40])
def test_the_router_reads_every_update_as_the_whole_notification_parse_does(raw: Any) -> None:
    params = {"sessionId": "s-1", "update": copy.deepcopy(raw)}
    try:
        whole = m.SessionNotification.parse(copy.deepcopy(params))
    except Exception:
        assert _read_update(params) is None
        return
    read = _read_update(params)
    assert read is not None
    assert read[0] == whole.session_id and type(read[1]) is type(whole.update)
    assert read[1].to_wire() == whole.update.to_wire()


def test_the_repairs_are_the_union_parse_s() -> None:
    raw = LEFT["an item to drop"]
    _, update = _read_update({"sessionId": "s-1", "update": copy.deepcopy(raw)})
    assert isinstance(update, m.AvailableCommandsUpdate)
    assert [c.name for c in update.available_commands] == ["ok"]


def test_reading_an_update_makes_no_other_member_of_its_union() -> None:
    # In a fresh interpreter: the models are made once per process, on first use.
    script = f"""
import json
from acp_notebook.protocol import models as m
from acp_notebook.client.routing import _read_update
from acp_notebook.client.transcript import Transcript
transcript = Transcript("/tmp")
for raw in {json.dumps(UPDATES[:1])}:
    transcript.apply(_read_update({{"sessionId": "s", "update": raw}})[1])
made = sorted(n for n in m.UNION_MEMBERS["SessionUpdate"][1].values() if n in vars(m))
print(json.dumps([made, transcript.commands[0].name, "SessionUpdate" in vars(m)]))
"""
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert json.loads(out) == [["AvailableCommandsUpdate"], "help", False]
