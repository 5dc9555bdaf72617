"""The first ``%acp`` of a prompt starts its agent before the notebook layer loads, and the
session runs on that very process (issue 15: the first ``%acp /help`` within 1.5× of a
stdlib client, ``benchmarks/first_turn.py``); any other line starts nothing early, and a
process started early that no runtime takes is shut down."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio

from acp_notebook.client.presets import DEMO
from acp_notebook.notebook.runtime.agents import NotebookAgents
from acp_notebook.notebook.runtime.loop import AgentLoop
from acp_notebook.notebook.runtime.notebook_state import NotebookState
from acp_notebook.notebook.runtime.start import (
    EarlyStart,
    Launch,
    launch_spec,
    notebook_cwd,
    would_start,
)
from acp_notebook.protocol.process import AgentProcess

from .conftest import SAFETY, fresh_python

#: Not loaded when the first prompt's agent starts: the notebook layer and the models
#: (the line's parser and the controls' registry, with its handlers, are; what the
#: handlers use is imported when they run).
NOT_YET = (
    "acp_notebook.protocol.models",
    "acp_notebook.notebook.runtime.agents",
    "acp_notebook.notebook.runtime.agent",
    "acp_notebook.notebook.turn.handle",
    "acp_notebook.notebook.tools",
    "acp_notebook.client.session",
    "acp_notebook.ui",
    "acp_notebook.client.connection",
    "ipywidgets",
    "pydantic",
)

#: A fresh shell with `%load_ext` done: every agent process started is counted (and what
#: of the notebook layer was loaded when the early start was made), and every reading of a
#: line, then the lines given run one after the other.
CHILD = """
import contextlib, io, json, sys
import anyio
from IPython.core.interactiveshell import InteractiveShell
from acp_notebook.notebook.load import options

reads = []
read_line = options.parse_line
def counted_read(line, cell=None):
    reads.append(line)
    return read_line(line, cell)
options.parse_line = counted_read

from acp_notebook.notebook.runtime import start as agent_start

started = []
open_process = anyio.open_process
async def counted(*args, **kwargs):
    process = await open_process(*args, **kwargs)
    started.append(process.pid)
    return process
anyio.open_process = counted

loaded_at_early_start = []
early_start = agent_start.EarlyStart.__init__
def noted(self, *args, **kwargs):
    loaded_at_early_start.append(sorted(sys.modules))
    early_start(self, *args, **kwargs)
agent_start.EarlyStart.__init__ = noted

shell = InteractiveShell.instance()
shell.run_line_magic("load_ext", "acp_notebook")
magics = shell.magics_manager.registry["AcpMagics"]
answers = []
for line in sys.argv[1:]:
    output = io.StringIO()
    with contextlib.redirect_stdout(output):
        shell.run_line_magic("acp", "--headless " + line)
    answers.append(
        {"line": line, "output": output.getvalue(), "started": list(started), "reads": list(reads)}
    )
