"""The ``acp-notebook`` command, run as a subprocess in a temporary directory.

``run`` prints the turn's transcript as Markdown and ends with ``stop reason: X`` (exit 0
for any stop reason); when the agent fails it exits non-zero with one line on stderr.
``doctor``, ``agents`` and ``demo-agent`` are covered too, and preset resolution is
checked with fake executables on PATH.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client.presets import AgentNotFound, resolve_agent
from acp_notebook.protocol.conformance import schema_errors

AGENTS = Path(__file__).resolve().parent.parent / "agents"
SCRIPT = Path(sys.executable).parent / "acp-notebook"
CLI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "acp_notebook"]
DEMO = shlex.join([sys.executable, "-m", "acp_notebook.agents.demo"])
SAFETY = 120  # seconds; a safety net, never a performance bound
#: The two messages the demo's /unknown sends outside the schema on purpose.
OFF_SCHEMA = ("demo_future_update", "demo_future_block")


def scripted(*args: str) -> str:
    return shlex.join([sys.executable, str(AGENTS / "session_agent.py"), *args])


def cli(
    *args: str, cwd: Path, env: dict[str, str] | None = None, **kwargs: Any
) -> subprocess.CompletedProcess[str]:
    """Run the command with stdin not a TTY (``/dev/null``) unless told otherwise."""
    kwargs.setdefault("stdin", subprocess.DEVNULL)
    return subprocess.run(
        [*CLI, *args],
        cwd=cwd,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=SAFETY,
        **kwargs,
    )


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0, result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("acp-notebook: ")
    return lines[0]


def read_trace(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def trace_schema_errors(records: list[dict[str, Any]], *, skip: tuple[str, ...] = ()) -> list[str]:
    """Schema errors of every message in a trace, responses checked against the method of
    the request they answer (ids tracked per direction)."""
    asked: dict[str, dict[str, str]] = {"send": {}, "recv": {}}
    errors = []
    for record in records:
        message = record.get("message")
        if message is None:
            continue
        direction = record["direction"]
        if "method" in message and "id" in message:
            asked[direction][repr(message["id"])] = message["method"]
        if any(word in json.dumps(message) for word in skip):
            continue
        answered = "recv" if direction == "send" else "send"
        method = None if "method" in message else asked[answered].get(repr(message.get("id")))
        sender = "client" if direction == "send" else "agent"
        for error in schema_errors(message, sender=sender, request_method=method):
            errors.append(f"{direction} {json.dumps(message)[:200]}: {error}")
    return errors


# --- run ----------------------------------------------------------------------------------------


def test_run_prints_the_transcript_and_the_stop_reason(tmp_path: Path) -> None:
    result = cli("run", "/run echo hi", "--permissions", "allow", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.startswith("**You:** /run echo hi\n")
    assert "```console\n$ sh -c 'echo hi'\nhi\n[exit code 0]\n```" in out
    assert "Permission: Allow once (chosen by policy allow)" in out
    assert out.endswith("\nstop reason: end_turn\n")
    assert result.stderr == ""


def test_run_takes_the_short_options_of_acp(tmp_path: Path) -> None:
    result = cli("run", "-a", "demo", "-p", "allow", "-t", "60", "/run echo hi", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Permission: Allow once (chosen by policy allow)" in result.stdout


@pytest.mark.parametrize("reason", ["max_tokens", "refusal", "max_turn_requests"])
def test_run_exits_zero_for_any_stop_reason(tmp_path: Path, reason: str) -> None:
    result = cli("run", f"/stop {reason}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith(f"\nstop reason: {reason}\n")


def test_the_trace_is_json_lines_and_every_message_conforms(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    result = cli(
        "run", "/run echo hi", "--permissions", "allow", "--trace", str(trace), cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    records = read_trace(trace)
    for record in records:
        assert set(record) == {"direction", "time", "message"}
        assert record["direction"] in ("send", "recv")
        assert isinstance(record["time"], float)
        assert isinstance(record["message"], dict)
    sent = [r["message"] for r in records if r["direction"] == "send"]
    assert sent[0]["method"] == "initialize"
    methods = [m.get("method") for m in sent]
    assert {"initialize", "session/new", "session/prompt"} <= set(methods)
    # The client answered the agent's requests (permission, terminal/*) in the trace too.
    answers = [m for m in sent if "method" not in m]
    assert len(answers) >= 5
    times = [r["time"] for r in records]
    assert times == sorted(times)
    assert trace_schema_errors(records) == []


def test_every_agent_message_but_the_deliberate_unknowns_conforms(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    result = cli("run", "/unknown", "--trace", str(trace), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    records = read_trace(trace)
    assert any(word in json.dumps(r) for r in records for word in OFF_SCHEMA)
    assert trace_schema_errors(records, skip=OFF_SCHEMA) == []
    assert "Unknown update <code>demo_future_update</code> (shown raw)" in result.stdout


def test_malformed_lines_unknown_methods_and_updates_never_fail_run(tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    result = cli("run", "noise", "--agent", scripted(), "--trace", str(trace), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "still here" in result.stdout
    assert "Unknown update <code>acme_future_update</code> (shown raw)" in result.stdout
    assert result.stdout.endswith("\nstop reason: end_turn\n")
    records = read_trace(trace)
    invalid = [r for r in records if "invalid" in r]
    assert invalid == [
        {"direction": "recv", "time": invalid[0]["time"], "invalid": "this line is not JSON"}
    ]
    assert isinstance(invalid[0]["time"], float)
    # Unknown requests were answered "method not found"; the client's messages conform.
    asked = {
        r["message"]["id"]: r["message"]["method"]
        for r in records
        if r["direction"] == "recv" and "message" in r and "id" in r["message"]
        and "method" in r["message"]
    }  # fmt: skip
    errors = {
        asked[r["message"]["id"]]: r["message"]["error"]["code"]
        for r in records
        if r["direction"] == "send" and "message" in r and "error" in r["message"]
    }
    assert errors == {"_acme/unknown": -32601, "acme/unknown_method": -32601}
    client_records = [r for r in records if r["direction"] == "send"]
    assert trace_schema_errors(client_records) == []


def test_permissions_deny_leaves_the_file_byte_identical(tmp_path: Path) -> None:
    target = tmp_path / "module.py"
    original = b"def f(x):\n    return x\n"
    target.write_bytes(original)
    result = cli("run", "/edit module.py", "--permissions", "deny", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == original
    assert "Permission: Reject (chosen by policy deny)" in result.stdout


def test_permissions_ask_without_a_tty_denies(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_bytes(b"keep\n")
    result = cli("run", "/edit notes.txt", "--permissions", "ask", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == b"keep\n"
    assert "Permission: Reject (chosen by policy ask without a UI)" in result.stdout
    result = cli("run", "/run touch made-it", cwd=tmp_path)  # ask is the default
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "made-it").exists()


def test_a_timeout_is_a_failure_with_one_clear_line(tmp_path: Path) -> None:
    result = cli("run", "/slow", "--timeout", "1", cwd=tmp_path)
    line = one_error_line(result)
    assert "did not finish within 1 s" in line
    # The agent confirmed the cancel: its answer is still shown.
    assert result.stdout.endswith("\nstop reason: cancelled\n")


def test_a_timeout_with_an_agent_that_never_answers_stops_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "agent.pid"
    result = cli(
        "run", "hang", "--agent", scripted("--ignore-eof", "--pid-file", str(pid_file)),
        "--timeout", "0.5", "--cancel-grace", "0.5", cwd=tmp_path,
    )  # fmt: skip
    line = one_error_line(result)
    assert "within 0.5 s" in line and "cancellation" in line
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_an_agent_that_exits_is_reported_with_its_exit_code(tmp_path: Path) -> None:
    result = cli(
        "run", "hi", "--agent", shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"]),
        cwd=tmp_path,
    )  # fmt: skip
    line = one_error_line(result)
    assert "exited with code 3" in line


def test_an_agent_that_exits_at_once_still_reports_its_exit_code_and_stderr(
    tmp_path: Path,
) -> None:
    # `sh` exits before the client has written `initialize`: the write fails, and the
    # error must still say why (exit code, stderr), not only "the connection is closed".
    for _ in range(3):
        result = cli("run", "hi", "--agent", "sh -c 'echo boom >&2; exit 3'", cwd=tmp_path)
        line = one_error_line(result)
        assert "exited with code 3" in line and "boom" in line


def test_the_python_in_python_c_is_python(tmp_path: Path) -> None:
    result = cli("run", "hi", "--agent", "python -c 'import sys; sys.exit(3)'", cwd=tmp_path)
    assert "exited with code 3" in one_error_line(result)


def test_a_command_not_on_path_is_a_clear_sentence(tmp_path: Path) -> None:
    result = cli("run", "hi", "--agent", "no-such-agent-anywhere --acp", cwd=tmp_path)
    line = one_error_line(result)
    assert "`no-such-agent-anywhere` was not found on PATH" in line


def test_env_reaches_the_agent(tmp_path: Path) -> None:
    result = cli(
        "run", "env ACP_TEST_VALUE", "--agent", scripted(), "--env", "ACP_TEST_VALUE=hello world",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "env ACP_TEST_VALUE=hello world" in result.stdout
    result = cli("run", "x", "--env", "NOEQUALS", cwd=tmp_path)
    assert result.returncode != 0 and "NAME=VALUE" in result.stderr


def test_add_dir_lets_the_agent_read_a_file_there(tmp_path: Path) -> None:
    work = tmp_path / "work"
    extra = tmp_path / "extra"
    work.mkdir()
    extra.mkdir()
    data = extra / "data.txt"
    data.write_text("line from the extra directory\n")
    with_dir = cli("run", f"/read {data}", "--add-dir", str(extra), cwd=work)
    assert with_dir.returncode == 0, with_dir.stderr
    assert "line from the extra directory" in with_dir.stdout
    without = cli("run", f"/read {data}", cwd=work)
    assert without.returncode == 0, without.stderr
    assert "line from the extra directory" not in without.stdout
    assert "outside the session's directories" in without.stdout


def test_auth_logs_in_before_the_session(tmp_path: Path) -> None:
    agent = f"{DEMO} --require-auth"
    result = cli("run", "/stop end_turn", "--agent", agent, "--auth", "demo-login", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("\nstop reason: end_turn\n")
    refused = cli("run", "/stop end_turn", "--agent", agent, cwd=tmp_path)
    line = one_error_line(refused)
    assert "needs authentication" in line and "`demo-login`" in line and "--auth" in line
    unknown = cli("run", "x", "--agent", agent, "--auth", "nope", cwd=tmp_path)
    assert "`nope`" in one_error_line(unknown)


# --- doctor -------------------------------------------------------------------------------------


def test_doctor_reports_the_demo_agent(tmp_path: Path) -> None:
    result = cli("doctor", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "Agent: acp_notebook demo agent" in out
    assert "Protocol version: 1" in out
    assert "Agent info: acp-notebook-demo " in out and "(acp_notebook demo agent)" in out
    assert "Capabilities: loadSession; prompt: image, embeddedContext; sessions: list, " in out
    assert "Auth methods: demo-login (Demo login; agent)" in out
    assert "session/new: works (modes: ask, code; config options: mode, model, verbose)" in out


def test_doctor_on_a_missing_command_says_so(tmp_path: Path) -> None:
    result = cli("doctor", "--agent", "no-such-agent-anywhere", cwd=tmp_path)
    assert result.returncode != 0
    assert "Started: no. The agent command `no-such-agent-anywhere` was not found on PATH" in (
        result.stdout
    )


def test_doctor_on_an_auth_required_agent_gives_the_hint(tmp_path: Path) -> None:
    agent = f"{DEMO} --require-auth"
    result = cli("doctor", "--agent", agent, cwd=tmp_path)
    assert result.returncode != 0
    out = result.stdout
    assert "session/new: needs authentication: Authentication required" in out
    assert "Hint: authenticate with method `demo-login`" in out
    # The suggested command line can be pasted: the agent command is quoted.
    assert f"--agent {shlex.quote(agent)} --auth demo-login" in out


def test_doctor_on_an_agent_that_exits_early(tmp_path: Path) -> None:
    result = cli("doctor", "--agent", "sh -c 'echo no model configured >&2; exit 1'", cwd=tmp_path)
    assert result.returncode != 0
    assert "exited with code 1" in result.stdout
    assert "no model configured" in result.stdout


# --- agents and presets -------------------------------------------------------------------------


def fake_executables(directory: Path, *names: str) -> Path:
    directory.mkdir(exist_ok=True)
    for name in names:
        path = directory / name
        path.write_text("#!/bin/sh\nexit 0\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return directory


def test_agents_lists_presets_with_commands_and_availability(tmp_path: Path) -> None:
    bin_dir = fake_executables(tmp_path / "bin", "claude-agent-acp")
    result = cli("agents", cwd=tmp_path, env={"PATH": str(bin_dir)})
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "demo" in out and "ready via builtin" in out
    claude = next(line for line in out.splitlines() if line.startswith("claude "))
    assert "ready via local" in claude
    assert f"✓ local    {bin_dir / 'claude-agent-acp'}" in out
    assert (
        "✗ npx      npx --yes @agentclientprotocol/claude-agent-acp  (Node.js's `npx` is not on PATH)"
        in out
    )
    codex = next(line for line in out.splitlines() if line.startswith("codex "))
    assert "not installed" in codex
    assert "(`codex-acp` is not on PATH)" in out
    assert "auth: " in out


def test_an_installed_binary_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_executables(tmp_path / "bin", "claude-agent-acp", "npx")
    monkeypatch.setenv("PATH", str(bin_dir))
    spec = resolve_agent("claude")
    assert spec.method == "local"
    assert spec.argv == [str(bin_dir / "claude-agent-acp")]
    assert spec.preset is not None and spec.display_name == "Claude Agent"


def test_npx_wins_when_only_npx_is_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_executables(tmp_path / "bin", "npx", "uvx")
    monkeypatch.setenv("PATH", str(bin_dir))
    spec = resolve_agent("claude")
    assert spec.method == "npx"
    assert spec.argv == [str(bin_dir / "npx"), "--yes", "@agentclientprotocol/claude-agent-acp"]
    gemini = resolve_agent("gemini")
    assert gemini.argv[-2:] == ["@google/gemini-cli", "--acp"]


def test_a_preset_writes_its_own_state_and_claude_is_told_it_is_sandboxed_only_when_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from dataclasses import replace

    from acp_notebook.protocol.sandbox import Mechanism

    monkeypatch.setenv("PATH", str(fake_executables(tmp_path / "bin", "npx")))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    spec = resolve_agent("claude")
    assert {"~/.claude/", "~/.claude.json", "~/.npm/"} <= set(spec.writable)
    made = spec.confinement(None, [str(tmp_path / "p")])
    assert made.mode == "workspace" and str(tmp_path / "home" / ".claude") in made.writable
    confined = replace(made, mechanism=Mechanism("landlock", 7))
    assert spec.confined_env(confined)["IS_SANDBOX"] == "1"
    for unconfined in (
        replace(confined, mode="off"),
        replace(confined, mechanism=Mechanism("none")),
    ):
        assert "IS_SANDBOX" not in spec.confined_env(unconfined)


def test_codex_leaves_its_own_sandbox_to_the_clients_only_when_the_client_confines_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Codex's own sandbox needs bubblewrap (without it every sandboxed command exits 101);
    # inside the client's sandbox its danger-full-access still cannot leave the folder.
    from dataclasses import replace

    from acp_notebook.notebook.runtime.start import would_start
    from acp_notebook.protocol.sandbox import Mechanism, SandboxChoice

    bin_dir = fake_executables(tmp_path / "bin", "codex-acp", "claude-agent-acp")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    spec = resolve_agent("codex")
    assert spec.argv == [str(tmp_path / "bin" / "codex-acp")]
    made = spec.confinement(None, [str(tmp_path / "p")])
    confined = replace(made, mechanism=Mechanism("landlock", 7))
    own_sandbox_off = ["-c", 'sandbox_mode="danger-full-access"']
    assert spec.confined_argv(confined) == [*spec.argv, *own_sandbox_off]
    for unconfined in (
        replace(confined, mode="off"),
        replace(confined, mechanism=Mechanism("none")),
    ):
        assert spec.confined_argv(unconfined) == spec.argv
    bwrap = replace(confined, mechanism=Mechanism("bwrap"))
    assert spec.confined_argv(bwrap)[-2:] == own_sandbox_off
    assert "danger-full-access" in spec.sandbox_note and "unconfined" in spec.sandbox_note
    # The notebook's start decides the same way: off keeps Codex's own sandbox.
    off = would_start(spec, str(tmp_path / "p"), sandbox=SandboxChoice("off"))
    assert list(off.argv) == spec.argv
    # Claude's command is not changed by being confined (only its environment is).
    claude = resolve_agent("claude")
    assert claude.confined_argv(confined) == claude.argv


def test_agents_says_what_running_confined_means_for_codex(tmp_path: Path) -> None:
    bin_dir = fake_executables(tmp_path / "bin", "codex-acp")
    result = cli("agents", cwd=tmp_path, env={"PATH": str(bin_dir)})
    assert result.returncode == 0, result.stderr
    assert "    sandbox: Codex's own sandbox (bubblewrap on Linux) is left to the client's" in (
        result.stdout
    )


def test_a_confined_claude_finds_its_state_file_made_on_its_first_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # claude-agent-acp 0.23.1 in a fresh HOME under Landlock waited forever at session/new:
    # it could not create ~/.claude.json (a state file is writable only where it exists).
    from acp_notebook.protocol import sandbox
    from acp_notebook.protocol.sandbox import Mechanism

    monkeypatch.setenv("PATH", str(fake_executables(tmp_path / "bin", "npx")))
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    spec = resolve_agent("claude")
    monkeypatch.setattr(sandbox, "mechanism", lambda: Mechanism("none"))
    spec.confinement(None, [str(tmp_path / "p")])
    assert not (home / ".claude.json").exists()  # unconfined: nothing is made
    monkeypatch.setattr(sandbox, "mechanism", lambda: Mechanism("landlock", 7))
    spec.confinement("off", [str(tmp_path / "p")])
    assert not (home / ".claude.json").exists()
    made = spec.confinement(None, [str(tmp_path / "p")])
    assert (home / ".claude.json").read_text() == "{}"
    assert str(home / ".claude.json") in made.writable
    (home / ".claude.json").write_text('{"userID": "kept"}')
    spec.confinement(None, [str(tmp_path / "p")])
    assert (home / ".claude.json").read_text() == '{"userID": "kept"}'


def test_uvx_is_used_for_python_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = fake_executables(tmp_path / "bin", "uvx")
    monkeypatch.setenv("PATH", str(bin_dir))
    spec = resolve_agent("fast-agent")
    assert spec.method == "uvx"
    assert spec.argv[0] == str(bin_dir / "uvx")


def test_nothing_installed_names_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(fake_executables(tmp_path / "empty")))
    with pytest.raises(AgentNotFound) as caught:
        resolve_agent("claude")
    message = str(caught.value)
    assert "Claude Agent cannot be started here" in message
    assert "`claude-agent-acp` is not on PATH" in message
    assert "`npx` is not on PATH" in message
    assert "npm install -g @agentclientprotocol/claude-agent-acp" in message


def test_an_agent_the_project_cannot_install_says_where_it_comes_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`-a goose` said "Install it with install `goose` (see …)"."""
    monkeypatch.setenv("PATH", str(fake_executables(tmp_path / "empty")))
    with pytest.raises(AgentNotFound) as caught:
        resolve_agent("goose")
    assert str(caught.value) == (
        "goose cannot be started here: `goose` is not on PATH. Install goose as "
        "https://block.github.io/goose/ says, so that `goose` is on PATH."
    )


