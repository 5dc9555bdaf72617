"""The agent subprocess: stderr draining, exit reporting, cleanup, environment, start errors.

Timeouts are safety nets (``anyio.fail_after``), except in the test whose requirement
is itself a deadline ("within a second"), which says so.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.protocol.errors import ConnectionClosed
from acp_notebook.protocol.jsonrpc import Peer
from acp_notebook.protocol.process import (
    SUPERVISED,
    AgentProcess,
    AgentStartError,
    open_agent_process,
)

pytestmark = pytest.mark.anyio

SAFETY = 20  # seconds; a safety net against hangs, never a performance bound
AGENTS = Path(__file__).resolve().parent.parent / "agents"
INITIALIZE = {"protocolVersion": 1, "clientCapabilities": {}}


@asynccontextmanager
async def running_agent(command: Any, **kwargs: Any) -> AsyncIterator[tuple[AgentProcess, Peer]]:
    """An agent subprocess with a running :class:`Peer` on its stdio."""
    async with open_agent_process(command, **kwargs) as agent:
        peer = Peer(agent.stdout, agent.stdin, name=agent.name, close_reason=agent.describe_exit)
        async with anyio.create_task_group() as tg:
            tg.start_soon(peer.run)
            try:
                yield agent, peer
            finally:
                tg.cancel_scope.cancel()


def is_alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie (Linux /proc)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return text[text.rfind(")") + 2] != "Z"


async def test_an_agent_writing_a_megabyte_to_stderr_before_answering_does_not_deadlock(agent_argv):
    megabyte = 1 << 20
    async with running_agent(agent_argv("scripted_agent.py", "--stderr-bytes", str(megabyte))) as (
        agent,
        peer,
    ):
        # Without a reader on the stderr pipe the agent blocks after ~64 KiB and never answers.
        with anyio.fail_after(SAFETY):
            result = await peer.request("initialize", INITIALIZE)
        assert result["protocolVersion"] == 1
        assert agent.stderr_tail(3) == ["x" * 99] * 3


async def test_an_agent_dying_mid_request_fails_it_at_once_with_exit_code_and_stderr(
    agent_argv,
):
    async with running_agent(agent_argv("scripted_agent.py")) as (agent, peer):
        with anyio.fail_after(SAFETY):
            await peer.request("initialize", INITIALIZE)  # the agent is up and serving
            with pytest.raises(ConnectionClosed) as caught:
                await peer.request("_test/die", {})
    # "At once": the request has no timeout of its own and the safety net would raise
    # TimeoutError, so a ConnectionClosed naming the exit proves the agent's exit itself
    # failed the pending request (no clock is read: load cannot flip this test).
    message = str(caught.value)
    assert "exited with code 3" in message
    assert "fatal: the model backend went away" in message
    assert "_test/die" in message
    assert agent.returncode == 3


@pytest.mark.skipif(
    not Path("/proc").is_dir(), reason="reads /proc to see which processes are left"
)
async def test_after_shutdown_no_process_of_the_agents_group_or_session_is_left():
    # A wrapper shell that stays alive (like npx) runs an agent that ignores stdin EOF;
    # the agent has two grandchildren ignoring SIGTERM, one of them in its own process group.
    command = [
        "sh",
        "-c",
        '"$0" "$1"; echo "wrapper: agent ended" >&2',
        sys.executable,
        str(AGENTS / "family_agent.py"),
    ]
    async with running_agent(command) as (agent, peer):
        with anyio.fail_after(SAFETY):
            result = await peer.request("initialize", INITIALIZE)
        pids = result["_meta"]["pids"]
        everyone = [pids["wrapper"], pids["agent"], *pids["grandchildren"]]
        # the command is the agent process, or (Linux) the only child of its supervisor
        wrapper_parent = (
            int(Path(f"/proc/{pids['wrapper']}/stat").read_text().rsplit(") ", 1)[1].split()[1])
            if SUPERVISED
            else None
        )
        assert agent.pid == (wrapper_parent if SUPERVISED else pids["wrapper"])
        # precondition: the whole family is alive and belongs to the agent's session
        assert all(is_alive(pid) for pid in everyone)
        assert set(everyone) <= set(agent.members())
        own_group = pids["grandchildren"][1]
        assert os.getpgid(own_group) != agent.pid
    left = [pid for pid in everyone if is_alive(pid)]
    assert left == []
    assert agent.members() == []


async def test_the_agent_inherits_the_full_environment_plus_overrides(agent_argv, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0000-not-a-real-key")
    monkeypatch.setenv("ACP_TEST_OVERRIDDEN", "from the caller")
    overrides = {"ACP_TEST_OVERRIDDEN": "from the override", "ACP_TEST_ADDED": "added"}
    async with running_agent(agent_argv("scripted_agent.py"), env=overrides) as (_agent, peer):
        with anyio.fail_after(SAFETY):
            seen = (await peer.request("_test/env", {}))["env"]
    assert seen["ANTHROPIC_API_KEY"] == "sk-ant-test-0000-not-a-real-key"
    assert seen["ACP_TEST_OVERRIDDEN"] == "from the override"
    assert seen["ACP_TEST_ADDED"] == "added"
    missing_or_changed = {
        k for k, v in os.environ.items() if k not in overrides and seen.get(k) != v
    }
    assert missing_or_changed == set()


async def test_an_eight_megabyte_line_passes_in_both_directions(agent_argv):
    big = "".join(chr(ord("a") + i % 26) for i in range(26)) * ((8 << 20) // 26 + 1)
    big = big[: 8 << 20] + "é✓"  # and a few multi-byte characters at the end
    async with running_agent(agent_argv("scripted_agent.py")) as (_agent, peer):
        with anyio.fail_after(60):
            result = await peer.request("_test/echo", {"text": big})
            after = await peer.request("_test/echo", {"text": "small"})
    assert result["params"]["text"] == big
    assert after["params"]["text"] == "small"


async def test_a_command_not_found_gives_agent_start_error_with_a_clear_sentence():
    with pytest.raises(AgentStartError) as caught:
        async with open_agent_process(["acp-no-such-agent-3f9c", "--acp"]):
            pytest.fail("the agent should not have started")
    message = str(caught.value)
    assert "`acp-no-such-agent-3f9c`" in message
    assert "not found" in message
    assert message.endswith(".")


async def test_a_file_that_is_not_executable_gives_agent_start_error(tmp_path):
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\nexit 0\n")
    script.chmod(stat.S_IRUSR | stat.S_IWUSR)
    if os.access(script, os.X_OK):  # e.g. running as root on some filesystems
        pytest.skip("the file is executable for this user anyway")
    with pytest.raises(AgentStartError, match="is not executable"):
        async with open_agent_process([str(script)]):
            pytest.fail("the agent should not have started")


async def test_an_agents_coloured_stderr_is_kept_as_plain_text() -> None:
    # fast-agent and opencode colour their start errors: the cell showed `\x1b[31m…` as text.
    script = (
        r'printf "\033[1;31mError:\033[0m no model \033]8;;https://x.test\033\\here\033]8;;\033\\ '
        r'\033[2K\033[3Adone\n" >&2'
    )
    async with open_agent_process(["sh", "-c", script]) as agent:
        with anyio.fail_after(SAFETY):
            await agent.process.wait()
            await agent._stderr_done.wait()
        assert agent.stderr_tail(1) == ["Error: no model here done"]
