"""The audit's findings against the one permission decision, each with a hostile stdio
agent: a policy that ends with its turn, "Allow always" that never widens to a riskier
command, the agent's own questions about the notebook tools, and the commands a rule let
through listed in the turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client import connect
from acp_notebook.client.notebook_names import NotebookServer
from acp_notebook.client.rules import PermissionRules
from acp_notebook.client.transcript import NoteEntry

from .test_binding_permissions import SAFETY, argv, ask, run_turn, unasked

pytestmark = pytest.mark.anyio

ALWAYS = [
    {"optionId": "once", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "always", "name": "Allow always", "kind": "allow_always"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


async def test_a_policy_ends_with_its_turn(tmp_path: Path) -> None:
    """After a `-p allow` turn ended, the agent (still running) wrote a file and started a
    command: both were served unasked, with no turn to show them."""
    marker = tmp_path / "marker"
    actions: list[Any] = [
        ["write", "{cwd}/during.txt", "ok"],
        ["after", [["write", "{cwd}/late.txt", "pwned"], ["terminal", f"touch {marker}"]]],
    ]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="allow")
        with anyio.fail_after(SAFETY):
            later = (await conn.peer.request("_test/after", {}))["lines"]
    assert report == [f"write {tmp_path}/during.txt: ok"]
    assert not (tmp_path / "late.txt").exists() and not marker.exists()
    assert len(later) == 2 and all("no turn is running" in line for line in later), later


async def test_allow_always_never_widens_to_a_riskier_command(tmp_path: Path) -> None:
    """Choosing "Allow always" on `echo hello` let a later command rated 🔸 (it stops
    processes) run without a question."""
    marker = tmp_path / "marker"
    risky = f"kill -0 $$; touch {marker}"
    actions = [
        [*ask("run-1", kind="execute", rawInput={"command": "echo hello"}), ALWAYS],
        ["terminal", "echo again"],  # no riskier than what was allowed always: covered
        ["terminal", risky],
    ]
    async with connect(argv(actions)) as conn:
        session = await conn.new_session(tmp_path, policy="ask", interactive=True)
        turn = session.submit("go")
        with anyio.fail_after(SAFETY):
            while not turn.done:
                for request in session.permissions.pending:
                    always = request.option("always") is not None
                    session.permissions.choose(request.key, "always" if always else "reject")
                await anyio.sleep(0.01)
    (question,) = unasked(session)
    assert session.transcript.tool_calls[question.tool_call_id].title.startswith(
        f"The agent wants to run `{risky}`"
    )
    assert not marker.exists()


NOTEBOOK = NotebookServer(
    "notebook", lambda: {"run_code": False, "list_variables": True, "read_cell": True}
)


def shapes(tool: str) -> list[dict[str, Any]]:
    """One permission request per agent's naming of the notebook tool ``tool``."""
    text = {"type": "content", "content": {"type": "text", "text": ""}}
    return [
        {  # Claude Code
            "toolCallId": f"claude-{tool}",
            "title": f"mcp__notebook__{tool}",
            "kind": "other",
            "rawInput": {},
            "_meta": {"claudeCode": {"toolName": f"mcp__notebook__{tool}"}},
        },
        {"toolCallId": f"gemini-{tool}", "title": f"{tool} (notebook MCP Server)", "kind": "other"},
        {"toolCallId": f"gemini2-{tool}", "title": f"mcp_notebook_{tool}", "kind": "other"},
        {"toolCallId": f"fast-agent-{tool}", "title": f"notebook/{tool}", "kind": "other"},
        {
            "toolCallId": f"codex-{tool}",
            "title": "Approve MCP tool call",
            "kind": "other",
            "content": [
                {
                    **text,
                    "content": {
                        "type": "text",
                        "text": f'The notebook MCP server wants to run tool "{tool}".',
                    },
                }
            ],
        },
        {
            "toolCallId": f"qwen-{tool}",
            "title": tool,
            "kind": "other",
            "rawInput": {"serverName": "notebook", "toolName": tool, "args": {}},
        },
        {"toolCallId": f"meta-{tool}", "title": "Tool", "_meta": {"toolName": f"notebook__{tool}"}},
    ]


async def test_notebook_rules_decide_the_agents_own_notebook_tool_questions(
    tmp_path: Path,
) -> None:
    """Agents ask before calling an MCP tool, each naming it its own way; the client did
    not see the notebook tools in them: read-only tools were refused in headless runs and
    `notebook` rules did nothing."""
    reads = shapes("list_variables")
    runs = shapes("run_code")
    other = {"toolCallId": "other", "title": "mcp__other__run_code", "kind": "other"}
    actions = [["ask", call] for call in [*reads, *runs, other]]
    async with connect(argv(actions)) as conn:
        session = await conn.new_session(tmp_path, policy="ask", interactive=False)
        session.permissions.notebook_server = NOTEBOOK
        session.permissions.rules = PermissionRules.parse(["deny notebook run_code"])
        with anyio.fail_after(SAFETY):
            turn = await session.prompt("go")
    assert turn.stop_reason == "end_turn"
    answers = {
        r.tool_call_id: (r.chosen.option_id if r.chosen else None, r.decided_by)
        for r in session.permissions.requests.values()
    }
    for call in reads:
        assert answers[call["toolCallId"]] == ("allow", "a read-only notebook tool")
    for call in runs:
        assert answers[call["toolCallId"]] == ("reject", "rule `deny notebook run_code`")
    assert answers["other"] == ("reject", "policy ask without a UI")


