"""A turn's timeout bounds the handshake too (issue 11): an agent that never answers
`initialize`, `authenticate` or `session/new` ends the CLI run and the `%acp` cell with one
sentence naming the request and what to do, and leaves no process behind. Each request gets
at least ``HANDSHAKE_FLOOR`` seconds (starting an agent takes seconds); here the floor is
lowered to one second through its environment variable, which the CLI's process inherits
(the hostile agent is standard library only: it answers what it answers at once)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_notebook.client.handshake import HANDSHAKE_FLOOR_ENV, handshake_floor
from acp_notebook.notebook.manager import NotebookAgents
from acp_notebook.notebook.turns import TurnSettings

from ..cli.test_cli import cli, one_error_line
from ..notebook.conftest import SAFETY
from .test_cli_payloads import hostile
from .test_stop import alive

STEPS = [
    ("--hang-initialize", "initialize"),
    ("--hang-authenticate", "authenticate"),
    ("--hang-new", "session/new"),
]
#: What each sentence tells the user to do.
WHAT_TO_DO = "check that it is an ACP agent, or allow it more time with a longer timeout."


@pytest.fixture(autouse=True)
def one_second_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(HANDSHAKE_FLOOR_ENV, "1")


def agent_pid(pid_file: Path) -> int:
    deadline = time.monotonic() + SAFETY
    while not pid_file.exists():
        assert time.monotonic() < deadline, "the agent never started"
        time.sleep(0.05)
    return int(pid_file.read_text())


def gone(pid: int) -> None:
    deadline = time.monotonic() + SAFETY
    while alive(pid):
        assert time.monotonic() < deadline, "the agent outlived the timeout"
        time.sleep(0.05)


@pytest.mark.parametrize(("option", "method"), STEPS)
def test_the_command_line_gives_up_on_a_handshake_request_after_the_timeout(
    tmp_path: Path, option: str, method: str
) -> None:
    pid_file = tmp_path / "agent.pid"
    agent = hostile(option, f"--pid-file={pid_file}")
    result = cli("run", "hi", "--agent", agent, "--auth", "login", "--timeout", "1", cwd=tmp_path)
    line = one_error_line(result)
    assert f"did not answer `{method}` within {handshake_floor():g} s; {WHAT_TO_DO}" in line
    gone(agent_pid(pid_file))


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[NotebookAgents]:
    notebook = NotebookAgents(cwd=str(tmp_path))
    yield notebook
    notebook.shutdown()


@pytest.mark.parametrize(("option", "method"), STEPS)
def test_a_cell_with_a_timeout_gives_up_on_a_handshake_request_and_stops_the_agent(
    agents: NotebookAgents, tmp_path: Path, option: str, method: str
) -> None:
    pid_file = tmp_path / "agent.pid"
    agent = hostile(option, f"--pid-file={pid_file}")
    agents.runtime(agent).auth_method = "login"  # as after `%acp --login login`
    settings = TurnSettings(prompt="hi", agent=agent, timeout=1, headless=True)
    handle = agents.start_turn(settings).wait(SAFETY)
    assert handle.error is not None
    assert handle.error.endswith(
        f"did not answer `{method}` within {handshake_floor():g} s; {WHAT_TO_DO}"
    )
    assert handle.error.count(";") == 1  # one sentence
    gone(agent_pid(pid_file))
    assert agents.runtime(agent).status in ("stopped", "failed")
