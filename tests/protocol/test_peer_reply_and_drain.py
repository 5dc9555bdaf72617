"""Two Peer features an agent needs: work done right after an answer is written
(:class:`Reply`), and answering what was received when the other side closes its output
(``drain``).

They came from the demo agent, which had to watch its own output to send the command
list after the ``session/new`` answer, and wrapped its input to delay the end of the
stream so that ``printf '...' | python -m acp_notebook.agents.demo`` got its answers.
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from acp_notebook.protocol.errors import ConnectionClosed
from acp_notebook.protocol.jsonrpc import Reply

from .test_peer import SAFETY, round_trip

pytestmark = pytest.mark.anyio


def request(request_id: int, method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}


async def test_a_reply_follow_up_comes_right_after_the_answer(connect):
    async with connect() as (peer, remote):

        async def new_session(params: Any) -> Reply:
            async def announce() -> None:
                await peer.notify("session/update", {"update": "commands"})

            return Reply({"sessionId": "s1"}, announce)

        peer.handle_request("session/new", new_session)
        with anyio.fail_after(SAFETY):
            await remote.send(request(1, "session/new"))
            first, second = await remote.read(), await remote.read()
    assert first == {"jsonrpc": "2.0", "id": 1, "result": {"sessionId": "s1"}}
    assert second == {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"update": "commands"},
    }


async def test_a_failing_follow_up_is_logged_and_the_connection_goes_on(connect, caplog):
    async with connect() as (peer, remote):

        async def broken() -> None:
            raise RuntimeError("follow-up bug")

        async def handler(params: Any) -> Reply:
            return Reply({"ok": True}, broken)

        peer.handle_request("_test/answer", handler)
        with anyio.fail_after(SAFETY):
            await remote.send(request(1, "_test/answer"))
            assert (await remote.read())["result"] == {"ok": True}
            await round_trip(peer, remote)
    assert "the follow-up of _test/answer failed" in caplog.text


async def test_with_drain_requests_received_before_the_end_are_answered(connect):
    release = anyio.Event()
    async with connect(drain=SAFETY) as (peer, remote):

        async def slow(params: Any) -> Any:
            await release.wait()
            await peer.notify("session/update", {"n": params["n"]})
            return {"n": params["n"]}

        peer.handle_request("_test/slow", slow)
        with anyio.fail_after(SAFETY):
            await remote.send(request(1, "_test/slow", {"n": 1}))
            await remote.send(request(2, "_test/slow", {"n": 2}))
            await remote.close()  # like `printf '...' | agent`: the input ends at once
            release.set()
            received = [await remote.read() for _ in range(4)]
            await peer.wait_finished()
    answers = {m["id"]: m["result"] for m in received if "id" in m}
    assert answers == {1: {"n": 1}, 2: {"n": 2}}
    assert [m["params"]["n"] for m in received if "method" in m] == [1, 2]
    assert peer.closed


async def test_with_drain_our_own_requests_fail_at_once_when_the_stream_ends(connect):
    failures: list[str] = []
    async with connect(drain=SAFETY) as (peer, remote):

        async def asks_back(params: Any) -> Any:
            try:
                await peer.request("fs/read_text_file", {"path": "/x"})
            except ConnectionClosed as exc:
                failures.append(str(exc))
            try:
                await peer.request("fs/read_text_file", {"path": "/y"})
            except ConnectionClosed as exc:
                failures.append(str(exc))
            return {"done": True}

        peer.handle_request("session/prompt", asks_back)
        with anyio.fail_after(SAFETY):
            await remote.send(request(1, "session/prompt"))
            assert (await remote.read())["method"] == "fs/read_text_file"
            await remote.close()
            answer = await remote.read()
            await peer.wait_finished()
    assert answer == {"jsonrpc": "2.0", "id": 1, "result": {"done": True}}
    assert failures == [
        "the connection closed (while waiting for the answer to fs/read_text_file)",
        "the connection closed",
    ]


@pytest.mark.parametrize("drain", [0.0, 0.1], ids=["at-once", "after-the-drain"])
async def test_handlers_still_running_when_the_input_ends_are_cancelled(connect, drain):
    cancelled = anyio.Event()
    async with connect(drain=drain) as (peer, remote):

        async def forever(params: Any) -> Any:
            try:
                await anyio.sleep_forever()
            finally:
                cancelled.set()

        peer.handle_request("_test/forever", forever)
        with anyio.fail_after(SAFETY):
            await remote.send(request(1, "_test/forever"))
            await round_trip(peer, remote)
            await remote.close()
            await cancelled.wait()
            await peer.wait_finished()
        with pytest.raises(ConnectionClosed):
            await peer.notify("session/update", {})
