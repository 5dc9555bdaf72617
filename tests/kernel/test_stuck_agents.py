"""An agent stuck in the handshake or in a turn is stopped, its whole process tree, by the
turn's timeout (``-t``) and by ``%acp --stop``, and the cell says what ended (issue 30: an
agent that never answered `initialize` survived both, and ``--stop`` printed "Stopped.").

The agents here are the worst case: they ignore SIGTERM and the end of their stdin, and
each started a process that left its group and session and ignores SIGTERM too. The
kernel's handshake floor is lowered to two seconds through its environment variable (the
hostile agent is standard library only: it answers what it answers at once).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from acp_notebook.client.handshake import HANDSHAKE_FLOOR_ENV

from .conftest import ROOT, Kernel, _start
from .test_lifecycle import Proc, needs_proc

pytestmark = [pytest.mark.kernel, needs_proc]

HOSTILE = ROOT / "tests" / "hostile" / "agents" / "hostile_agent.py"
FLOOR = 2
#: The hostile agent's option, and the request it never answers.
STUCK = [
    ("--hang-initialize", "initialize"),
    ("--hang-new", "session/new"),
    ("--hang-prompt", "session/prompt"),
]


@dataclass
class StuckAgent:
    """One stubborn hostile agent: its command line, and where it writes its pids."""

    option: str
    pid_file: Path
    escapee_file: Path

    @classmethod
    def made(cls, directory: Path, option: str) -> StuckAgent:
        return cls(option, directory / "agent.pid", directory / "escapee.pid")

    @property
    def command(self) -> str:
        return shlex.join(
            [
                sys.executable,
                str(HOSTILE),
                self.option,
                "--stubborn",
                f"--pid-file={self.pid_file}",
                f"--escapee={self.escapee_file}",
            ]
        )

    def acp(self, line: str) -> str:
        return f"%acp -a {shlex.quote(self.command)} {line}"

    def tree(self, kernel: Kernel) -> list[Proc]:
        """The agent, the process it sent away, and its parent (the supervisor)."""
        kernel.wait_for(
            lambda: self.pid_file.exists() and self.escapee_file.exists(), "the agent's pids"
        )
        agent = Proc.read(int(self.pid_file.read_text()))
        escapee = Proc.read(int(self.escapee_file.read_text()))
        assert agent is not None and escapee is not None
        stat = Path(f"/proc/{agent.pid}/stat").read_text()
        parent = Proc.read(int(stat.rsplit(")", 1)[1].split()[1]))
        assert parent is not None and "supervisor.py" in parent.cmdline, parent
        return [parent, agent, escapee]


def sent(kernel: Kernel, method: str) -> bool:
    return any(d == "send" and m.get("method") == method for d, m in kernel.agent_log())


def assert_gone(tree: list[Proc], said: str) -> None:
    """Nothing of the tree lives once the cell said what happened."""
    assert not [p for p in tree if p.alive], f"still running after {said!r}: {tree}"


def assert_named(tree: list[Proc], said: str) -> None:
    """What the cell said names every process of the tree as ended."""
    named = re.search(r"ended \(pids ([\d, ]+), after SIGKILL\)", said)
    assert named, said
    assert {p.pid for p in tree} <= {int(pid) for pid in named.group(1).split(", ")}, said


def nothing_left(kernel: Kernel, agent: StuckAgent) -> None:
    said = kernel.text(agent.acp("--stop")).strip()
    assert said == "The agent `python` was not running; nothing of it is left.", said


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kernel]:
    """The module's kernel, started with the handshake floor at :data:`FLOOR` seconds."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(HANDSHAKE_FLOOR_ENV, str(FLOOR))
        kernel = _start(tmp_path_factory.mktemp("kernel"))
    try:
        yield kernel
    finally:
        kernel.shutdown()


@pytest.fixture
def stuck(tmp_path: Path, request: pytest.FixtureRequest) -> StuckAgent:
    return StuckAgent.made(tmp_path, request.param)


@pytest.mark.parametrize(
    ("stuck", "method"), [step for step in STUCK if step[1] != "session/prompt"], indirect=["stuck"]
)
def test_a_handshake_timeout_stops_the_agents_whole_tree_and_says_so(
    kernel: Kernel, stuck: StuckAgent, method: str
) -> None:
    turn = kernel.execute(stuck.acp("-t 1 go"), until=None)
    tree = stuck.tree(kernel)
    turn.wait("final")
    error = turn.plain.strip()
    assert_gone(tree, error)
    assert re.fullmatch(
        rf"Error: The agent `python` did not answer `{method}` within {FLOOR} s, "
        r"so it was stopped: \d+ processes ended \(pids [\d, ]+, after SIGKILL\); check that "
        "it is an ACP agent, or allow it more time with a longer timeout.",
        error,
    ), error
    assert_named(tree, error)
    nothing_left(kernel, stuck)


@pytest.mark.parametrize("stuck", ["--hang-prompt"], indirect=True)
def test_a_turn_timeout_stops_an_agent_that_ignores_the_cancel_and_says_so(
    kernel: Kernel, stuck: StuckAgent
) -> None:
    turn = kernel.execute(stuck.acp("-t 1 go"), until=None)
    tree = stuck.tree(kernel)
    turn.wait("final")
    assert_gone(tree, turn.plain)
    assert re.search(
        r"The agent did not finish the turn within 1 s, nor confirm the cancellation within "
        r"10 s, so it was stopped: \d+ processes ended \(pids [\d, ]+, after SIGKILL\)\.",
        turn.plain,
    ), turn.describe()
    assert_named(tree, turn.plain)
    nothing_left(kernel, stuck)


@pytest.mark.parametrize(("stuck", "method"), STUCK, indirect=["stuck"])
def test_stop_ends_a_stuck_agents_whole_tree_and_says_what_it_ended(
    kernel: Kernel, stuck: StuckAgent, method: str
) -> None:
    turn = kernel.execute(stuck.acp("--no-wait go"), until="idle")
    tree = stuck.tree(kernel)
    kernel.wait_for(lambda: sent(kernel, method), f"`{method}` sent")
    said = kernel.text(stuck.acp("--stop")).strip()
    assert_gone(tree, said)
    assert re.fullmatch(
        r"Stopped `python`: \d+ processes ended \(pids [\d, ]+, after SIGKILL\)\.", said
    )
    assert_named(tree, said)
    turn.wait("final")  # the turn ends, failed
    assert turn.plain.startswith("Error: ") or "Error: " in turn.plain, turn.describe()
    nothing_left(kernel, stuck)
