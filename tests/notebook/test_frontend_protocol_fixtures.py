"""The kernel's half of the live-notebook protocol against the one fixture both halves are
tested with, ``tests/data/live_notebook/messages.json`` (the extension's half:
``labextension/src/__tests__/messages.spec.ts``). Each message the kernel sends is made by
the kernel's own code from the fixture's values and must be the fixture's message; each
message the extension sends is read by the kernel's own code and must come out with the
fixture's values. The comm below the code is a recording one, as the ipywidgets tests do.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import comm
import pytest

from acp_notebook import __version__
from acp_notebook.client.checkpoints import Checkpoints, TurnChanges
from acp_notebook.client.fs import FileChange
from acp_notebook.notebook.changes.page import PageChanges
from acp_notebook.notebook.frontend import changes as review_wire
from acp_notebook.notebook.frontend import registry
from acp_notebook.notebook.frontend.live import LiveNotebook
from acp_notebook.notebook.frontend.protocol import (
    FRONTEND_TARGET,
    KERNEL_TARGET,
    PROTOCOL_VERSION,
    CellChange,
    CellDelete,
    CellEdit,
    CellInsert,
    CellNotFound,
    Hello,
    LiveTimeout,
    message,
)
from acp_notebook.notebook.frontend.registry import Frontends

FIXTURE = Path(__file__).parents[1] / "data" / "live_notebook" / "messages.json"
MESSAGES = json.loads(FIXTURE.read_text(encoding="utf-8"))
TO_FRONTEND: dict[str, dict[str, Any]] = MESSAGES["kernel_to_frontend"]
TO_KERNEL: dict[str, dict[str, Any]] = MESSAGES["frontend_to_kernel"]

Message = dict[str, Any]


class RecordingComm:
    """A comm that keeps what the kernel sends; ``answer`` may reply to each message."""

    def __init__(self, answer: Callable[[Message], Message | None] = lambda _: None) -> None:
        self.comm_id = "comm-1"
        self.sent: list[Message] = []
        self.closed = False
        self._answer = answer
        self._on_msg: Callable[[Message], None] | None = None

    def send(self, data: Message) -> None:
        self.sent.append(data)
        answer = self._answer(data)
        if answer is not None:
            self.deliver(answer)

    def deliver(self, data: Message) -> None:
        """A message from the page, as the comm manager hands it over."""
        assert self._on_msg is not None
        self._on_msg({"content": {"data": data}})

    def on_msg(self, callback: Callable[[Message], None]) -> None:
        self._on_msg = callback

    def on_close(self, callback: Callable[[Message], None]) -> None:
        pass

    def close(self) -> None:
        self.closed = True


def replying(reply: Message) -> Callable[[Message], Message]:
    """Answers every request with ``reply``, under the request's id."""
    return lambda request: {**reply, "id": request["id"]}


def connected(answer: Callable[[Message], Message | None] = lambda _: None) -> LiveNotebook:
    hello = Hello.model_validate(TO_KERNEL["hello"])
    return LiveNotebook(RecordingComm(answer), hello, on_closed=lambda _: None)  # type: ignore[arg-type]


def sent(live: LiveNotebook) -> list[Message]:
    return live._comm.sent  # type: ignore[attr-defined]


def run(call: Coroutine[Any, Any, Any]) -> Any:
    return asyncio.run(call)


def request_as_sent(live: LiveNotebook, name: str) -> Message:
    """The request ``live`` sent, with the fixture's id in place of its own."""
    (request,) = sent(live)
    return {**request, "id": TO_FRONTEND[name]["id"]}


def result(name: str) -> Any:
    return TO_KERNEL[name]["result"]


