"""Golden wire messages: one JSON fixture per message kind of the protocol models, each read the
same by every read path (the lenient parse, a union member read alone, the client's strict
request reader, the text-chunk fast path) and written back byte for byte.

The message kinds come from the generated models: every request, its response and every
notification of ``AGENT_METHODS``, ``CLIENT_METHODS`` and ``PROTOCOL_METHODS``, and every
``session/update`` kind of the ``SessionUpdate`` union; a kind without a fixture fails.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from acp_notebook.client.handlers import SESSION_REQUESTS, read_elicitation, read_params
from acp_notebook.client.routing import _read_update
from acp_notebook.protocol import models as m
from acp_notebook.protocol.bounds import encode_message
from acp_notebook.protocol.conformance import schema_errors, validator_available
from acp_notebook.protocol.modelbase import AcpModel, UnknownVariant
from acp_notebook.protocol.text_chunk import CHUNK_UPDATES, text_chunk
from acp_notebook.protocol.variants import member

GOLDEN = Path(__file__).parent


class Kind(NamedTuple):
    """One kind of message: its fixture's name, its method, and what it carries."""

    name: str
    method: str
    #: "request", "response" or "notification".
    part: str
    #: Who sends it: "client" or "agent" (None: either, `$/cancel_request`).
    sender: str | None
    #: The model class or union alias its params (or result) are read as.
    model: Any


def _kinds() -> list[Kind]:
    kinds = []
    for table, sender, other in (
        (m.AGENT_METHODS, "client", "agent"),
        (m.CLIENT_METHODS, "agent", "client"),
        (m.PROTOCOL_METHODS, None, None),
    ):
        for method, spec in table.items():
            stem = method.removeprefix("$/").replace("/", ".")
            if method == "session/update":
                tags = m.UNION_MEMBERS["SessionUpdate"][1]
                kinds += [
                    Kind(f"{stem}.{tag}", method, "notification", sender, spec.params)
                    for tag in tags
                ]
            elif spec.result is None:
                kinds.append(
                    Kind(f"{stem}.notification", method, "notification", sender, spec.params)
                )
            else:
                kinds.append(Kind(f"{stem}.request", method, "request", sender, spec.params))
                kinds.append(Kind(f"{stem}.response", method, "response", other, spec.result))
    return kinds


KINDS = _kinds()
ROUTES = {route.method: route for route in SESSION_REQUESTS}


def _fixture(kind: Kind) -> dict[str, Any]:
    message: dict[str, Any] = json.loads((GOLDEN / f"{kind.name}.json").read_text(encoding="utf-8"))
    return message


def _payload_key(kind: Kind) -> str:
    return "result" if kind.part == "response" else "params"


def _union_name(model: Any) -> str | None:
    return next((name for name in m.UNION_MEMBERS if getattr(m, name) is model), None)


def _same(read: AcpModel, expected: AcpModel) -> None:
    assert type(read) is type(expected)
    assert read == expected
    assert read.to_wire() == expected.to_wire()


def test_every_message_kind_has_a_fixture_and_every_fixture_a_kind() -> None:
    fixtures = {path.stem for path in GOLDEN.glob("*.json")}
    expected = {kind.name for kind in KINDS}
    assert sorted(expected - fixtures) == [], "message kinds without a golden fixture"
    assert sorted(fixtures - expected) == [], "golden fixtures of no message kind"
    assert len(expected) == len(KINDS)


@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_a_golden_message_is_read_as_its_kind_and_written_back_byte_equal(kind: Kind) -> None:
    message = _fixture(kind)
    assert message.get("method", kind.method) == kind.method
    key = _payload_key(kind)
    read = m.parse(kind.model, message[key])
    assert isinstance(read, AcpModel) and not isinstance(read, UnknownVariant)
    if kind.method == "session/update":
        assert read.update.to_wire()["sessionUpdate"] == kind.name.rpartition(".")[2]
        assert not isinstance(read.update, UnknownVariant)
    assert encode_message({**message, key: read.to_wire()}) == encode_message(message)


def _has_other_read_paths(kind: Kind) -> bool:
    return (
        _union_name(kind.model) is not None
        or kind.method == "session/update"
        or (kind.part == "request" and kind.method in ROUTES)
    )


#: The kinds read by another path besides the lenient parse.
READ_TWICE = [kind for kind in KINDS if _has_other_read_paths(kind)]


@pytest.mark.parametrize("kind", READ_TWICE, ids=[kind.name for kind in READ_TWICE])
def test_a_golden_message_is_read_the_same_by_every_read_path(kind: Kind) -> None:
    message = _fixture(kind)
    payload = message[_payload_key(kind)]
    expected = m.parse(kind.model, payload)
    union = _union_name(kind.model)
    if union is not None:  # the union's member read alone, without making the union
        alone = member(union, payload)
        discriminator = m.UNION_MEMBERS[union][0]
        # Without its discriminator a value is the lenient parse's to read (its default member).
        assert (alone is None) == (discriminator not in payload)
        if alone is not None:
            _same(alone, expected)
    if kind.part == "request" and kind.method in ROUTES:  # the client's request reader
        route = ROUTES[kind.method]
        _same(route.read(payload), expected)  # type: ignore[arg-type]
        _same(read_params(route.params, payload), expected)  # strict, as for what it acts on
    if kind.part == "request" and kind.method == "elicitation/create":
        _same(read_elicitation(payload), expected)
    if kind.method == "session/update":
        update = member("SessionUpdate", payload["update"])
        assert update is not None
        _same(update, expected.update)
        read = _read_update(payload)  # the client's reader of an update
        assert read is not None and read[0] == expected.session_id
        _same(read[1], expected.update)
        chunk = text_chunk(payload)
        if payload["update"]["sessionUpdate"] in CHUNK_UPDATES:
            # The fixtures' chunks are plain text: the fast path must take them.
            assert chunk is not None
            assert chunk.session_id == expected.session_id
            assert chunk.session_update == expected.update.session_update
            assert chunk.text == expected.update.content.text
            assert chunk.message_id == expected.update.message_id
        else:
            assert chunk is None


@pytest.mark.skipif(not validator_available(), reason="jsonschema is not installed")
@pytest.mark.parametrize("kind", KINDS, ids=[kind.name for kind in KINDS])
def test_a_golden_message_conforms_to_the_vendored_schema(kind: Kind) -> None:
    message = _fixture(kind)
    senders = [kind.sender] if kind.sender is not None else ["client", "agent"]
    for sender in senders:
        method = kind.method if kind.part == "response" else None
        assert schema_errors(message, sender=sender, request_method=method) == []  # type: ignore[arg-type]
