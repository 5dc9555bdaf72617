"""A turn's timeout bounds the handshake too (issue 11): an agent that never answers
`initialize`, `authenticate` or `session/new` ends the CLI run and the `%acp` cell with one
sentence naming the request, what was stopped for it and what to do, and leaves no process
behind (issue 30: the sentence came while the agent still ran). Each request gets
at least ``HANDSHAKE_FLOOR`` seconds (starting an agent takes seconds); here the floor is
lowered to one second through its environment variable, which the CLI's process inherits
(the hostile agent is standard library only: it answers what it answers at once)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_notebook.client.handshake import HANDSHAKE_FLOOR_ENV, handshake_floor
from acp_notebook.notebook.runtime.agents import NotebookAgents
from acp_notebook.notebook.turn.handle import TurnSettings

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


def stuck(directory: Path, option: str) -> str:
    """The hostile agent stuck at ``option``, at its worst: it ignores SIGTERM and its
    stdin's end, and sent away a process (out of its group and session) that ignores
    SIGTERM too; both write their pids into ``directory``."""
    return hostile(
        option,
        "--stubborn",
        f"--pid-file={directory / 'agent.pid'}",
        f"--escapee={directory / 'escapee.pid'}",
    )


def assert_stopped(sentence: str, directory: Path) -> None:
    """The agent and the process it sent away are gone, and ``sentence`` names both as
    ended (read as it was told: each had ended before)."""
    pids = [agent_pid(directory / name) for name in ("agent.pid", "escapee.pid")]
    assert not [pid for pid in pids if alive(pid)], sentence
    named = re.search(r"\d+ processes ended \(pids ([\d, ]+), after SIGKILL\)", sentence)
    assert named, sentence
    assert set(pids) <= {int(pid) for pid in named.group(1).split(", ")}, sentence


@pytest.mark.parametrize(("option", "method"), STEPS)
def test_the_command_line_gives_up_on_a_handshake_request_after_the_timeout(
    tmp_path: Path, option: str, method: str
) -> None:
    agent = stuck(tmp_path, option)
    result = cli("run", "hi", "--agent", agent, "--auth", "login", "--timeout", "1", cwd=tmp_path)
    line = one_error_line(result)
    assert_stopped(line, tmp_path)
    assert f"did not answer `{method}` within {handshake_floor():g} s, so it was stopped: " in line
    assert line.endswith(f"); {WHAT_TO_DO}"), line


@pytest.fixture
def agents(tmp_path: Path) -> Iterator[NotebookAgents]:
    notebook = NotebookAgents(cwd=str(tmp_path))
    yield notebook
    notebook.shutdown()


@pytest.mark.parametrize(("option", "method"), STEPS)
def test_a_cell_with_a_timeout_gives_up_on_a_handshake_request_and_stops_the_agent(
    agents: NotebookAgents, tmp_path: Path, option: str, method: str
) -> None:
    agent = stuck(tmp_path, option)
    agents.runtime(agent).auth_method = "login"  # as after `%acp --login login`
    settings = TurnSettings(prompt="hi", agent=agent, timeout=1, headless=True)
    handle = agents.start_turn(settings).wait(SAFETY)
    assert handle.error is not None
    assert_stopped(handle.error, tmp_path)
    assert (
        f"did not answer `{method}` within {handshake_floor():g} s, so it was stopped: "
        in handle.error
    )
    assert handle.error.endswith(f"); {WHAT_TO_DO}"), handle.error
    assert handle.error.count(";") == 1  # one sentence
    assert agents.runtime(agent).status in ("stopped", "failed")
