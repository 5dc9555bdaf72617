"""A turn of a preset's agent that fails the way that agent is known to fail says the step
that fixes it, in the cell: a scripted agent stands in for `claude-agent-acp`."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

from acp_notebook.notebook.runtime.agents import NotebookAgents
from acp_notebook.notebook.turn.handle import TurnSettings

from .conftest import SAFETY

SESSION_AGENT = Path(__file__).resolve().parents[1] / "agents" / "session_agent.py"


def test_claude_refusing_a_prompt_for_a_login_says_how_to_log_in(
    agents: NotebookAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`%acp -a claude say hello` without a key read only "Internal error (code -32603):
    Claude Code process exited with code 1"."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "claude-agent-acp"
    script.write_text(
        "#!/bin/sh\nexec " + shlex.join([sys.executable, str(SESSION_AGENT), "--login-first"]) + "\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    handle = agents.start_turn(TurnSettings(prompt="say hello", agent="claude"))
    handle.wait(SAFETY)
    assert handle.turn is not None and handle.turn.error is not None
    assert handle.turn.error.endswith(
        "Claude Agent is not logged in: log in once with Claude Code in a terminal, or set "
        "ANTHROPIC_API_KEY where the agent starts. Fix: `claude /login`."
    )
    assert "Fix: `claude /login`." in handle.bundle()["text/plain"]


def test_an_opencode_turn_the_limit_ended_says_it_may_lack_a_provider(
    agents: NotebookAgents, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """opencode with no provider never answered, and the `-t` that ended it said nothing
    of why."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "opencode"
    script.write_text("#!/bin/sh\nexec " + shlex.join([sys.executable, str(SESSION_AGENT)]) + "\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")

    handle = agents.start_turn(TurnSettings(prompt="hang", agent="opencode", timeout=0.5))
    handle.wait(SAFETY)
    plain = handle.bundle()["text/plain"]
    assert "did not finish the turn within 0.5 s" in plain
    assert "OpenCode has no model provider it can reach" in plain
    assert "Fix: `opencode auth login`." in plain
