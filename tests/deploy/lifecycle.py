"""A kernel's end as a server or a gateway brings it, checked from outside: what one
notebook leaves running (an agent, a session whose notebook tools' relay endpoint is
open, a turn left running in the background with its command in a terminal), and that
none of it outlives the kernel, culled or restarted; after a restart ``%acp --resume``
continues the notebook's last session."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..browser.conftest import TURN_TIMEOUT_MS, NotebookPage
from ..browser.live_helpers import LiveNotebookPage, expect
from .processes import Proc, descendants, endpoints, kernel_processes, left_behind

CELLS = [
    "%load_ext acp_notebook\nimport os\nprint('kernel', os.getpid())",
    "%acp -p allow /tools print('relayed')",
    "%acp -s background --no-wait -p allow /run sleep 600",
]
#: After a restart: the extension again, the notebook's last session resumed, a turn in it.
AFTER_RESTART = ("%load_ext acp_notebook", "%acp --resume", "%acp and now?")


@dataclass
class Running:
    """What one notebook's kernel runs."""

    kernel_id: str
    procs: list[Proc]
    endpoints: list[Path]

    def left(self) -> tuple[list[Proc], list[Path]]:
        return left_behind(self.procs, self.endpoints)


def start_everything(notebook: NotebookPage, after: tuple[str, ...] = ()) -> Running:
    """Open the notebook (``CELLS``, then ``after``, not run), run ``CELLS``: what runs."""
    notebook.write([*CELLS, *after])
    notebook.open()
    for index in range(len(CELLS)):
        notebook.run_cell(index)
        notebook.wait_done(index)
    expect(notebook.output(1)).to_contain_text("relayed")
    match = re.search(r"kernel (\d+)", notebook.output(0).inner_text())
    assert match, notebook.output(0).inner_text()
    pid = int(match.group(1))
    deadline = time.monotonic() + TURN_TIMEOUT_MS / 1000
    while not any(p.cmdline.startswith("sleep 600") for p in descendants(pid)):
        assert time.monotonic() < deadline, f"no terminal runs sleep: {descendants(pid)}"
        time.sleep(0.2)
    procs, dirs = kernel_processes(pid), endpoints(pid)
    assert any("acp_notebook.agents.demo" in p.cmdline for p in procs), procs
    assert dirs, "the notebook tools' relay endpoint was not found"
    (kernel,) = notebook.lab.api("GET", "/api/kernels")
    return Running(kernel["id"], procs, dirs)


def wait_culled(notebook: NotebookPage, kernel_id: str) -> None:
    """Until the kernel is the server's no more (safety net: a turn's)."""
    deadline = time.monotonic() + TURN_TIMEOUT_MS / 1000
    while kernel_id in {k["id"] for k in notebook.lab.api("GET", "/api/kernels")}:
        assert time.monotonic() < deadline, f"not culled:\n{notebook.lab.log_tail()}"
        time.sleep(0.2)


def check_ended(notebook: NotebookPage, end: Callable[[Running], None]) -> None:
    """Everything started, then ``end`` ends the kernel (waiting until it is gone):
    nothing of it is left."""
    running = start_everything(notebook)
    end(running)
    procs, dirs = running.left()
    assert not procs, f"left running after the kernel ended: {procs}"
    assert not dirs, f"relay endpoints left after the kernel ended: {dirs}"


def culled_once_left(notebook: NotebookPage) -> Callable[[Running], None]:
    """The page closed (no connection left), then the server's culler."""

    def end(running: Running) -> None:
        notebook.close_page()
        wait_culled(notebook, running.kernel_id)

    return end


def check_restarted_then_resumed(notebook: NotebookPage, *, reload: bool = False) -> None:
    """Everything started, the kernel restarted from the page (Kernel > Restart): nothing
    of the old kernel is left, and the new kernel's ``%acp --resume`` continues the notebook's session
    (``reload``: in a page opened again, where the restarting one never gets the kernel)."""
    running = start_everything(notebook, AFTER_RESTART)
    LiveNotebookPage(notebook, "lab", collaborative=False).restart_kernel()
    procs, dirs = running.left()
    assert not procs, f"left running after the restart: {procs}"
    assert not dirs, f"relay endpoints left after the restart: {dirs}"

    first = len(CELLS)
    if reload:
        notebook.close_page()
        notebook.reopen_page()
        notebook.open()
    notebook.wait_kernel_idle()
    for index in range(first, first + len(AFTER_RESTART)):
        notebook.run_cell(index)
        notebook.wait_done(index)
    expect(notebook.output(first + 1)).to_contain_text("Resumed session demo-session-1")
    expect(notebook.output(first + 2)).to_contain_text("Stop reason: end_turn")