def test_a_command_line_is_not_a_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(fake_executables(tmp_path / "empty")))
    spec = resolve_agent("my-agent --flag 'two words'")
    assert (spec.method, spec.argv) == ("command", ["my-agent", "--flag", "two words"])
    assert resolve_agent(None).method == "builtin"
    with pytest.raises(AgentNotFound):
        resolve_agent("   ")


def test_run_with_a_preset_that_is_not_installed_fails_clearly(tmp_path: Path) -> None:
    empty = fake_executables(tmp_path / "empty")
    result = cli("run", "hi", "--agent", "codex", cwd=tmp_path, env={"PATH": str(empty)})
    line = one_error_line(result)
    assert "Codex cannot be started here" in line and "npm install -g" in line


# --- demo-agent ---------------------------------------------------------------------------------


def test_demo_agent_serves_acp_on_stdio(tmp_path: Path) -> None:
    process = subprocess.Popen(
        [*CLI, "demo-agent"],
        cwd=tmp_path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdin is not None and process.stdout is not None
        request = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": 1, "clientCapabilities": {}}}  # fmt: skip
        process.stdin.write(json.dumps(request).encode() + b"\n")
        process.stdin.flush()
        answer = json.loads(process.stdout.readline())
        process.stdin.close()
        assert process.wait(timeout=SAFETY) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert answer["id"] == 1
    assert answer["result"]["protocolVersion"] == 1
    assert answer["result"]["agentInfo"]["name"] == "acp-notebook-demo"
    assert schema_errors(answer, sender="agent", request_method="initialize") == []


def test_usage_errors_exit_with_argparse_code(tmp_path: Path) -> None:
    result = cli("run", cwd=tmp_path)
    assert result.returncode == 2
    result = cli("run", "x", "--permissions", "sometimes", cwd=tmp_path)
    assert result.returncode == 2 and "sometimes" in result.stderr


def test_an_env_without_equals_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("run", "x", "--env", "NOEQUALS", cwd=tmp_path)
    assert result.returncode == 2 and "NAME=VALUE, got 'NOEQUALS'" in result.stderr


@pytest.mark.parametrize(
    ("command", "option"), [("demo-agent", "--state-file"), ("replay-agent", "--speed")]
)
def test_the_agent_commands_parse_their_own_options(
    tmp_path: Path, command: str, option: str
) -> None:
    result = cli(command, "--help", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"usage: acp-notebook {command}" in result.stdout and option in result.stdout


def test_permissions_ask_on_a_tty_asks_and_uses_the_answer(tmp_path: Path) -> None:
    import pty
    import threading

    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*CLI, "run", "/run echo hi", "--permissions", "ask"],
        cwd=tmp_path,
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(terminal)
    asked = threading.Event()
    errors: list[bytes] = []

    def read_stderr() -> None:
        assert process.stderr is not None
        for line in iter(lambda: process.stderr.read1(4096), b""):  # type: ignore[union-attr]
            errors.append(line)
            if b"Choice: " in b"".join(errors):
                asked.set()

    reader = threading.Thread(target=read_stderr, daemon=True)
    reader.start()
    try:
        assert asked.wait(SAFETY), b"".join(errors)
        os.write(controller, b"1\n")  # [1] is the first option the agent offered
        out, _ = process.communicate(timeout=SAFETY)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    reader.join(SAFETY)
    shown = b"".join(errors).decode()
    assert "The agent asks for permission:" in shown and "[1] Allow once (allow_once)" in shown
    assert process.returncode == 0, shown
    text = out.decode()
    assert "Permission: Allow once (chosen by user)" in text
    assert "hi\n[exit code 0]" in text
