"""What a preset's agent is known to answer when something is missing, said with the step
that fixes it: by ``doctor`` before the agent starts (no key and no saved login), and after
the failure it produces; the agents here are scripted ones standing in for the preset."""

from __future__ import annotations

import json
import os
import shlex
import stat
import sys
from pathlib import Path

import pytest

from acp_notebook.agents.evidence import before_start, explain, with_finding

from .test_cli import cli

SESSION_AGENT = Path(__file__).resolve().parents[1] / "agents" / "session_agent.py"
KEYS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "IS_SANDBOX")


def as_claude(directory: Path, *args: str) -> dict[str, str]:
    """The environment of a run where the scripted agent is `claude-agent-acp`, in a home
    holding no login and with no key set."""
    directory.mkdir()
    script = directory / "claude-agent-acp"
    script.write_text(
        "#!/bin/sh\nexec " + shlex.join([sys.executable, str(SESSION_AGENT), *args]) + ' "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    env = {key: "" for key in KEYS}
    return {**env, "PATH": f"{directory}{os.pathsep}{os.environ['PATH']}", "HOME": str(directory)}


def test_doctor_says_claude_needs_a_login_before_it_starts_it(tmp_path: Path) -> None:
    """`doctor --agent claude` without a key offered two npm fetch lines as its hint."""
    result = cli("doctor", "--agent", "claude", cwd=tmp_path, env=as_claude(tmp_path / "bin"))
    lines = result.stdout.splitlines()
    hint = (
        "Hint: Claude Agent is not logged in: log in once with Claude Code in a terminal, or "
        "set ANTHROPIC_API_KEY where the agent starts. Fix: `claude /login`."
    )
    assert hint in lines, result.stdout
    started = next(i for i, line in enumerate(lines) if line.startswith("Started: yes"))
    assert lines.index(hint) < started, "said before the agent starts"


def test_doctor_explains_a_session_refused_as_root_outside_a_sandbox(tmp_path: Path) -> None:
    env = as_claude(tmp_path / "bin", "--fail-new", "Query closed before response received")
    result = cli("doctor", "--agent", "claude", cwd=tmp_path, env=env)
    assert "session/new: failed: Query closed before response received" in result.stdout
    assert (
        "Hint: Claude Agent ends its session at once when it runs as root outside a sandbox; "
        "tell it the machine is one. Fix: `export IS_SANDBOX=1`."
    ) in result.stdout
    assert result.returncode != 0


def test_what_is_missing_before_start_root_outside_a_sandbox_and_saved_logins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in (*KEYS, "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)
    keyed = {"ANTHROPIC_API_KEY": "sk-test"}
    as_root = before_start("claude", keyed, confined=False, home=tmp_path, is_root=True)
    assert [f.step("notebook") for f in as_root] == ["`%env IS_SANDBOX=1` then `%acp --restart`"]
    assert before_start("claude", keyed, confined=True, home=tmp_path, is_root=True) == []
    assert before_start("claude", {}, confined=True, home=tmp_path, is_root=False) != []
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / ".credentials.json").write_text("{}")
    assert before_start("claude", {}, confined=True, home=tmp_path, is_root=False) == []
    (gemini,) = before_start("gemini", {}, confined=True, home=tmp_path, is_root=False)
    assert gemini.step("terminal") == "`export GEMINI_API_KEY=…`"
    assert before_start("demo", {}, confined=False, home=tmp_path, is_root=True) == []


def test_each_known_failure_is_found_only_for_its_own_agent() -> None:
    said = "Internal error (code -32603): Claude Code process exited with code 1"
    finding = explain("claude", said)
    assert finding is not None and finding.step("terminal") == "`claude /login`"
    assert explain("codex", said) is None and explain(None, said) is None
    stuck = explain("opencode", "Stop reason: end_turn — the turn ended after the 5 s timeout (-t 5).")
    assert stuck is not None and stuck.command == "opencode auth login"


def test_a_failed_start_is_explained_by_a_reason_that_came_before_the_agents_help_text() -> None:
    """fast-agent without a model exited with its reason seven lines from the end of its
    stderr, and the cell showed the last five without a hint."""
    stderr = [
        "Model Configuration Error:",
        "No model configured",
        "",
        "Details:",
        "Set an agent model, --model, FAST_AGENT_MODEL, or default_model in ",
        "fast-agent.yaml.",
        "",
        "Common models: gpt-5.5, kimi, sonnet, haiku. Set reasoning effort on supported ",
        "models with gpt-5.4-mini?reasoning=high",
        "",
        "Visit https://fast-agent.ai/ for more information",
    ]
    said = with_finding("fast-agent", "The agent `fast-agent` exited with code 1.", stderr)
    assert said.startswith("The agent `fast-agent` exited with code 1. fast-agent needs a model")
    assert said.endswith("Fix: `%env FAST_AGENT_MODEL=…` then `%acp --restart`.")
    assert with_finding("codex", "exited", stderr) == "exited"


def test_the_report_card_ends_with_what_fixes_the_failures_it_saw(tmp_path: Path) -> None:
    env = as_claude(tmp_path / "bin", "--fail-new", "Query closed before response received")
    result = cli("doctor", "--report", "--json", "--agent", "claude", cwd=tmp_path, env=env)
    (card,) = json.loads(result.stdout)
    assert card["hints"] == [
        "Claude Agent is not logged in: log in once with Claude Code in a terminal, or set "
        "ANTHROPIC_API_KEY where the agent starts. Fix: `claude /login`.",
        "Claude Agent ends its session at once when it runs as root outside a sandbox; tell it "
        "the machine is one. Fix: `export IS_SANDBOX=1`.",
    ]
