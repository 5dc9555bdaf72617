"""What the user decided binds: a hostile agent that writes files or starts commands
without asking, or after being refused, gets a refusal it can act on, and nothing happens
on disk — under `deny`, headless `ask`, and for protected paths under any policy. Under an
interactive `ask` the client asks itself, saying the agent did not ask."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client import ClientConnection, connect
from acp_notebook.client.permission_request import PermissionRequest
from acp_notebook.client.policy import Policy
from acp_notebook.client.rules import PermissionRules
from acp_notebook.client.session import Session
from acp_notebook.client.transcript import MessageEntry
from acp_notebook.protocol import models as m

pytestmark = pytest.mark.anyio

AGENT = Path(__file__).resolve().parent / "agents" / "unasked_actions.py"
SAFETY = 60.0


def ask(call_id: str, **tool_call: Any) -> list[Any]:
    return ["ask", {"toolCallId": call_id, "title": call_id, **tool_call}]


def argv(actions: Sequence[Sequence[Any]]) -> list[str]:
    return [sys.executable, str(AGENT), json.dumps(actions)]


async def run_turn(
    conn: ClientConnection,
    cwd: Path,
    *,
    policy: Policy,
    interactive: bool = False,
    rules: Sequence[str] = (),
    notebook_path: str | None = None,
    answer: str | None = None,
) -> tuple[Session, list[str]]:
    """One prompt; ``answer`` ("allow"/"reject") answers every question the client asks
    itself, as the user would with its buttons. The agent's report, one line per action."""
    session = await conn.new_session(
        cwd, policy=policy, interactive=interactive, notebook_path=notebook_path
    )
    session.permissions.rules = PermissionRules.parse(list(rules))
    turn = session.submit("go")
    with anyio.fail_after(SAFETY):
        while not turn.done:
            for request in session.permissions.pending:
                assert answer is not None, f"unexpected question: {request.tool_call}"
                session.permissions.choose(request.key, answer)
            await anyio.sleep(0.01)
    assert turn.stop_reason == "end_turn", turn.error
    said = "".join(
        e.text
        for e in session.transcript.entries
        if isinstance(e, MessageEntry) and e.role == "agent"
    )
    return session, said.splitlines()


def unasked(session: Session) -> list[PermissionRequest]:
    return [r for r in session.permissions.requests.values() if r.unasked]


@pytest.mark.parametrize(("policy", "interactive"), [("deny", True), ("ask", False)])
async def test_deny_and_headless_ask_refuse_unasked_writes_and_commands(
    tmp_path: Path, policy: Policy, interactive: bool
) -> None:
    target, marker = tmp_path / "notes.txt", tmp_path / "marker"
    actions = [["write", "{cwd}/notes.txt", "pwned"], ["terminal", f"touch {marker}"]]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(conn, tmp_path, policy=policy, interactive=interactive)
    assert not target.exists() and not marker.exists()
    assert report[0].startswith(f"write {tmp_path}/notes.txt: error -32003 Writing")
    assert "ask for permission with session/request_permission first" in report[0]
    assert report[1].startswith(f"terminal touch {marker}: error -32003 Running")
    assert unasked(session) == [], "nobody can click: nothing is asked"


