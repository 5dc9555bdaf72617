"""A reader no payload can kill: deep nesting, lone surrogates and unexpected shapes are
bounded or skipped, with the connection going on (issue 11, high 2 and the surrogate medium).

Timeouts here are safety nets only (``anyio.fail_after``): no test depends on speed.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from acp_notebook.protocol.bounds import (
    CUT_NOTE,
    MAX_DEPTH,
    bounded,
    decode_line,
    encode_message,
    scrub,
)
from acp_notebook.protocol.errors import INTERNAL_ERROR, RpcError

from .test_peer import SAFETY, note, round_trip

pytestmark = pytest.mark.anyio


def nested(depth: int, leaf: Any = "leaf") -> Any:
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


def depth_of(value: Any) -> int:
    level = 0
    while isinstance(value, list):
        value, level = value[0], level + 1
    return level


def deep_line(depth: int) -> bytes:
    """A session/update whose params hold ``depth`` nested arrays (about 2 KB for 1000)."""
    head = b'{"jsonrpc":"2.0","method":"session/update","params":{"deep":'
    return head + b"[" * depth + b'"leaf"' + b"]" * depth + b"}}"


@pytest.mark.parametrize("depth", [200, 900, 1000, 5000, 100_000])
def test_a_line_nested_deeper_than_the_bound_decodes_cut_at_the_bound_with_a_note(depth):
    message = decode_line(deep_line(depth))
    deep = message["params"]["deep"]
    # the message is level 1, params level 2: the array keeps MAX_DEPTH - 2 levels
    assert depth_of(deep) == MAX_DEPTH - 2
    innermost = deep
    while isinstance(innermost, list):
        innermost = innermost[0]
    assert innermost == CUT_NOTE
    assert json.loads(json.dumps(message)) == message  # every consumer can recurse into it


def test_a_line_of_unbalanced_brackets_is_not_json():
    with pytest.raises(ValueError):
        decode_line(b"[" * 1000)
    with pytest.raises(ValueError):
        decode_line(b"[" * 1000 + b"]" * 1001)


OBJECT_LINES = [
    b'{"a":1}',
    b'{"a":1} \t\r',
    b'{"a":NaN,"b":[1,{"c":null}]}',
    b'{"a":1} x',
    b'{"a":1}{}',
    b'{"a": }',
    b"{",
    b'{"a":1,}',
    b'{"a":"\x01"}',
    b'{"a":"\xff"}',
]


@pytest.mark.parametrize("line", OBJECT_LINES)
def test_an_object_line_decodes_as_json_loads_decodes_it_or_is_not_json(line: bytes) -> None:
    try:
        expected = json.loads(line)
    except ValueError:
        with pytest.raises(ValueError):
            decode_line(line)
    else:
        assert repr(decode_line(line)) == repr(expected)  # repr: NaN is not equal to itself


def test_brackets_inside_strings_do_not_count_as_nesting():
    text = "[{" * 2000 + '\\"'
    line = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": text}}).encode()
    assert decode_line(line)["result"]["text"] == text


def test_lone_surrogates_become_replacement_characters_escaped_or_raw():
    escaped = b'{"text":"a\\ud800b","\\udfff":1}'
    raw = '{"text":"a\ud800b"}'.encode("utf-8", "surrogatepass")
    assert decode_line(escaped) == {"text": "a\ufffdb", "\ufffd": 1}
    assert decode_line(raw) == {"text": "a\ufffdb"}
    # a valid pair stays the character it encodes
    assert decode_line(b'{"text":"\\ud83d\\ude00"}') == {"text": "\U0001f600"}


def test_scrub_and_bounded_leave_ordinary_values_alone():
    value = {"a": [1, 2.5, None, True, "é", {"b": "c"}]}
    assert bounded(value) == value
    assert scrub("héllo") == "héllo"


def test_encode_message_writes_values_that_json_dumps_cannot():
    line = encode_message({"text": "x\udc80y", "deep": nested(5000)})
    message = json.loads(line)
    assert line.endswith(b"\n")
    assert message["text"] == "x\ufffdy"
    assert depth_of(message["deep"]) == MAX_DEPTH - 1


# ---------------------------------------------------------------- the peer goes on


@pytest.mark.parametrize("depth", [900, 1000, 100_000])
async def test_a_deeply_nested_line_does_not_kill_the_connection(connect, depth):
    seen = []
    async with connect() as (peer, remote):
        peer.handle_notification("session/update", seen.append)
        with anyio.fail_after(SAFETY):
            await remote.send_raw(deep_line(depth) + b"\n")
            await remote.send_raw(b"[" * 1000 + b"\n")  # unbalanced: not JSON at all
            await remote.send(note("session/update", {"after": True}))
            await round_trip(peer, remote)
    assert len(seen) == 2
    assert depth_of(seen[0]["deep"]) == MAX_DEPTH - 2
    assert seen[1] == {"after": True}


async def test_a_deeply_nested_request_is_answered_with_its_id(connect):
    async def echo(params: Any) -> Any:
        return params

    async with connect() as (peer, remote):
        peer.handle_request("_test/echo", echo)
        with anyio.fail_after(SAFETY):
            await remote.send_raw(
                b'{"jsonrpc":"2.0","id":7,"method":"_test/echo","params":{"deep":'
                + b"[" * 3000
                + b"]" * 3000
                + b"}}\n"
            )
            reply = await remote.read()
    assert reply["id"] == 7
    assert depth_of(reply["result"]["deep"]) == MAX_DEPTH - 2


async def test_an_error_reply_echoing_a_lone_surrogate_is_written(connect):
    async def refuse(params: Any) -> Any:
        raise RpcError(INTERNAL_ERROR, f"no such file: {params['path']}")

    async with connect() as (peer, remote):
        peer.handle_request("fs/read_text_file", refuse)
        with anyio.fail_after(SAFETY):
            await remote.send_raw(
                b'{"jsonrpc":"2.0","id":1,"method":"fs/read_text_file",'
                b'"params":{"path":"/tmp/\\udcff"}}\n'
            )
            reply = await remote.read()
            await round_trip(peer, remote)
    assert reply["error"]["message"] == "no such file: /tmp/\ufffd"


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "method": ["session/update"]},
        {"jsonrpc": "2.0", "method": {"a": 1}, "params": {}},
        {"jsonrpc": "2.0", "id": {"a": 1}, "error": "not an object"},
        {"jsonrpc": "2.0", "id": 0, "error": {"code": "x", "message": ["y"]}},
        {"jsonrpc": "2.0", "method": "$/cancel_request", "params": {"requestId": [1]}},
    ],
)
async def test_a_message_of_an_unexpected_shape_is_skipped_and_the_connection_goes_on(
    connect, message
):
    seen = []
    async with connect() as (peer, remote):
        peer.handle_notification("session/update", seen.append)
        with anyio.fail_after(SAFETY):
            await remote.send(message)
            await remote.send(note("session/update", {"after": True}))
            await round_trip(peer, remote)
    assert seen == [{"after": True}]