runtime = magics.agents.runtimes.get("demo")
connection = runtime.connection if runtime is not None else None
print(json.dumps({
    "answers": answers,
    "loaded": loaded_at_early_start,
    "session_pid": connection.process.pid if connection is not None else None,
}))
"""


def lines_in_a_fresh_shell(tmp_path: Path, *lines: str) -> dict[str, Any]:
    return fresh_python(CHILD, *lines, tmp_path=tmp_path)


def test_the_first_prompt_starts_its_agent_before_the_notebook_layer_and_uses_that_process(
    tmp_path: Path,
) -> None:
    answer = lines_in_a_fresh_shell(tmp_path, "/help", "/help")
    first, second = answer["answers"]
    assert "/help" in first["output"]
    [loaded] = answer["loaded"]
    assert "acp_notebook.notebook.load.options" in loaded  # the report is read right
    assert [name for name in loaded if name.startswith(NOT_YET)] == []
    # One agent process for both turns, and it is the session's.
    assert len(second["started"]) == 1
    assert answer["session_pid"] == second["started"][0]
    # The line is read once, for its early start and its turn alike (it was read twice).
    assert first["reads"] == ["--headless /help"]


def test_a_control_or_a_dry_run_starts_no_agent_early(tmp_path: Path) -> None:
    answer = lines_in_a_fresh_shell(tmp_path, "--dry-run /help", "--status", "/help")
    dry_run, status, prompt = answer["answers"]
    assert dry_run["started"] == [] and status["started"] == []
    assert answer["loaded"] == []
    assert "/help" in prompt["output"] and len(prompt["started"]) == 1


def _early_demo(tmp_path: Path) -> tuple[AgentLoop, EarlyStart]:
    loop = AgentLoop()
    spec = launch_spec(DEMO, NotebookState(str(tmp_path)))
    return loop, EarlyStart(loop, DEMO, spec, str(tmp_path))


def _started(loop: AgentLoop, early: EarlyStart) -> AgentProcess:
    async def process() -> AgentProcess:
        while early.process is None:  # spawned by a task of this loop
            await anyio.sleep(0.01)
        return early.process

    return loop.run(process, timeout=SAFETY)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_an_early_start_no_runtime_took_is_shut_down(tmp_path: Path) -> None:
    loop, early = _early_demo(tmp_path)
    try:
        pid = _started(loop, early).pid
        early.discard()
        early.finished.result(SAFETY)
        assert _gone(pid)
    finally:
        loop.stop()


def _runtime_started(agents: NotebookAgents, agent: str) -> int:
    """The pid of the process the runtime of ``agent`` runs its connection over."""
    runtime = agents.runtime(agent)
    connection = agents.loop.run(runtime.ensure_started, timeout=SAFETY)
    assert connection.process is not None
    return connection.process.pid


def test_the_runtime_of_the_agent_takes_the_process_started_early(tmp_path: Path) -> None:
    loop, early = _early_demo(tmp_path)
    agents = NotebookAgents(cwd=str(tmp_path), early=early)
    try:
        pid = _started(loop, early).pid
        assert _runtime_started(agents, DEMO) == pid
        assert agents.early is None and not _gone(pid)
    finally:
        agents.shutdown()


def test_a_runtime_that_would_start_another_process_does_not_take_it(tmp_path: Path) -> None:
    # Its own variables (what a login puts there): not the process started early.
    loop, early = _early_demo(tmp_path)
    agents = NotebookAgents(cwd=str(tmp_path), env={"API_KEY": "k"}, early=early)
    try:
        pid = _started(loop, early).pid
        assert _runtime_started(agents, DEMO) != pid
        early.finished.result(SAFETY)
        assert _gone(pid)
    finally:
        agents.shutdown()


def test_an_early_start_is_taken_only_by_what_would_start_the_same_process(
    tmp_path: Path,
) -> None:
    loop, early = _early_demo(tmp_path)
    hosted: list[object] = []

    async def host(process: AgentProcess | None) -> None:
        hosted.append(process)

    async def hand_over(launch: Launch) -> bool:
        return early.hand_over(host, hosted.append, launch)

    other = launch_spec(
        f'"{sys.executable}" -m acp_notebook.agents.demo', NotebookState(str(tmp_path))
    )
    try:
        pid = _started(loop, early).pid
        # Another agent, or another directory: not the process started.
        assert early.launch != would_start(other, str(tmp_path))
        assert early.launch != would_start(early.spec, str(tmp_path / "elsewhere"))
        # The same spec and directory, no variables of its own: the same process.
        assert early.launch == would_start(early.spec, notebook_cwd(str(tmp_path)))
        # A login put a credential into the agent's environment: not the process started.
        launch = would_start(early.spec, str(tmp_path), {"API_KEY": "k"})
        assert loop.run(hand_over, launch, timeout=SAFETY) is False
        early.finished.result(SAFETY)
        assert _gone(pid) and hosted == []
    finally:
        loop.stop()