async def test_a_rule_allows_what_the_policy_denies(tmp_path: Path) -> None:
    actions = [["write", "{cwd}/notes.txt", "ok"], ["terminal", "echo", ["hi"]]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(
            conn, tmp_path, policy="deny", rules=["allow edit notes.txt", "allow execute echo *"]
        )
    assert report == [f"write {tmp_path}/notes.txt: ok", "terminal echo: ok"]
    assert (tmp_path / "notes.txt").read_text() == "ok"


async def test_a_deny_rule_refuses_under_policy_allow(tmp_path: Path) -> None:
    marker = tmp_path / "gone"
    marker.write_text("")
    actions = [["terminal", "/bin/rm", [str(marker)]]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="allow", rules=["deny execute rm *"])
    assert marker.exists()
    assert "the permission rule `deny execute rm *` denies it" in report[0]


@pytest.mark.parametrize("answer", ["allow", "reject"])
async def test_an_interactive_ask_asks_itself_when_the_agent_did_not(
    tmp_path: Path, answer: str
) -> None:
    actions = [["write", "{cwd}/notes.txt", "text"]]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(
            conn, tmp_path, policy="ask", interactive=True, answer=answer
        )
    (question,) = unasked(session)
    call = session.transcript.tool_calls[question.tool_call_id]
    assert call.title == "The agent wants to write `notes.txt` without asking first"
    assert [o.kind for o in question.options] == ["allow_once", "reject_once"]
    if answer == "allow":
        assert report == [f"write {tmp_path}/notes.txt: ok"]
        assert (tmp_path / "notes.txt").read_text() == "text"
        assert call.status == "completed"
    else:
        assert "the user did not allow it" in report[0]
        assert not (tmp_path / "notes.txt").exists()
        assert call.status == "failed"


async def test_an_allowed_request_covers_its_writes_and_commands_in_its_turn(
    tmp_path: Path,
) -> None:
    actions = [
        ask("edit-1", kind="edit", locations=[{"path": "{cwd}/a.py"}]),
        ["write", "{cwd}/a.py", "x = 1\n"],
        ["write", "{cwd}/a.py", "x = 2\n"],
        ask("run-1", kind="execute", rawInput={"command": "echo one && echo two"}),
        ["terminal", "echo two"],
        ["terminal", "bash", ["-lc", "echo one && echo two"]],
    ]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(
            conn, tmp_path, policy="ask", interactive=True, answer="allow"
        )
    assert all(line.endswith(("allow", "ok")) for line in report), report
    assert unasked(session) == [], "covered: no second question"
    assert (tmp_path / "a.py").read_text() == "x = 2\n"


async def test_a_rejected_request_binds_its_later_write_and_command(tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    actions = [
        ask("edit-1", kind="edit", locations=[{"path": "{cwd}/a.py"}]),
        ["write", "{cwd}/a.py", "pwned"],
        ask("run-1", kind="execute", rawInput={"command": f"touch {marker}"}),
        ["terminal", f"touch {marker}"],
    ]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(
            conn, tmp_path, policy="ask", interactive=True, answer="reject"
        )
    assert report[0] == "ask edit-1: reject"
    assert "the user rejected it in this turn" in report[1]
    assert "the user rejected it in this turn" in report[3]
    assert not (tmp_path / "a.py").exists() and not marker.exists()
    assert unasked(session) == []


def make_venv(root: Path) -> Path:
    venv = root / ".venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return venv


PROTECTED = [
    ".git/config",
    ".git/hooks/pre-commit",
    ".venv/lib/evil.pth",
    "lib/python3.11/site-packages/x.pth",
    ".acp-notebook.json",
    "analysis.ipynb",
]


@pytest.mark.parametrize("relative", PROTECTED)
async def test_protected_paths_are_never_written_unasked_even_under_allow(
    tmp_path: Path, relative: str
) -> None:
    make_venv(tmp_path)
    (tmp_path / ".git").mkdir()
    config = tmp_path / ".git" / "config"
    config.write_text("[core]\n")
    actions = [["write", f"{{cwd}}/{relative}", "[core]\n\tfsmonitor = touch /tmp/pwned\n"]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="allow", rules=["allow *", "allow edit"])
    assert "error -32003" in report[0] and "no one can be asked" in report[0], report
    assert config.read_text() == "[core]\n"
    if relative != ".git/config":
        assert not (tmp_path / relative).exists()


async def test_a_protected_path_is_asked_under_allow_and_a_rule_naming_it_lifts_it(
    tmp_path: Path,
) -> None:
    actions = [["write", "{cwd}/.git/info/exclude", "*.log\n"]]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(
            conn, tmp_path, policy="allow", interactive=True, answer="reject"
        )
        (question,) = unasked(session)
        assert "inside `.git/`" in session.transcript.tool_calls[question.tool_call_id].title
        _, named = await run_turn(
            conn, tmp_path, policy="allow", rules=["allow edit .git/info/exclude"]
        )
    assert "the user did not allow it" in report[0]
    assert named == [f"write {tmp_path}/.git/info/exclude: ok"]


async def test_a_symlink_to_a_protected_path_is_protected(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "innocent.txt").symlink_to(tmp_path / ".git" / "config")
    actions = [["write", "{cwd}/innocent.txt", "pwned"]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="allow")
    assert "error -32003" in report[0]
    assert not (tmp_path / ".git" / "config").exists()


async def test_the_open_notebook_is_never_written_behind_the_browsers_back(
    tmp_path: Path,
) -> None:
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text('{"cells": []}')
    actions = [["read", "{cwd}/analysis.ipynb"], ["write", "{cwd}/analysis.ipynb", "{}"]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(
            conn, tmp_path, policy="allow", rules=["allow edit *"], notebook_path=str(notebook)
        )
        _, lifted = await run_turn(
            conn,
            tmp_path,
            policy="allow",
            rules=["allow edit analysis.ipynb"],
            notebook_path=str(notebook),
        )
    assert report[0].startswith(f"read {notebook}: ok")
    assert "is the notebook open in Jupyter; edit it with the `notebook` MCP tools" in report[1]
    assert lifted[1] == f"write {notebook}: ok"
    assert notebook.read_text() == "{}"


async def test_policy_allow_still_writes_and_runs_without_asking(tmp_path: Path) -> None:
    actions = [["write", "{cwd}/src/a.py", "x = 1\n"], ["terminal", "echo hi"]]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(conn, tmp_path, policy="allow")
    assert report == [f"write {tmp_path}/src/a.py: ok", "terminal echo hi: ok"]
    assert unasked(session) == []


async def test_an_always_answer_stands_for_later_turns_of_its_kind(tmp_path: Path) -> None:
    always = [
        {"optionId": "always", "name": "Allow always", "kind": "allow_always"},
        {"optionId": "never", "name": "Reject always", "kind": "reject_always"},
    ]
    actions = [["write", "{cwd}/later.txt", "ok"]]
    async with connect(argv(actions)) as conn:
        session = await conn.new_session(tmp_path, policy="ask", interactive=False)
        # An earlier turn's "Allow always" for an edit (as the demo agent remembers it).
        request = session.permissions.open({"toolCallId": "e1", "kind": "edit"}, always)
        request.call = session.transcript.merge_permission_tool_call(
            m.ToolCallUpdate(tool_call_id="e1", kind="edit"), request
        )
        session.permissions.choose(request.key, "always")
        with anyio.fail_after(SAFETY):
            turn = await session.prompt("go")
    assert turn.stop_reason == "end_turn"
    assert (tmp_path / "later.txt").read_text() == "ok"
