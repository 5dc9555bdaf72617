"""Real-agent failures explain themselves in a notebook (issue 13, problem 2): a prompt the
agent refuses for want of a login (claude-agent-acp's -32603 with the reason in ``data``)
shows the login panel with every method it offers — a button for a method of a type the
client does not know, a password field for an ``env_var`` one — and the turn goes on once
logged in; ``--status`` tells a live agent whose last turn failed, and one that exited."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from .conftest import Kernel

pytestmark = pytest.mark.kernel

SESSION_AGENT = Path(__file__).resolve().parents[1] / "agents" / "session_agent.py"
METHODS = [
    {"type": "device_code", "id": "device", "name": "Device login"},
    {
        "type": "env_var",
        "id": "openai-api-key",
        "name": "Use OPENAI_API_KEY",
        "vars": [{"name": "OPENAI_API_KEY"}],
    },
]


def agent(*args: str) -> str:
    """The session agent's command line as one ``-a`` argument of ``%acp`` (double-quoted)."""
    command = shlex.join([sys.executable, str(SESSION_AGENT), *args])
    return '"' + command.replace("\\", "\\\\").replace('"', '\\"') + '"'


def status(kernel: Kernel, spec: str) -> str:
    return kernel.text(f"%acp -a {spec} --status")


def test_a_prompt_refused_for_a_login_offers_the_login_then_goes_on(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    spec = agent("--auth-methods", json.dumps(METHODS), "--login-first")
    execution = kernel.execute(f"%acp -a {spec} authed", until=None)
    # A method of a type this client does not know is a button, chosen by its id.
    button = execution.wait_button("Log in: Device login")
    execution.wait_button("Save and log in: Use OPENAI_API_KEY")
    kernel.send_click(button.comm_id)
    execution.wait("final")
    assert "authenticated with device" in execution.markdown, execution.describe()
    methods = [msg.get("method") for d, msg in kernel.agent_log() if d == "send"]
    assert methods.count("session/prompt") == 2
    assert methods.index("authenticate") < len(methods) - 1 - methods[::-1].index("session/prompt")


def test_headless_the_refusal_shows_the_agents_reason_and_the_ways_in(
    fresh_kernel: Kernel,
) -> None:
    kernel = fresh_kernel
    spec = agent("--auth-methods", json.dumps(METHODS), "--login-first")
    refused = kernel.execute(f"%acp -a {spec} hello", allow_stdin=False, until="final")
    assert "Invalid API key · Please run /login" in refused.markdown
    assert "Device login (`device`)" in refused.markdown
    # The agent is alive, but its last turn failed: --status says both.
    said = status(kernel, spec)
    assert ": running (" in said and "its last turn failed: The agent needs authentication" in said


def test_status_tells_an_agent_that_exited_from_one_that_failed_to_start(
    fresh_kernel: Kernel,
) -> None:
    kernel = fresh_kernel
    spec = agent()
    crashed = kernel.execute(f"%acp -a {spec} crash", allow_stdin=False, until="final")
    assert "exited with code 3" in crashed.markdown, crashed.describe()
    said = status(kernel, spec)
    assert ": exited — " in said and "exited with code 3" in said
    assert "fatal: the model backend went away" in said
    missing = "no-such-agent-anywhere"
    kernel.execute(f"%acp -a {missing} hello", allow_stdin=False, until="final")
    assert f"{missing}: failed to start — " in status(kernel, missing)
