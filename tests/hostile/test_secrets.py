"""Secrets reach only the agent process, and no log, trace or saved message list keeps them
(issue 11, medium "Secrets")."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from acp_notebook.client.secrets import REDACTED, redact_event, redact_message
from acp_notebook.protocol.jsonrpc import TraceEvent

from ..cli.test_cli import cli, read_trace

SECRET = "s3cr3t-value-0123"


def test_env_variables_reach_the_agent_but_not_its_terminals_nor_the_trace(tmp_path: Path):
    result = cli(
        "run", "/run printenv ACP_SECRET_KEY", "--env", f"ACP_SECRET_KEY={SECRET}",
        "--permissions", "allow", "--trace", "trace.jsonl", cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "`printenv ACP_SECRET_KEY` exited with code 1" in result.stdout
    assert SECRET not in result.stdout + result.stderr
    trace = tmp_path / "trace.jsonl"
    assert SECRET not in trace.read_text(encoding="utf-8")
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600
    assert read_trace(trace)  # still a trace


def test_a_trace_over_an_existing_readable_file_becomes_private(tmp_path: Path):
    trace = tmp_path / "trace.jsonl"
    trace.write_text("old")
    trace.chmod(0o644)
    result = cli("run", "hi", "--trace", str(trace), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE(trace.stat().st_mode) == 0o600


def session_new(servers: list[dict[str, object]]) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {"cwd": "/w", "mcpServers": servers},
    }


def test_mcp_env_and_header_values_are_redacted_and_everything_else_kept():
    servers = [
        {"name": "db", "command": "db-mcp", "args": ["--x"], "env": [{"name": "DB_PASS", "value": SECRET}]},
        {"type": "http", "name": "web", "url": "https://x", "headers": [{"name": "Authorization", "value": f"Bearer {SECRET}"}]},
    ]  # fmt: skip
    message = session_new(servers)
    redacted = redact_message(message)
    assert SECRET not in json.dumps(redacted)
    server_db, server_web = redacted["params"]["mcpServers"]
    assert server_db == {**servers[0], "env": [{"name": "DB_PASS", "value": REDACTED}]}
    assert server_web["headers"] == [{"name": "Authorization", "value": REDACTED}]
    assert SECRET in json.dumps(message)  # the message that goes to the agent is unchanged


def test_secret_fields_of_an_accepted_form_and_known_values_in_any_text_are_redacted():
    answer = {
        "jsonrpc": "2.0",
        "id": 4,
        "result": {"action": "accept", "content": {"user": "ada", "apiKey": SECRET}},
    }
    echo = {"jsonrpc": "2.0", "method": "session/update", "params": {"text": f"your key is {SECRET}!"}}  # fmt: skip
    assert redact_message(answer)["result"]["content"] == {"user": "ada", "apiKey": REDACTED}
    assert redact_message(echo, {SECRET})["params"]["text"] == f"your key is {REDACTED}!"
    invalid = redact_event(TraceEvent("recv", 0.0, None, f"junk {SECRET}"), {SECRET})
    assert invalid.invalid == f"junk {REDACTED}"


def test_the_notebook_log_and_its_saved_trace_keep_no_secret(tmp_path: Path):
    from acp_notebook.notebook.runtime.agents import NotebookAgents

    agents = NotebookAgents(cwd=str(tmp_path))
    runtime = agents.runtime("demo")
    runtime.env["ACP_LOGIN_KEY"] = SECRET
    (observer,) = runtime.observers
    observer(TraceEvent("send", 0.0, session_new([{"name": "a", "command": "a", "args": [], "env": [{"name": "K", "value": "other-secret"}]}])))  # fmt: skip
    observer(TraceEvent("recv", 0.0, {"jsonrpc": "2.0", "method": "x", "params": {"t": SECRET}}))
    table = agents.message_table()
    saved = tmp_path / "saved.jsonl"
    table.save(str(saved))
    text = saved.read_text(encoding="utf-8") + repr(table) + table.step(1).json()
    assert SECRET not in text and "other-secret" not in text
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600
