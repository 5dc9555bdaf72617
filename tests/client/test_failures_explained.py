"""Failures that explain themselves: an agent's error `data` is shown, errors that mean
"log in" become :class:`AuthRequired` whatever their code, auth methods of any ``type``
are listed by id and can be chosen, and an agent that cannot start says why quickly."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client import ClientConnection, connect
from acp_notebook.client.auth import auth_method_info
from acp_notebook.client.errors import AuthRequired, HandshakeTimeout, looks_like_auth
from acp_notebook.protocol import models as m
from acp_notebook.protocol.errors import INTERNAL_ERROR, ConnectionClosed, RpcError
from acp_notebook.protocol.process import AgentStartError, startup_problem

from .helpers import SAFETY, fake_agent, wait_until

pytestmark = pytest.mark.anyio

#: What codex-acp 0.16.0 advertises at `initialize`.
CODEX_AUTH_METHODS: list[dict[str, Any]] = [
    {"id": "chatgpt", "name": "Login with ChatGPT", "description": "Use your ChatGPT login"},
    {
        "type": "env_var",
        "id": "openai-api-key",
        "name": "Use OPENAI_API_KEY",
        "description": "Requires setting the `OPENAI_API_KEY` environment variable.",
        "vars": [{"name": "OPENAI_API_KEY"}],
    },
    {
        "type": "env_var",
        "id": "codex-api-key",
        "name": "Use CODEX_API_KEY",
        "vars": ["CODEX_API_KEY"],
    },
]

#: How claude-agent-acp answers a prompt without a login.
NOT_LOGGED_IN = RpcError(
    INTERNAL_ERROR, "Internal error", {"details": "Invalid API key · Please run /login"}
)


def test_an_errors_data_is_part_of_its_message() -> None:
    assert str(NOT_LOGGED_IN) == (
        "Internal error (code -32603): Invalid API key · Please run /login"
    )
    nested = RpcError(-32603, "Internal error", {"message": "boom", "error": {"reason": "disk"}})
    assert str(nested) == "Internal error (code -32603): boom; disk"
    assert str(RpcError(-32603, "Internal error", "plain words")).endswith(": plain words")
    assert str(RpcError(-32602, "Invalid params")) == "Invalid params (code -32602)"


def test_errors_about_logging_in_look_like_auth_and_others_do_not() -> None:
    assert looks_like_auth(NOT_LOGGED_IN)
    assert looks_like_auth(RpcError(-32000, "Authentication required"))
    assert looks_like_auth(RpcError(-32603, "Internal error", {"details": "No credentials found"}))
    assert looks_like_auth(RpcError(-32603, "OPENAI_API_KEY is not set"))
    assert not looks_like_auth(RpcError(-32603, "Internal error", {"details": "disk full"}))
    assert not looks_like_auth(RpcError(-32602, "The author field is invalid"))


def test_auth_methods_of_unknown_type_keep_id_name_description_and_vars() -> None:
    infos = [auth_method_info(m.parse(m.AuthMethod, raw)) for raw in CODEX_AUTH_METHODS]
    assert [(i.id, i.type) for i in infos] == [
        ("chatgpt", "agent"),
        ("openai-api-key", "env_var"),
        ("codex-api-key", "env_var"),
    ]
    assert infos[1].name == "Use OPENAI_API_KEY"
    assert infos[1].description == "Requires setting the `OPENAI_API_KEY` environment variable."
    assert infos[1].vars == ("OPENAI_API_KEY",)
    assert infos[2].vars == ("CODEX_API_KEY",)


async def test_authenticate_accepts_an_env_var_method_the_agent_offered() -> None:
    async with fake_agent(initialize={"authMethods": CODEX_AUTH_METHODS}) as (conn, agent, _):
        seen: list[Any] = []

        async def authenticate(params: Any) -> dict[str, Any]:
            seen.append(params)
            return {}

        agent.handle_request("authenticate", authenticate)
        with anyio.fail_after(SAFETY):
            await conn.authenticate("openai-api-key")
        assert seen == [{"methodId": "openai-api-key"}]
        with pytest.raises(RpcError, match="offered: `chatgpt`, `openai-api-key`, `codex-api-key`"):
            await conn.authenticate("nope")


async def test_a_prompt_refused_for_want_of_a_login_ends_with_auth_required() -> None:
    async with fake_agent(initialize={"authMethods": CODEX_AUTH_METHODS}) as (conn, agent, _):

        async def refuse(params: Any) -> dict[str, Any]:
            raise NOT_LOGGED_IN

        agent.handle_request("session/prompt", refuse)
        with anyio.fail_after(SAFETY):
            session = await conn.new_session(os.getcwd())
            turn = await session.prompt("hi")
    assert isinstance(turn.exception, AuthRequired)
    assert turn.error == (
        "The agent needs authentication: Internal error: Invalid API key · Please run /login "
        "Authentication methods it offers: Login with ChatGPT (`chatgpt`), "
        "Use OPENAI_API_KEY (`openai-api-key`), Use CODEX_API_KEY (`codex-api-key`)."
    )


async def test_session_new_failing_with_login_words_is_auth_required() -> None:
    async with fake_agent(initialize={"authMethods": CODEX_AUTH_METHODS}) as (conn, agent, _):

        async def refuse(params: Any) -> dict[str, Any]:
            raise RpcError(-32603, "Internal error", {"details": "Not logged in"})

        agent.handle_request("session/new", refuse)
        with pytest.raises(AuthRequired) as caught, anyio.fail_after(SAFETY):
            await conn.new_session(os.getcwd())
    assert caught.value.said == "Internal error: Not logged in"
    assert [method.id for method in caught.value.auth_methods][1] == "openai-api-key"


def test_an_unreachable_registry_is_named_with_the_install_command() -> None:
    argv = ["/usr/bin/npx", "--yes", "@agentclientprotocol/claude-agent-acp"]
    line = "npm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN"
    problem = startup_problem(argv, line)
    assert problem is not None
    assert problem.startswith("npm cannot reach the package registry to download ")
    assert "`npm install -g @agentclientprotocol/claude-agent-acp` while online" in problem
    assert startup_problem(["uvx", "fast-agent-acp", "-x"], "error: dns error: failed") is not None
    # An agent's own stderr is never read this way, nor a package runner's other lines.
    assert startup_problem(["claude-agent-acp"], line) is None
    assert startup_problem(argv, "npm http fetch GET 200 https://registry.npmjs.org/x 80ms") is None


def _offline_npx(bin_dir: Path) -> None:
    """An ``npx`` that fails like npm does offline, then keeps retrying (as npm did, 71 s)."""
    script = bin_dir / "npx"
    script.write_text(
        f"#!{sys.executable}\n"
        "import sys, time\n"
        "sys.stderr.write('npm http fetch GET https://registry.npmjs.org/some-agent attempt 1 failed with EAI_AGAIN\\n')\n"
        "sys.stderr.flush()\n"
        "time.sleep(120)\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


async def test_an_offline_npx_fails_at_once_saying_what_to_install(tmp_path: Path) -> None:
    _offline_npx(tmp_path)
    # SAFETY (30 s) is shorter than the script's 120 s: it failed on the line, not the exit.
    with pytest.raises((AgentStartError, ConnectionClosed)) as caught, anyio.fail_after(SAFETY):
        async with connect([str(tmp_path / "npx"), "--yes", "some-agent"]):
            pass
    assert "npm cannot reach the package registry to download `some-agent`" in str(caught.value)
    assert "install it with `npm install -g some-agent` while online" in str(caught.value)


async def test_an_agent_that_never_answers_initialize_times_out_with_its_stderr(
    tmp_path: Path,
) -> None:
    silent = [
        sys.executable,
        "-c",
        "import sys, time; print('loading model', file=sys.stderr, flush=True); time.sleep(60)",
    ]
    with pytest.raises(HandshakeTimeout) as caught, anyio.fail_after(SAFETY):
        async with ClientConnection.spawn(silent, name="silent") as conn:
            await wait_until(lambda: bool(conn.process and conn.process.stderr_tail()))
            await conn.initialize(timeout=0.5)
    assert str(caught.value) == (
        "The agent `silent` did not answer `initialize` within 0.5 s (its last stderr lines: "
        "loading model); check that it is an ACP agent, or allow it more time with a longer "
        "timeout."
    )
