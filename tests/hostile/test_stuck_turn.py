"""The command line ends an agent stuck in a turn, or in the handshake under ``doctor``,
its whole process tree, before it says so, and it says what it ended (issue 30: an agent
that ignored the cancel and SIGTERM, and a process it sent away, lived on after the run
had reported the agent stopped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..cli.test_cli import cli, one_error_line
from .test_handshake_timeout import assert_stopped, stuck


def test_the_command_line_stops_an_agent_that_ignores_the_cancel_and_says_what_ended(
    tmp_path: Path,
) -> None:
    agent = stuck(tmp_path, "--hang-prompt")
    result = cli(
        "run", "go", "--agent", agent, "--timeout", "1", "--cancel-grace", "0.5", cwd=tmp_path
    )
    line = one_error_line(result)
    assert_stopped(line, tmp_path)
    assert line.startswith(
        "acp-notebook: The agent did not finish the turn within 1 s, nor confirm the "
        "cancellation within 0.5 s, so it was stopped: "
    ), line


@pytest.mark.parametrize(
    ("option", "method"), [("--hang-initialize", "initialize"), ("--hang-new", "session/new")]
)
def test_doctor_stops_an_agent_that_does_not_answer_and_says_what_ended(
    tmp_path: Path, option: str, method: str
) -> None:
    result = cli("doctor", "--agent", stuck(tmp_path, option), "--timeout", "3", cwd=tmp_path)
    assert result.returncode != 0
    assert f"{method}: no answer within 3 s" in result.stdout, result.stdout
    stopped = [line for line in result.stdout.splitlines() if line.startswith("Stopped: ")]
    assert len(stopped) == 1, result.stdout
    assert_stopped(stopped[0], tmp_path)
