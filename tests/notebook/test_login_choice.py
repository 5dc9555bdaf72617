"""Which auth method ``%acp --login`` uses when none is named, and what a refused prompt
tells a headless notebook to do, with a scripted agent offering codex-acp's methods (an
agent-handled browser login first, then two that read a key)."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from acp_notebook.client.auth import auth_method_info
from acp_notebook.client.errors import AuthRequired
from acp_notebook.notebook.controls import REGISTRY, ControlFailed, run
from acp_notebook.notebook.runtime.agents import NotebookAgents
from acp_notebook.notebook.turn.login import login_hint
from acp_notebook.protocol import models as m

from .conftest import context

SESSION_AGENT = Path(__file__).resolve().parents[1] / "agents" / "session_agent.py"
CODEX_METHODS = [
    {"id": "chatgpt", "name": "Login with ChatGPT"},
    {"type": "env_var", "id": "codex-api-key", "name": "CODEX_API_KEY",
     "vars": [{"name": "CODEX_API_KEY"}]},
    {"type": "env_var", "id": "openai-api-key", "name": "OPENAI_API_KEY",
     "vars": [{"name": "OPENAI_API_KEY"}]},
]  # fmt: skip
CODEX = shlex.join(
    [sys.executable, str(SESSION_AGENT), "--auth-methods", json.dumps(CODEX_METHODS)]
)


@pytest.fixture(autouse=True)
def no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CODEX_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def test_login_without_a_method_uses_the_key_method_whose_key_is_set(
    agents: NotebookAgents, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`%acp -a codex --login` with OPENAI_API_KEY set picked the browser login `chatgpt`
    (the only agent-handled method) and blocked the cell for 120 s."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    said = run(REGISTRY["login"], context(agents, agent=CODEX, interactive=True))
    assert said.endswith("with openai-api-key.")


def test_headless_login_without_a_key_lists_the_methods_and_starts_none(
    agents: NotebookAgents,
) -> None:
    with pytest.raises(ControlFailed) as failed:
        run(REGISTRY["login"], context(agents, agent=CODEX, interactive=False))
    assert str(failed.value) == (
        "Name the auth method: `%acp --login METHOD` (the agent offers: `codex-api-key` (set "
        "`CODEX_API_KEY` first); `openai-api-key` (set `OPENAI_API_KEY` first); `chatgpt` "
        "(the agent logs you in, maybe in a browser))."
    )
    sent = [message.message for message in agents.message_table() if message.direction == "send"]
    assert "initialize" in [raw.get("method") for raw in sent if raw]
    assert "authenticate" not in [raw.get("method") for raw in sent if raw]


def test_where_someone_can_click_the_only_agent_login_is_still_chosen(
    agents: NotebookAgents,
) -> None:
    said = run(REGISTRY["login"], context(agents, agent=CODEX, interactive=True))
    assert said.endswith("with chatgpt.")


def test_the_no_key_hint_names_a_key_method_not_the_browser_login() -> None:
    methods = [auth_method_info(m.parse(m.AuthMethod, raw)) for raw in CODEX_METHODS]
    refused = AuthRequired(-32000, "Authentication required", None, methods)

    hint = login_hint(refused, {})
    assert "chatgpt" not in hint
    assert hint == (
        " Set `CODEX_API_KEY` in the kernel's environment, then `%acp --login codex-api-key` "
        "and run the cell again."
    )
    ready = login_hint(refused, {"OPENAI_API_KEY": "sk-test"})
    assert ready == " Log in with `%acp --login openai-api-key` (its key is set), then run the cell again."