async def test_run_code_asked_by_the_agent_leaves_the_one_question_to_the_client(
    tmp_path: Path,
) -> None:
    """An interactive `run_code` cost two questions: the agent's, then the client's own."""
    actions = [["ask", call] for call in shapes("run_code")]
    async with connect(argv(actions)) as conn:
        session = await conn.new_session(tmp_path, policy="ask", interactive=True)
        session.permissions.notebook_server = NOTEBOOK
        with anyio.fail_after(SAFETY):
            turn = await session.prompt("go")
    assert turn.stop_reason == "end_turn", "no question was left for a person"
    assert {r.decided_by for r in session.permissions.requests.values()} == {
        "the notebook tool's own approval"
    }


async def test_a_command_a_rule_allowed_is_listed_in_its_turn(tmp_path: Path) -> None:
    """A command a rule allowed without a permission request left no line in the turn,
    where a file written that way does."""
    actions = [["terminal", "echo", ["hi"]], ["write", "{cwd}/notes.txt", "ok"]]
    async with connect(argv(actions)) as conn:
        session, report = await run_turn(
            conn, tmp_path, policy="deny", rules=["allow execute echo *", "allow edit notes.txt"]
        )
    assert report == ["terminal echo: ok", f"write {tmp_path}/notes.txt: ok"]
    notes = [e.text for e in session.transcript.entries if isinstance(e, NoteEntry)]
    assert (
        "Ran in this turn without a permission request: `echo hi` (rule `allow execute echo *`)."
        in notes
    )
    assert any(note.startswith("Changed in this turn: notes.txt") for note in notes), notes


@pytest.mark.parametrize(
    "env",
    [
        {"BASH_ENV": "{cwd}/payload.sh"},
        {"BASH_FUNC_echo%%": "() { touch {cwd}/M; }"},
        {"LD_PRELOAD": "{cwd}/evil.so"},
        {"PATH": "{cwd}/bin"},
    ],
    ids=lambda env: next(iter(env)),
)
async def test_a_terminals_env_that_changes_what_runs_is_not_allowed_by_a_command_rule(
    tmp_path: Path, env: dict[str, str]
) -> None:
    """Under `allow execute echo*`, `bash -c 'echo hi'` with `BASH_ENV` or `BASH_FUNC_echo%%`
    ran anything: the env of `terminal/create` was no part of the decision."""
    (tmp_path / "payload.sh").write_text(f"touch {tmp_path}/M\n")
    env = {k: v.replace("{cwd}", str(tmp_path)) for k, v in env.items()}
    actions = [["terminal", "bash", ["-c", "echo hi"], env]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="deny", rules=["allow execute *echo*"])
    assert "error -32003" in report[0], report
    assert not (tmp_path / "M").exists()


async def test_the_same_command_without_that_env_is_allowed_by_the_rule(tmp_path: Path) -> None:
    # Control: the rule does allow the plain command, so the refusals above are the env's.
    actions = [["terminal", "bash", ["-c", "echo hi"], {"PAGER": "cat"}]]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="deny", rules=["allow execute *echo*"])
    assert report == ["terminal bash: ok"], report


async def test_the_per_user_state_directory_is_protected_under_allow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the state directory inside the notebook's folder (a notebook kept in `~`), an
    agent under `-p allow` wrote the MCP servers' trust into it itself."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / ".local" / "state"))
    planted = tmp_path / ".local" / "state" / "acp-notebook" / "notebooks" / "x.json"
    actions = [["write", str(planted), '{"trustedMcpServers": {}}']]
    async with connect(argv(actions)) as conn:
        _, report = await run_turn(conn, tmp_path, policy="allow", rules=["allow *"])
    assert "acp_notebook's own state" in report[0] and "no one can be asked" in report[0], report
    assert not planted.exists()


@pytest.mark.parametrize(
    ("command", "target"),
    [
        ("echo '{}' > analysis.ipynb", "analysis.ipynb"),
        ("printf x > .git/hooks/post-checkout", ".git/hooks/post-checkout"),
        ("echo '{}' > .acp-notebook.json", ".acp-notebook.json"),
    ],
)
async def test_a_commands_write_targets_are_protected_like_fs_writes(
    tmp_path: Path, command: str, target: str
) -> None:
    """`echo '{}' > nb.ipynb`, `printf … > .git/hooks/post-checkout` and `> .acp-notebook.json`
    in a terminal ran unasked under `-p allow`, where `fs/write_text_file` to them is asked."""
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text('{"cells": []}')
    async with connect(argv([["terminal", command]])) as conn:
        _, report = await run_turn(conn, tmp_path, policy="allow", notebook_path=str(notebook))
    assert "error -32003" in report[0], report
    assert notebook.read_text() == '{"cells": []}'
    assert not (tmp_path / ".git" / "hooks" / "post-checkout").exists()
    assert not (tmp_path / ".acp-notebook.json").exists()


async def test_a_policy_is_the_turns_it_was_given_with(tmp_path: Path) -> None:
    """The next `%acp` sets the session's policy while an earlier turn still runs: the
    earlier turn keeps the policy it was sent with."""
    actions = [["write", "{cwd}/notes.txt", "ok"]]
    async with connect(argv(actions)) as conn:
        session = await conn.new_session(tmp_path, policy="allow", interactive=False)
        turn = session.submit("go")
        session.permissions.policy = "deny"  # a later prompt's -p deny, adopted at once
        with anyio.fail_after(SAFETY):
            await turn.wait()
    assert turn.stop_reason == "end_turn"
    assert (tmp_path / "notes.txt").read_text() == "ok"
