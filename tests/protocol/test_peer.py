"""The JSON-RPC peer against a raw remote end (in-memory pipes) and a stdlib chunk producer.

Timeouts here are safety nets only (``anyio.fail_after``): no test depends on speed.
"""

from __future__ import annotations

import json
import time
from typing import Any

import anyio
import pytest

from acp_notebook.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    REQUEST_CANCELLED,
    ConnectionClosed,
    RpcError,
)
from acp_notebook.protocol.jsonrpc import CANCEL_REQUEST, Peer, TraceEvent
from acp_notebook.protocol.memory import memory_pipe
from acp_notebook.protocol.models import (
    AgentMessageChunk,
    SessionNotification,
    UnknownContentBlock,
    UnknownSessionUpdate,
    UsageUpdate,
)
from acp_notebook.protocol.process import open_agent_process

pytestmark = pytest.mark.anyio

SAFETY = 10  # seconds; a safety net against hangs, never a performance bound


def note(method: str, params: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": method, "params": params}


async def round_trip(peer: Peer, remote: Any, request_id: Any = "sync") -> None:
    """Make sure the peer has processed everything the remote sent so far.

    The peer reads its input in order, so once it has answered a request sent after
    some lines, it has handled those lines.
    """

    async def pong(params: Any) -> Any:
        return {"pong": True}

    peer.handle_request("_test/ping", pong)
    await remote.send({"jsonrpc": "2.0", "id": request_id, "method": "_test/ping"})
    reply = await remote.read()
    assert reply == {"jsonrpc": "2.0", "id": request_id, "result": {"pong": True}}


# ---------------------------------------------------------------- requests and responses


async def test_request_returns_the_result_the_remote_answered(connect):
    async with connect() as (peer, remote):
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:
                results = []

                async def call():
                    results.append(
                        await peer.request("session/new", {"cwd": "/tmp", "mcpServers": []})
                    )

                tg.start_soon(call)
                sent = await remote.read()
                assert sent == {
                    "jsonrpc": "2.0",
                    "id": sent["id"],
                    "method": "session/new",
                    "params": {"cwd": "/tmp", "mcpServers": []},
                }
                await remote.send(
                    {"jsonrpc": "2.0", "id": sent["id"], "result": {"sessionId": "s1"}}
                )
    assert results == [{"sessionId": "s1"}]


async def test_meanwhile_runs_while_the_answer_is_awaited_and_sees_it_arrive(connect):
    steps: list[str] = []

    async def meanwhile(answered: anyio.Event) -> None:
        while not answered.is_set():  # work in small steps until the answer is in
            steps.append("step")
            await anyio.sleep(0.01)
        steps.append("answered")

    sent_before_meanwhile: list[Any] = []
    results = []
    async with connect() as (peer, remote):
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:

                async def call():
                    results.append(await peer.request("initialize", {}, meanwhile=meanwhile))

                tg.start_soon(call)
                sent_before_meanwhile.append(await remote.read())
                await anyio.sleep(0.05)
                await remote.send(
                    {"jsonrpc": "2.0", "id": sent_before_meanwhile[0]["id"], "result": {"ok": 1}}
                )
    assert results == [{"ok": 1}]
    # It ran while the remote had the request and had not answered, and ended with the answer.
    assert steps[0] == "step" and steps[-1] == "answered" and steps.count("answered") == 1


async def test_notifications_are_applied_in_arrival_order_before_the_response(connect):
    seen: list[int] = []
    seen_when_request_returned: list[int] = []
    async with connect() as (peer, remote):
        peer.handle_notification("session/update", lambda params: seen.append(params["n"]))
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:

                async def call():
                    await peer.request("session/prompt", {"sessionId": "s1", "prompt": []})
                    seen_when_request_returned.extend(seen)

                tg.start_soon(call)
                request = await remote.read()
                # One write with everything, then more writes: ordering must not depend on chunking.
                await remote.send_raw(
                    b"".join(
                        json.dumps(note("session/update", {"n": n})).encode() + b"\n"
                        for n in range(500)
                    )
                )
                for n in range(500, 1000):
                    await remote.send(note("session/update", {"n": n}))
                await remote.send(
                    {"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}}
                )
    assert seen_when_request_returned == list(range(1000))


async def test_rpc_error_from_the_remote_carries_code_message_and_data(connect):
    async with connect() as (peer, remote):
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:
                errors: list[RpcError] = []

                async def call():
                    with pytest.raises(RpcError) as caught:
                        await peer.request("session/new", {"cwd": "/", "mcpServers": []})
                    errors.append(caught.value)

                tg.start_soon(call)
                request = await remote.read()
                await remote.send(
                    {
                        "jsonrpc": "2.0",
                        "id": request["id"],
                        "error": {
                            "code": -32000,
                            "message": "Authentication required",
                            "data": {"hint": "login"},
                        },
                    }
                )
    (error,) = errors
    assert (error.code, error.message, error.data) == (
        -32000,
        "Authentication required",
        {"hint": "login"},
    )


async def test_handler_raising_rpc_error_answers_with_that_error(connect):
    async def read_file(params):
        raise RpcError(-32002, f"Resource not found: {params['path']}", {"uri": params["path"]})

    async with connect() as (peer, remote):
        peer.handle_request("fs/read_text_file", read_file)
        with anyio.fail_after(SAFETY):
            await remote.send(
                {
                    "jsonrpc": "2.0",
                    "id": 4,
                    "method": "fs/read_text_file",
                    "params": {"path": "/nope"},
                }
            )
            reply = await remote.read()
    assert reply == {
        "jsonrpc": "2.0",
        "id": 4,
        "error": {"code": -32002, "message": "Resource not found: /nope", "data": {"uri": "/nope"}},
    }


async def test_handler_raising_another_exception_answers_internal_error(connect):
    async def broken(params):
        raise ValueError("boom")

    async with connect() as (peer, remote):
        peer.handle_request("fs/read_text_file", broken)
        with anyio.fail_after(SAFETY):
            await remote.send(
                {"jsonrpc": "2.0", "id": 5, "method": "fs/read_text_file", "params": {}}
            )
            reply = await remote.read()
            # the connection survives the failure
            await round_trip(peer, remote)
    assert reply["id"] == 5
    assert reply["error"]["code"] == INTERNAL_ERROR
    assert "boom" in reply["error"]["message"]


async def test_unknown_incoming_request_is_answered_method_not_found_with_the_method_in_data(
    connect,
):
    async with connect() as (_peer, remote):
        with anyio.fail_after(SAFETY):
            await remote.send({"jsonrpc": "2.0", "id": 9, "method": "_vendor/weird", "params": {}})
            reply = await remote.read()
    assert reply["id"] == 9
    assert reply["error"]["code"] == METHOD_NOT_FOUND
    assert reply["error"]["data"] == {"method": "_vendor/weird"}


async def test_unknown_notifications_are_ignored(connect):
    seen = []
    async with connect() as (peer, remote):
        peer.handle_notification("session/update", seen.append)
        with anyio.fail_after(SAFETY):
            await remote.send(note("weird/notification", {}))
            await remote.send(note("_vendor/notice", {"x": 1}))
            await remote.send(note(CANCEL_REQUEST, {"requestId": 999}))  # cancels nothing that runs
            await remote.send(note("session/update", {"n": 1}))
            # The first thing the peer writes is the answer to this request: nothing was
            # written in reply to the notifications.
            await round_trip(peer, remote)
    assert seen == [{"n": 1}]


async def test_request_ids_of_any_json_type_are_accepted_and_echoed_exactly(connect):
    ids = ["abc", 7, "7", None, 0, -3, 2**53 + 1, ""]

    async def echo(params):
        return {"for": params["for"]}

    async with connect() as (peer, remote):
        peer.handle_request("_test/echo", echo)
        with anyio.fail_after(SAFETY):
            for i, request_id in enumerate(ids):
                await remote.send(
                    {
                        "jsonrpc": "2.0",
                        "id": request_id,
                        "method": "_test/echo",
                        "params": {"for": i},
                    }
                )
            lines = [await remote.read_line() for _ in ids]
    replies = {json.loads(line)["result"]["for"]: line for line in lines}
    for i, request_id in enumerate(ids):
        reply = json.loads(replies[i])
        assert "id" in reply
        assert reply["id"] == request_id and type(reply["id"]) is type(request_id), replies[i]


async def test_a_response_to_an_unknown_id_is_ignored(connect):
    async with connect() as (peer, remote):
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:
                results = []

                async def call():
                    results.append(
                        await peer.request("session/prompt", {"sessionId": "s1", "prompt": []})
                    )

                tg.start_soon(call)
                request = await remote.read()
                assert isinstance(request["id"], int)
                await remote.send(
                    {"jsonrpc": "2.0", "id": 777777, "result": {"stopReason": "refusal"}}
                )
                await remote.send(
                    {
                        "jsonrpc": "2.0",
                        "id": str(request["id"]),
                        "result": {"stopReason": "refusal"},
                    }
                )
                await remote.send(
                    {"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "nope"}}
                )
                await remote.send(
                    {"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}}
                )
    assert results == [{"stopReason": "end_turn"}]


# ---------------------------------------------------------------- malformed input


async def test_malformed_lines_are_skipped_reported_as_invalid_and_the_connection_goes_on(
    connect, recorder
):
    seen = []
    bad_lines = [
        b"this is not json",
        b'"a JSON string"',
        b"42",
        b'{"jsonrpc": "2.0", "method":',
        b"\xff\xfe garbage",
    ]
    async with connect() as (peer, remote):
        peer.add_observer(recorder)
        peer.handle_notification("session/update", seen.append)
        with anyio.fail_after(SAFETY):
            for line in bad_lines:
                await remote.send_raw(line + b"\n")
                await remote.send(
                    note("session/update", {"after": line.decode("utf-8", "replace")})
                )
            await round_trip(peer, remote)
    assert seen == [{"after": line.decode("utf-8", "replace")} for line in bad_lines]
    assert [e.invalid for e in recorder.invalid] == [
        line.decode("utf-8", "replace") for line in bad_lines
    ]
    assert all(e.direction == "recv" for e in recorder.invalid)


async def test_a_batch_array_is_rejected_with_an_invalid_request_error_with_null_id(
    connect, recorder
):
    called = []

    async def handler(params):
        called.append(params)
        return {}

    async with connect() as (peer, remote):
        peer.add_observer(recorder)
        peer.handle_request("_test/echo", handler)
        batch = [{"jsonrpc": "2.0", "id": 1, "method": "_test/echo", "params": {}}]
        with anyio.fail_after(SAFETY):
            await remote.send(batch)
            reply = await remote.read()
            await round_trip(peer, remote)
    assert reply["id"] is None and "id" in reply
    assert reply["error"]["code"] == INVALID_REQUEST
    assert called == []  # the batch's members were not executed
    assert [json.loads(e.invalid) for e in recorder.invalid] == [batch]


async def test_a_line_over_max_line_bytes_is_skipped_and_the_connection_goes_on(connect, recorder):
    limit = 1000
    seen = []
    big = json.dumps(note("session/update", {"text": "x" * 5000})).encode() + b"\n"
    async with connect(max_line_bytes=limit) as (peer, remote):
        peer.add_observer(recorder)
        peer.handle_notification("session/update", lambda params: seen.append(params["text"]))
        with anyio.fail_after(SAFETY):
            await remote.send(note("session/update", {"text": "before"}))
            # delivered in one piece (the line and its newline together) ...
            await remote.send_raw(big)
            await remote.send(note("session/update", {"text": "middle"}))
            # ... and trickled in small pieces, the newline arriving last
            for start in range(0, len(big), 300):
                await remote.send_raw(big[start : start + 300])
            # ... and in the same write as a good line
            await remote.send_raw(
                big + json.dumps(note("session/update", {"text": "after"})).encode() + b"\n"
            )
            await round_trip(peer, remote)
    assert seen == ["before", "middle", "after"]
    assert len(recorder.invalid) == 3
    assert all(len(e.invalid) <= 1024 for e in recorder.invalid)


async def test_a_line_just_under_max_line_bytes_is_handled(connect):
    limit = 1000
    seen = []
    async with connect(max_line_bytes=limit) as (peer, remote):
        peer.handle_notification("session/update", lambda params: seen.append(params["text"]))
        line = json.dumps(note("session/update", {"text": ""})).encode()
        text = "y" * (limit - len(line))
        with anyio.fail_after(SAFETY):
            await remote.send(note("session/update", {"text": text}))
            await round_trip(peer, remote)
    assert seen == [text]


# ---------------------------------------------------------------- $/cancel_request


async def test_remote_cancel_request_cancels_our_handler_and_answers_request_cancelled(connect):
    started = anyio.Event()
    handler_cancelled = anyio.Event()

    async def ask_user(params):
        started.set()
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            handler_cancelled.set()
            raise

    async with connect() as (peer, remote):
        peer.handle_request("session/request_permission", ask_user)
        with anyio.fail_after(SAFETY):
            await remote.send(
                {
                    "jsonrpc": "2.0",
                    "id": "perm-1",
                    "method": "session/request_permission",
                    "params": {},
                }
            )
            await started.wait()
            await remote.send(note(CANCEL_REQUEST, {"requestId": "perm-1"}))
            reply = await remote.read()
    assert handler_cancelled.is_set()
    assert reply["id"] == "perm-1"
    assert reply["error"]["code"] == REQUEST_CANCELLED


async def test_cancelling_a_local_request_sends_cancel_request_with_its_id(connect):
    async with connect() as (peer, remote):
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:
                tg.start_soon(
                    peer.request, "terminal/wait_for_exit", {"sessionId": "s1", "terminalId": "t1"}
                )
                request = await remote.read()
                tg.cancel_scope.cancel()
            cancel = await remote.read()
            # A late answer to the cancelled request is ignored; the connection goes on.
            await remote.send(
                {
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "error": {"code": -32800, "message": "cancelled"},
                }
            )
            await round_trip(peer, remote)
    assert cancel == {
        "jsonrpc": "2.0",
        "method": CANCEL_REQUEST,
        "params": {"requestId": request["id"]},
    }


# ---------------------------------------------------------------- observers


async def test_the_observer_sees_every_message_in_both_directions_with_a_timestamp(
    connect, recorder
):
    async def answer(params):
        return {"content": "hello"}

    remote_sent: list[dict[str, Any]] = []
    remote_read: list[dict[str, Any]] = []

    async with connect() as (peer, remote):

        async def remote_send(message):
            remote_sent.append(message)
            await remote.send(message)

        async def remote_read_one():
            message = await remote.read()
            remote_read.append(message)
            return message

        peer.add_observer(recorder)
        peer.handle_request("fs/read_text_file", answer)
        peer.handle_notification("session/update", lambda params: None)
        before = time.time()
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:
                tg.start_soon(peer.request, "session/prompt", {"sessionId": "s1", "prompt": []})
                request = await remote_read_one()
                await remote_send(note("session/update", {"n": 1}))
                await remote_send(note("_unknown/notification", {}))
                await remote_send(
                    {
                        "jsonrpc": "2.0",
                        "id": 50,
                        "method": "fs/read_text_file",
                        "params": {"path": "/a"},
                    }
                )
                await remote_read_one()
                await remote_send({"jsonrpc": "2.0", "id": 51, "method": "_no/such_method"})
                await remote_read_one()
                await remote_send(
                    {"jsonrpc": "2.0", "id": request["id"], "result": {"stopReason": "end_turn"}}
                )
            await peer.notify("session/cancel", {"sessionId": "s1"})
            await remote_read_one()
        after = time.time()
    assert recorder.messages("send") == remote_read
    assert recorder.messages("recv") == remote_sent
    assert len(recorder.events) == len(remote_read) + len(remote_sent)
    assert all(before <= event.time <= after for event in recorder.events)
    for event in recorder.events:
        record = event.to_json()
        assert record == {
            "direction": event.direction,
            "time": event.time,
            "message": event.message,
        }
        assert json.loads(json.dumps(record)) == record


async def test_trace_event_for_an_invalid_line_holds_it_truncated_to_1kb(connect, recorder):
    line = ("not json " * 400).encode()
    async with connect() as (peer, remote):
        peer.add_observer(recorder)
        with anyio.fail_after(SAFETY):
            await remote.send_raw(line + b"\n")
            await round_trip(peer, remote)
    (event,) = recorder.invalid
    assert event.to_json() == {
        "direction": "recv",
        "time": event.time,
        "invalid": line[:1024].decode(),
    }
    assert isinstance(event.time, float)


def test_trace_event_to_json_has_direction_time_and_message():
    message = {"jsonrpc": "2.0", "method": "session/update", "params": {}}
    assert TraceEvent("send", 1700000000.5, message).to_json() == {
        "direction": "send",
        "time": 1700000000.5,
        "message": message,
    }


async def test_a_failing_observer_does_not_stop_the_connection(connect, recorder):
    def broken(event):
        raise RuntimeError("observer bug")

    seen = []
    async with connect() as (peer, remote):
        peer.add_observer(broken)
        peer.add_observer(recorder)
        peer.handle_notification("session/update", seen.append)
        with anyio.fail_after(SAFETY):
            await remote.send(note("session/update", {"n": 1}))
            await round_trip(peer, remote)
    assert seen == [{"n": 1}]
    assert len(recorder.events) == 3  # the notification, the ping and its answer


# ---------------------------------------------------------------- end of the connection


async def test_every_pending_request_fails_with_connection_closed_when_the_stream_ends(connect):
    async def reason():
        return "The agent `fake` exited with code 1"

    failures: list[str] = []
    async with connect(close_reason=reason) as (peer, remote):
        with anyio.fail_after(SAFETY):
            async with anyio.create_task_group() as tg:

                async def call(method):
                    try:
                        await peer.request(method, {})
                    except ConnectionClosed as exc:
                        failures.append(str(exc))

                for method in ("session/prompt", "session/new", "_test/other"):
                    tg.start_soon(call, method)
                for _ in range(3):
                    await remote.read()
                await remote.close()
            await peer.wait_finished()
        assert peer.closed
        assert peer.closed_message == "The agent `fake` exited with code 1"
        with pytest.raises(ConnectionClosed, match="exited with code 1"):
            await peer.request("session/new", {})
        with pytest.raises(ConnectionClosed):
            await peer.notify("session/cancel", {"sessionId": "s1"})
    assert sorted(failures) == sorted(
        f"The agent `fake` exited with code 1 (while waiting for the answer to {m})"
        for m in ("session/prompt", "session/new", "_test/other")
    )


async def test_cancelling_run_fails_pending_requests_without_asking_close_reason():
    # close_reason explains an ended stream (an agent's exit code); when run() is
    # cancelled the stream has not ended and the reporter must not be awaited (an
    # agent's describe_exit would wait, shielded, for an exit that is not coming).
    asked = []

    async def reason():
        asked.append(True)
        return "The agent `fake` closed its output but is still running"

    peer_in, _remote_out = memory_pipe()
    remote_in, peer_out = memory_pipe()
    peer = Peer(peer_in, peer_out, close_reason=reason)
    failures: list[str] = []
    run_scope = anyio.CancelScope()

    async def run():
        with run_scope:
            await peer.run()

    async def call():
        try:
            await peer.request("session/prompt", {})
        except ConnectionClosed as exc:
            failures.append(str(exc))

    with anyio.fail_after(SAFETY):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            tg.start_soon(call)
            await remote_in.receive()  # the request went out
            run_scope.cancel()
            await peer.wait_finished()
    assert asked == []
    assert failures == ["the connection closed (while waiting for the answer to session/prompt)"]
    assert peer.closed


# ---------------------------------------------------------------- a real producer process


async def test_twenty_thousand_chunks_arrive_in_order_with_unknown_variants_delivered(agent_argv):
    n = 20_000
    texts: list[str] = []
    odd: list[tuple[int, dict[str, Any]]] = []  # (chunks seen before it, update)

    def on_update(params):
        update = params["update"]
        content = update.get("content") or {}
        if update.get("sessionUpdate") == "agent_message_chunk" and content.get("type") == "text":
            texts.append(content["text"])
        else:
            odd.append((len(texts), update))

    async with open_agent_process(agent_argv("chunk_agent.py", str(n))) as agent:
        peer = Peer(agent.stdout, agent.stdin, close_reason=agent.describe_exit)
        peer.handle_notification("session/update", on_update)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            with anyio.fail_after(60):
                await peer.request("initialize", {"protocolVersion": 1})
                session = await peer.request("session/new", {"cwd": "/", "mcpServers": []})
                result = await peer.request(
                    "session/prompt",
                    {"sessionId": session["sessionId"], "prompt": [{"type": "text", "text": "go"}]},
                )
            tg.cancel_scope.cancel()
    assert result == {"stopReason": "end_turn"}
    assert texts == [str(i) for i in range(n)]
    assert [(position, update["sessionUpdate"]) for position, update in odd] == [
        (n // 4 + 1, "some_future_update"),
        (n // 2 + 1, "agent_message_chunk"),
        (3 * n // 4 + 1, "usage_update"),
    ]
    assert odd[1][1]["content"] == {"type": "future_block", "data": "?"}
    assert odd[2][1]["used"] is None

    # The models read them leniently instead of dropping them.
    parsed = [
        SessionNotification.parse({"sessionId": "chunks", "update": update}).update
        for _, update in odd
    ]
    assert isinstance(parsed[0], UnknownSessionUpdate)
    assert parsed[0].raw == {"sessionUpdate": "some_future_update", "payload": {"x": 1}}
    assert isinstance(parsed[1], AgentMessageChunk)
    assert isinstance(parsed[1].content, UnknownContentBlock)
    assert parsed[1].content.raw == {"type": "future_block", "data": "?"}
    assert isinstance(parsed[2], UsageUpdate)
    assert parsed[2].used is None and parsed[2].size == 200000