@pytest.fixture
def beacon_and_target(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """What ``%load_ext`` registers and opens, recorded instead of reaching a kernel."""
    opened: dict[str, Any] = {}

    class Manager:
        def register_target(self, name: str, callback: Callable[..., None]) -> None:
            opened["target"] = (name, callback)

        def unregister_target(self, name: str, callback: Callable[..., None]) -> None:
            pass

    def create_comm(target_name: str, data: Message) -> RecordingComm:
        opened["beacon"] = (target_name, data)
        return RecordingComm()

    monkeypatch.setattr(comm, "get_comm_manager", Manager)
    monkeypatch.setattr(comm, "create_comm", create_comm)
    frontends = Frontends()
    frontends.install()
    opened["frontends"] = frontends
    return opened


def turn_of_the_fixture(root: Path) -> TurnChanges:
    """The turn the fixture's ``review`` shows: a file with two hunks and a new file."""
    before = "a\nb\nc\nd\ne\nf\ng\nh\n"
    after = before.replace("b\n", "B\n").replace("g\n", "G\n")
    checkpoints = Checkpoints(str(root))
    checkpoints.begin(0)
    for name, old, new in (("a.txt", before, after), ("new.txt", None, "1\n2\n3\n4\n5\n6\n7\n")):
        path = root / name
        path.write_text(new)
        checkpoints.file_written(FileChange(str(path), old, new, resolved_path=str(path)))
    turn = checkpoints.end()
    assert turn is not None
    return turn


# ---------------------------------------------------------------------- the fixture itself


def test_both_halves_name_the_same_protocol_version_and_comm_targets() -> None:
    assert MESSAGES["protocol"] == {
        "version": PROTOCOL_VERSION,
        "kernel_target": KERNEL_TARGET,
        "frontend_target": FRONTEND_TARGET,
    }
    for msg in [*TO_FRONTEND.values(), *TO_KERNEL.values()]:
        assert msg["v"] == PROTOCOL_VERSION


def test_every_message_of_the_fixture_is_checked_here() -> None:
    checked = {
        name.removeprefix("test_the_kernel_sends_").removeprefix("test_the_kernel_reads_")
        for name in globals()
        if name.startswith(("test_the_kernel_sends_", "test_the_kernel_reads_"))
    }
    assert {*TO_FRONTEND, *TO_KERNEL} <= checked | PAIRED


#: Checked inside a test named after another message of its exchange.
PAIRED = {
    "reply_list_cells",
    "reply_read_cell",
    "reply_propose_accepted",
    "reply_propose_rejected",
    "reply_propose_stale",
    "reply_apply",
    "reply_run_cell",
    "reply_error",
    "propose_edit",
    "propose_insert",
    "propose_delete",
    "review_redraw",
    "ask_fix",
}


# ---------------------------------------------------------------- connecting


def test_the_kernel_sends_announce(beacon_and_target: dict[str, Any]) -> None:
    target, data = beacon_and_target["beacon"]
    assert target == FRONTEND_TARGET
    assert data == {**TO_FRONTEND["announce"], "version": __version__}


def test_the_kernel_reads_hello(beacon_and_target: dict[str, Any]) -> None:
    name, on_open = beacon_and_target["target"]
    assert name == KERNEL_TARGET
    channel = RecordingComm()
    on_open(channel, {"content": {"data": TO_KERNEL["hello"]}})
    (live,) = beacon_and_target["frontends"].connected()
    hello = TO_KERNEL["hello"]
    assert (live.path, live.extension_version, live.app) == (
        hello["path"],
        hello["extension_version"],
        hello["app"],
    )


def test_the_kernel_sends_welcome(beacon_and_target: dict[str, Any]) -> None:
    _, on_open = beacon_and_target["target"]
    channel = RecordingComm()
    on_open(channel, {"content": {"data": TO_KERNEL["hello"]}})
    assert channel.sent == [{**TO_FRONTEND["welcome"], "version": __version__}]


def test_the_kernel_sends_unsupported(beacon_and_target: dict[str, Any]) -> None:
    _, on_open = beacon_and_target["target"]
    channel = RecordingComm()
    on_open(channel, {"content": {"data": {**TO_KERNEL["hello"], "v": PROTOCOL_VERSION + 1}}})
    (refusal,) = channel.sent
    # The sentence names this kernel's version: the same fields, its own words.
    assert refusal.keys() == TO_FRONTEND["unsupported"].keys()
    assert refusal["type"] == "unsupported" and isinstance(refusal["message"], str)
    assert channel.closed


def test_the_kernel_reads_path() -> None:
    live = connected()
    live._comm.deliver(TO_KERNEL["path"])  # type: ignore[attr-defined]
    assert live.path == TO_KERNEL["path"]["path"]


# ---------------------------------------------------------------- requests and replies


def test_the_kernel_sends_list_cells() -> None:
    live = connected(replying(TO_KERNEL["reply_list_cells"]))
    asked = TO_FRONTEND["list_cells"]
    cells = run(live.list_cells(max_output_chars=asked["max_output_chars"]))
    assert request_as_sent(live, "list_cells") == asked
    assert [cell.model_dump() for cell in cells] == result("reply_list_cells")["cells"]


def test_the_kernel_sends_read_cell() -> None:
    live = connected(replying(TO_KERNEL["reply_read_cell"]))
    asked = TO_FRONTEND["read_cell"]
    cell = run(live.read_cell(asked["cell_id"], max_output_chars=asked["max_output_chars"]))
    assert request_as_sent(live, "read_cell") == asked
    assert cell.model_dump() == result("reply_read_cell")["cell"]


def test_the_kernel_reads_reply_error() -> None:
    live = connected(replying(TO_KERNEL["reply_error"]))
    with pytest.raises(CellNotFound) as raised:
        run(live.read_cell("c-gone"))
    assert str(raised.value) == TO_KERNEL["reply_error"]["error"]["message"]


@pytest.mark.parametrize(
    ("name", "reply"),
    [
        ("propose_edit", "reply_propose_accepted"),
        ("propose_insert", "reply_propose_rejected"),
        ("propose_delete", "reply_propose_stale"),
    ],
)
def test_the_kernel_sends_propose(name: str, reply: str) -> None:
    live = connected(replying(TO_KERNEL[reply]))
    asked = TO_FRONTEND[name]
    wire = asked["change"]
    made: dict[str, Callable[[], CellChange]] = {
        "edit": lambda: CellEdit(wire["cell_id"], wire["source"], wire["expected_source"]),
        "insert": lambda: CellInsert(wire["after_id"], wire["source"], wire["cell_type"]),
        "delete": lambda: CellDelete(wire["cell_id"], wire["expected_source"]),
    }
    change = made[wire["op"]]()
    outcome = run(live.propose(change, label=asked["label"]))
    assert request_as_sent(live, name) == asked
    assert outcome.model_dump() == result(reply)


def test_the_kernel_sends_apply() -> None:
    live = connected(replying(TO_KERNEL["reply_apply"]))
    asked = TO_FRONTEND["apply"]
    wire = asked["change"]
    outcome = run(live.apply(CellInsert(wire["after_id"], wire["source"], wire["cell_type"])))
    assert request_as_sent(live, "apply") == asked
    assert outcome.model_dump() == result("reply_apply")


def test_the_kernel_sends_run_cell() -> None:
    live = connected(replying(TO_KERNEL["reply_run_cell"]))
    asked = TO_FRONTEND["run_cell"]
    outcome = run(
        live.run_cell(
            asked["cell_id"],
            source=asked["source"],
            wait=asked["wait"],
            max_output_chars=asked["max_output_chars"],
        )
    )
    assert request_as_sent(live, "run_cell") == asked
    assert outcome.model_dump() == result("reply_run_cell")


def test_the_kernel_reads_reply_run_cell_stale() -> None:
    live = connected(replying(TO_KERNEL["reply_run_cell_stale"]))
    asked = TO_FRONTEND["run_cell"]
    outcome = run(live.run_cell(asked["cell_id"], source=asked["source"], wait=asked["wait"]))
    assert outcome.status == "stale"
    assert outcome.model_dump() == result("reply_run_cell_stale")


def test_the_kernel_sends_cancel() -> None:
    live = connected()  # the page never answers
    change = CellDelete("c-notes", "# Notes")
    with pytest.raises(LiveTimeout):
        run(live.propose(change, label="never answered", timeout=0))
    proposal, cancel = sent(live)
    assert cancel == {**TO_FRONTEND["cancel"], "id": proposal["id"]}


# ---------------------------------------------------------------- the review bar


@pytest.fixture
def fixture_turn(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> TurnChanges:
    # The fixture's new file is one hunk longer than this bound: its fold line is sent.
    monkeypatch.setattr(review_wire, "MAX_HUNK_LINES", 5)
    return turn_of_the_fixture(tmp_path)


def test_the_kernel_sends_review(fixture_turn: TurnChanges) -> None:
    shown = TO_FRONTEND["review"]
    fields = review_wire.review_fields(fixture_turn, shown["review"], shown["cell_id"])
    assert message("review", **fields) == shown

    redraw = TO_FRONTEND["review_redraw"]
    fixture_turn.forgotten = True
    fields = review_wire.review_fields(fixture_turn, redraw["review"], None, redraw["message"])
    assert message("review", **fields) == redraw


def test_the_kernel_reads_revert(fixture_turn: TurnChanges, tmp_path: Path) -> None:
    # The fixture reverts the second hunk of a.txt alone: a field read under another
    # name reverts the whole change, the whole turn, or nothing.
    said = run(PageChanges._run(connected(), fixture_turn, TO_KERNEL["revert"]))
    assert said == "Reverted a.txt."
    assert (tmp_path / "a.txt").read_text() == "a\nB\nc\nd\ne\nf\ng\nh\n"
    assert (tmp_path / "new.txt").exists()


def test_the_kernel_sends_agents(monkeypatch: pytest.MonkeyPatch) -> None:
    from acp_notebook.notebook.runtime import agent_states

    live = connected()
    monkeypatch.setattr(agent_states, "frontends", _OnePage(live))
    shown = TO_FRONTEND["agents"]
    states = [agent_states.SessionState(**fields) for fields in shown["sessions"]]
    publisher = agent_states.AgentStates(lambda: states, loop=lambda: None)  # type: ignore[arg-type,return-value]

    publisher.poke()
    publisher.poke()  # nothing changed: nothing sent again
    assert sent(live) == [shown]


class _OnePage:
    """The connected pages, as the publisher reads them: one."""

    def __init__(self, live: LiveNotebook) -> None:
        self.live = live

    def connected(self) -> list[LiveNotebook]:
        return [self.live]

    def on_change(self, listener: Callable[[], None]) -> Callable[[], None]:
        return lambda: None


# ---------------------------------------------------------------- the page's %acp cells


@pytest.mark.parametrize("name", ["ask", "ask_fix"])
def test_the_kernel_reads_ask(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sent = TO_KERNEL[name]
    metadata = {"cellId": "c-acp", registry.ASK_METADATA: sent}
    monkeypatch.setattr(registry, "_execute_metadata", lambda: metadata)
    ask = Frontends.asked()
    assert ask is not None
    assert ask.model_dump() == {**sent, "lines": tuple(sent["lines"]) if sent["lines"] else None}
    assert Frontends.executing_cell() == "c-acp"


def test_an_ask_of_another_protocol_version_is_not_read(monkeypatch: pytest.MonkeyPatch) -> None:
    other = {**TO_KERNEL["ask"], "v": PROTOCOL_VERSION + 1}
    monkeypatch.setattr(registry, "_execute_metadata", lambda: {registry.ASK_METADATA: other})
    assert Frontends.asked() is None
