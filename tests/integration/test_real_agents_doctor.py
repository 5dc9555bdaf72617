"""`acp-notebook doctor` against real agents from two vendors (Anthropic's Claude Agent
adapter and Alibaba's Qwen Code), installed from npm. Their prompts need accounts;
`initialize` and `session/new` do not, so the report can be checked offline.

Skipped, with the reason, where npm is missing or the packages cannot be installed; under
``CI=true`` that fails instead, so CI cannot go green without this layer.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from .npm import npm_agents

pytestmark = pytest.mark.slow

# Versions seen working with Node 20 (newer qwen-code needs Node >= 22).
PACKAGES = ["@zed-industries/claude-agent-acp@0.23.1", "@qwen-code/qwen-code@0.15.10"]


@pytest.fixture(scope="module")
def agents_bin() -> Path:
    return npm_agents("npm-agents", PACKAGES, ["claude-agent-acp", "qwen"])


def doctor(agent: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1", "CI": "1"}
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY"):
        env.pop(key, None)  # the report must not depend on this machine's accounts
    return subprocess.run(
        [sys.executable, "-m", "acp_notebook", "doctor", "--agent", agent, "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=home,
        env=env,
    )


def test_doctor_reports_claude_agent(agents_bin: Path, tmp_path: Path) -> None:
    result = doctor(str(agents_bin / "claude-agent-acp"), tmp_path)
    out = result.stdout
    assert "Started: yes" in out, out + result.stderr
    assert "Protocol version: 1" in out
    assert "Agent info: @zed-industries/claude-agent-acp 0.23.1 (Claude Agent)" in out
    assert "Capabilities: loadSession; prompt: image, embeddedContext; MCP: stdio, http, sse" in out
    assert "sessions: list, resume, close" in out
    # It advertises no auth methods at initialize (it asks for a login only at prompt time).
    assert "Auth methods: none" in out


def test_doctor_reports_qwen_code_and_its_login(agents_bin: Path, tmp_path: Path) -> None:
    result = doctor(f"{agents_bin / 'qwen'} --acp", tmp_path)
    out = result.stdout
    assert "Protocol version: 1" in out, out + result.stderr
    assert "Agent info: qwen-code 0.15.10 (Qwen Code)" in out
    assert "prompt: image, audio, embeddedContext" in out
    assert "Auth methods: openai (Use OpenAI API key; agent), qwen-oauth (Qwen OAuth; agent)" in out
    # session/new needs a login: the agent's own message and a hint naming a method.
    assert "session/new: needs authentication: Authentication required" in out
    assert "--auth openai" in out
    assert result.returncode != 0


def test_doctor_says_the_real_claude_needs_a_login_before_starting_it(
    agents_bin: Path, tmp_path: Path
) -> None:
    """`doctor --agent claude` without a key offered two npm fetch lines as its hint; the
    login sentence now comes first, before the agent is even started."""
    env = {**os.environ, "HOME": str(tmp_path), "NO_COLOR": "1", "CI": "1"}
    for key in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN"):
        env.pop(key, None)
    env["PATH"] = f"{agents_bin}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        [sys.executable, "-m", "acp_notebook", "doctor", "--agent", "claude", "--timeout", "60"],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=env,
    )
    lines = result.stdout.splitlines()
    hint = next((i for i, line in enumerate(lines) if "Fix: `claude /login`." in line), None)
    started = next(i for i, line in enumerate(lines) if line.startswith("Started:"))
    assert hint is not None and hint < started, result.stdout + result.stderr
    assert "Claude Agent is not logged in" in lines[hint]
