"""The command line as a new user meets it (issue 13): the reply streams on a terminal
without HTML, a pipe still gets the Markdown transcript, `--auth` takes any auth method
the agent offers (codex's ``env_var`` ones too), a refused login says how to log in,
`doctor` gives a hint for every failure, and `agents | head` ends quietly."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from acp_notebook.cli.terminal_render import StartProgress

from .test_cli import CLI, DEMO, SAFETY, cli, one_error_line, scripted

#: codex-acp 0.16.0's auth methods, as it advertises them at `initialize`.
CODEX_AUTH = json.dumps(
    [
        {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login"},
        {
            "type": "env_var",
            "id": "openai-api-key",
            "name": "Use OPENAI_API_KEY",
            "vars": [{"name": "OPENAI_API_KEY"}],
        },
    ]
)
NO_KEY = {"OPENAI_API_KEY": ""}


def read_until(fd: int, marker: bytes, seen: bytearray) -> None:
    """Read ``fd`` into ``seen`` until ``marker`` shows (a safety net bounds the wait)."""
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], SAFETY)
        assert ready, f"no {marker!r} within {SAFETY} s; got {bytes(seen)!r}"
        chunk = os.read(fd, 4096)
        assert chunk, f"output ended before {marker!r}: {bytes(seen)!r}"
        seen += chunk


# --- streaming on a terminal ----------------------------------------------------------------------


@contextlib.contextmanager
def on_a_tty(
    args: list[str], cwd: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``acp-notebook ARGS`` with stdout a terminal: the process and the terminal's reading
    end; on exit the process is ended (if still running) and the terminal closed."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [*CLI, *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=terminal,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
    )
    os.close(terminal)
    try:
        yield process, controller
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)


def test_on_a_terminal_the_reply_streams_before_the_turn_ends(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    seen = bytearray()
    with on_a_tty(["run", "--agent", scripted(), f"gate {gate}"], tmp_path) as (process, tty):
        read_until(tty, b"first", seen)
        # The turn is still running (the agent waits for the gate): it was streamed.
        assert process.poll() is None and b"second" not in seen
        gate.touch()
        read_until(tty, b"Stop reason: end_turn", seen)
        process.wait(SAFETY)
    assert process.returncode == 0
    text = seen.decode()
    assert "first second" in text
    assert "stop reason: end_turn" not in text  # the pipe's last line is for scripts


def test_on_a_terminal_tool_calls_are_lines_and_nothing_is_html(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("one\ntwo\n")
    result = cli(
        "run", "/run echo hi", "--permissions", "allow", "--format", "terminal", cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "<details" not in out and "<summary" not in out and "**" not in out
    lines = out.splitlines()
    started = next(i for i, line in enumerate(lines) if line.startswith("▶ "))
    finished = next(i for i, line in enumerate(lines) if line.startswith("✅ "))
    assert started < finished
    assert "$ sh -c 'echo hi'\n" in out and "    hi\n    [exit code 0]" in out
    assert "```" not in out.split("Stop reason")[0].split("`echo hi` exited")[0]
    assert "\nStop reason: end_turn — the agent finished its turn.\n" in out


def test_styles_are_ansi_on_a_terminal_and_absent_with_no_color(tmp_path: Path) -> None:
    def styled(no_color: str) -> str:
        seen = bytearray()
        args = ["run", "--agent", DEMO, "/plan"]
        with on_a_tty(args, tmp_path, {"NO_COLOR": no_color}) as (process, tty):
            read_until(tty, b"Stop reason", seen)
            process.wait(SAFETY)
        return seen.decode()

    assert "\x1b[" in styled("")
    assert "\x1b[" not in styled("1")


def test_a_pipe_still_gets_the_markdown_transcript_and_the_stop_line(tmp_path: Path) -> None:
    piped = cli("run", "/run echo hi", "--permissions", "allow", cwd=tmp_path)
    forced = cli(
        "run", "/run echo hi", "--permissions", "allow", "--format", "markdown", cwd=tmp_path
    )
    assert piped.returncode == forced.returncode == 0
    assert piped.stdout == forced.stdout
    assert "<details" in piped.stdout and piped.stdout.endswith("\nstop reason: end_turn\n")


# --- logging in -----------------------------------------------------------------------------------


def test_auth_takes_an_env_var_method_once_its_variable_is_set(tmp_path: Path) -> None:
    agent = scripted("--auth-methods", CODEX_AUTH, "--login-first")
    missing = cli(
        "run", "authed", "--agent", agent, "--auth", "openai-api-key", cwd=tmp_path, env=NO_KEY
    )
    line = one_error_line(missing)
    assert "`openai-api-key` reads OPENAI_API_KEY" in line and "--env OPENAI_API_KEY=" in line
    result = cli(
        "run",
        "authed",
        "--agent",
        agent,
        "--auth",
        "openai-api-key",
        "--env",
        "OPENAI_API_KEY=sk-test",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "authenticated with openai-api-key" in result.stdout


def test_a_prompt_refused_for_a_login_says_how_to_log_in(tmp_path: Path) -> None:
    agent = scripted("--auth-methods", CODEX_AUTH, "--login-first")
    result = cli("run", "hello", "--agent", agent, cwd=tmp_path, env=NO_KEY)
    assert result.returncode != 0
    error = result.stderr.strip().splitlines()[-1]
    # The agent's reason (in the error's data) is shown, and each way in.
    assert "Invalid API key · Please run /login" in error
    assert "authenticate with method `chatgpt`" in error
    assert "set OPENAI_API_KEY (export it, or `--env OPENAI_API_KEY=…`)" in error
    assert "--auth openai-api-key" in error


def test_doctor_lists_auth_methods_of_any_type_by_id(tmp_path: Path) -> None:
    agent = scripted("--auth-methods", CODEX_AUTH)
    result = cli("doctor", "--agent", agent, cwd=tmp_path)
    assert (
        "Auth methods: chatgpt (Login with ChatGPT; agent), openai-api-key (Use OPENAI_API_KEY; env_var)"
        in result.stdout
    )


def test_doctor_gives_a_hint_when_the_agent_says_nothing(tmp_path: Path) -> None:
    silent = f"{sys.executable} -c 'import time; time.sleep(60)'"
    result = cli("doctor", "--agent", silent, "--timeout", "0.5", cwd=tmp_path)
    assert result.returncode != 0
    assert "initialize: no answer within 0.5 s" in result.stdout
    assert "Hint: it wrote nothing on stderr; run `" in result.stdout


def test_a_preset_that_is_not_installed_gets_an_install_hint_from_doctor(tmp_path: Path) -> None:
    result = cli("doctor", "--agent", "claude", cwd=tmp_path, env={"PATH": str(tmp_path)})
    assert result.returncode != 0
    assert "Hint: `acp-notebook agents` lists every preset" in result.stdout


# --- pipes ----------------------------------------------------------------------------------------


def test_agents_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    read, write = os.pipe()
    os.close(read)  # `| head` that already went away
    process = subprocess.run(
        [*CLI, "agents"], cwd=tmp_path, stdout=write, stderr=subprocess.PIPE, timeout=SAFETY
    )
    os.close(write)
    assert process.returncode == 0
    assert process.stderr == b""


# --- what the transcript teaches ------------------------------------------------------------------


def test_a_rejected_call_reads_as_rejected_and_by_whom_not_as_failed(tmp_path: Path) -> None:
    by_policy = cli("run", "/write x.txt hi", "--permissions", "deny", cwd=tmp_path)
    by_rule = cli(
        "run",
        "/write x.txt hi",
        "--permissions",
        "allow",
        "--rule",
        "deny edit *.txt",
        cwd=tmp_path,
    )
    assert "✏️ **Write x.txt** · edit · 🚫 rejected by policy deny" in by_policy.stdout
    assert "· 🚫 rejected by rule `deny edit *.txt`" in by_rule.stdout
    assert "❌" not in by_policy.stdout + by_rule.stdout
    # A tool that really failed still reads as failed.
    failed = cli("run", "/fail", cwd=tmp_path)
    assert "· ❌ failed" in failed.stdout


def test_the_demo_shows_no_pretend_cost(tmp_path: Path) -> None:
    result = cli("run", "hello", cwd=tmp_path)
    assert (
        "Context: " in result.stdout and "Cost" not in result.stdout and "USD" not in result.stdout
    )


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_start_up_lines_are_one_status_line_cleared_once_the_agent_answers() -> None:
    tty = _Tty()
    progress = StartProgress(tty)
    progress("npm http fetch GET 200 https://registry.npmjs.org/x")
    progress("")
    progress.done()
    progress("a line after the start is the agent's own: not shown")
    assert tty.getvalue() == (
        "\r\x1b[2Kstarting the agent… npm http fetch GET 200 https://registry.npmjs.org/x\r\x1b[2K"
    )
    piped = io.StringIO()
    StartProgress(piped)("npm http fetch GET 200 …")
    assert piped.getvalue() == ""


def test_on_a_terminal_notices_are_lines_and_a_compaction_is_shown_settled(tmp_path: Path) -> None:
    notice = cli("run", "/notice warning", "--format", "terminal", cwd=tmp_path)
    assert notice.returncode == 0, notice.stderr
    assert "⚠️ Warning: Context is filling up — " in notice.stdout
    compact = cli("run", "/compact", "--format", "terminal", cwd=tmp_path)
    assert compact.returncode == 0, compact.stderr
    assert "Compacting the context" not in compact.stdout  # printed once settled
    assert "🗜️ Context compacted:\n" in compact.stdout
    assert "Older messages are replaced by this summary" in compact.stdout
