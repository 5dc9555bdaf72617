"""The live-notebook browser tests' notebook, and :class:`LiveNotebookPage`: one test's
notebook opened in JupyterLab or Notebook 7, with what the page and the saved file show."""

from __future__ import annotations

import json
import re
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

# Importing this module skips the test module that imports it, with the reason.
if shutil.which("chromium") is None:
    pytest.skip(
        "chromium is not installed (apt-get install -y chromium); browser tests skipped",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
expect = sync_api.expect

from .conftest import TURN_TIMEOUT_MS, UI_TIMEOUT_MS, NotebookPage  # noqa: E402

if TYPE_CHECKING:
    from playwright.sync_api import Locator, WebSocket

FUNCTION = "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result"
RENAMED = "def total(values):\n    acc = 0\n    for v in values:\n        acc += v\n    return acc"
#: The file ``/rename result acc helper.py`` renames in after the cell.
HELPER_PY = "def double(result):\n    return result * 2\n"

#: Cell 2: what a notebook tool does first: the connected notebook and its cells. Calls
#: run on an agent loop thread of their own, as the tools' calls will.
CONNECT = """\
import asyncio
from acp_notebook.notebook.frontend import frontends
from acp_notebook.notebook.runtime.loop import AgentLoop

agent_loop = AgentLoop()
def on_agent_loop(call):
    return asyncio.wrap_future(agent_loop.submit(call))

live = frontends.current()
cells = await on_agent_loop(live.list_cells)
function = cells[1]
print(live.path, [c.cell_type for c in cells], function.execution_count)"""

#: The websocket a notebook shared through jupyter-collaboration is synced over (the
#: awareness room opens even with collaboration off).
COLLABORATION_ROOM = re.compile(r"/api/collaboration/room/json:notebook:")


def notebook_cells(*calls: str) -> list[str]:
    """The test notebook: load the extension, the function, connect, then ``calls``."""
    return ["%load_ext acp_notebook", FUNCTION, CONNECT, *calls]


def call(expression: str) -> str:
    """A cell that awaits ``expression`` on the agent loop and prints the outcome."""
    return f"outcome = await on_agent_loop(lambda: {expression})\nprint(outcome.status)"


def propose_rename() -> str:
    return call(
        f"live.propose_edit(function.id, {RENAMED!r}, expected_source=function.source, "
        "label='Rename result to acc')"
    )


def printed(saved: Any, index: int) -> str:
    """The stdout a saved code cell holds."""
    outputs = saved.cells[index].get("outputs", [])
    return "".join(o.get("text", "") for o in outputs if o.get("name") == "stdout")


@dataclass
class LiveNotebookPage:
    """One test's notebook in ``ui`` ("lab": JupyterLab, "notebook7"), on a server with
    real-time collaboration when ``collaborative``."""

    nb: NotebookPage
    ui: str
    collaborative: bool
    _sockets: list[str] = field(default_factory=list)

    # -- opening and connecting -------------------------------------------------------

    def open(self) -> None:
        """Open the notebook; on a collaborative server, check it is shared through
        jupyter-collaboration (so the edits go through its document, not a local one)."""
        self._sockets.clear()
        page = self.nb.page
        page.on("websocket", self._opened)
        try:
            if self.ui == "lab":
                self.nb.open()
            else:
                page.goto(self.nb.lab.url(f"/notebooks/{self.nb.rel}"))
                page.locator(".jp-Notebook .jp-Cell").first.wait_for()
                self.nb.wait_kernel_idle()
        finally:
            page.remove_listener("websocket", self._opened)
        rooms = [url for url in self._sockets if COLLABORATION_ROOM.search(url)]
        assert bool(rooms) == self.collaborative, (
            f"collaborative={self.collaborative}, but the page opened {self._sockets}"
        )

    def _opened(self, socket: WebSocket) -> None:
        self._sockets.append(socket.url)

    def reload(self) -> None:
        """A new page (a fresh browser context) on the same server and kernel."""
        self.nb.close_page()
        self.nb.reopen_page()
        self.open()

    @property
    def panel(self) -> Locator:
        return self.nb.page.locator(".jp-NotebookPanel:not(.lm-mod-hidden)").first

    def wait_connected(self) -> None:
        """The extension and the kernel said hello and welcome."""
        expect(self.panel).to_have_attribute("data-acp-live", "connected")

    def start(self, *calls: str) -> None:
        """Write the test notebook with ``calls`` after the connect cell, open it, load
        the extension and connect."""
        self.nb.write(notebook_cells(*calls))
        self.open()
        self.load_and_connect()

    def load_and_connect(self) -> None:
        """Run ``%load_ext``, wait for the connection, then the connect cell."""
        self.nb.run_cell(0)
        self.nb.wait_done(0)
        self.wait_connected()
        self.nb.run_cell(2)
        self.nb.wait_done(2)
        expect(self.stdout(2)).to_contain_text(f"{self.nb.rel} ['code', 'code', 'code'")

    def restart_kernel(self) -> None:
        """Kernel > Restart Kernel…, then Restart in the dialog."""
        page = self.nb.page
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Kernel$")).click()
        page.locator(
            ".lm-Menu-item:not(.lm-mod-disabled) .lm-Menu-itemLabel",
            has_text=re.compile(r"^Restart Kernel…$"),
        ).click()
        page.locator(".jp-Dialog-button", has_text=re.compile(r"^Restart$")).click()

    def rename_in_cell_and_file(self, *after: str) -> Path:
        """The notebook: load, the function, ``%acp /rename result acc helper.py``, then
        ``after``, with helper.py beside it; opened and connected, the ``%acp`` cell run,
        its edit of the function accepted in the cell and its write of the file allowed
        once on its card, until the turn ends. helper.py's path."""
        helper = self.nb.dir / "helper.py"
        helper.write_text(HELPER_PY)
        self.nb.write(
            ["%load_ext acp_notebook", FUNCTION, "%acp /rename result acc helper.py", *after]
        )
        self.open()
        self.nb.run_cell(0)
        self.nb.wait_done(0)
        self.wait_connected()

        self.nb.run_cell(2)
        shown = self.proposal(1)
        expect(shown).to_be_visible(timeout=TURN_TIMEOUT_MS)
        shown.get_by_role("button", name="Accept").click()
        self.expect_source(1, RENAMED)
        # Then the file: its permission card in the turn, allowed once.
        card = self.nb.output(2).locator(".acp-permission-card")
        expect(card).to_contain_text("helper.py", timeout=TURN_TIMEOUT_MS)
        self.nb.shot("acp-file-asked")
        card.get_by_role("button", name="Allow once", exact=True).click()
        self.nb.wait_done(2)
        return helper

    # -- cells --------------------------------------------------------------------------

    def stdout(self, index: int) -> Locator:
        return self.nb.output(index).locator('[data-mime-type="application/vnd.jupyter.stdout"]')

    def outcome(self, index: int, status: str) -> None:
        """Cell ``index`` finished and printed ``status``, and nothing on stderr."""
        self.nb.wait_done(index)
        expect(self.stdout(index)).to_have_text(f"{status}\n")
        stderr = self.nb.output(index).locator('[data-mime-type="application/vnd.jupyter.stderr"]')
        expect(stderr).to_have_count(0)

    def proposal(self, index: int) -> Locator:
        return self.nb.cell(index).locator(".acp-live-proposal")

    def editor_text(self, index: int) -> str:
        return str(self.nb.cell(index).locator(".jp-InputArea-editor .cm-content").inner_text())

    def expect_source(self, index: int, source: str) -> None:
        """The cell's editor shows ``source`` (waits for it)."""
        deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
        while self.editor_text(index) != source:
            assert time.monotonic() < deadline, (
                f"cell {index} shows {self.editor_text(index)!r}, not {source!r}"
            )
            self.nb.page.wait_for_timeout(100)

    def type_in_cell(self, index: int, text: str) -> None:
        """The user types ``text`` at the end of the cell, then leaves the editor."""
        self.nb.cell(index).locator(".jp-InputArea-editor .cm-content").click()
        self.nb.page.keyboard.press("Control+End")
        self.nb.page.keyboard.type(text)
        self.nb.page.keyboard.press("Escape")

    def saved_when(self, ready: Callable[[Any], bool], what: str) -> Any:
        """Save, then the notebook on disk once ``ready(nb)`` holds (the save is written).

        With real-time collaboration the server saves the shared document by itself, and
        a Ctrl+S racing that save can raise JupyterLab's "File Changed" dialog, so the
        test waits for the server's save instead."""
        if not self.collaborative:
            self.nb.save()
        deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
        while True:
            try:
                saved = self.nb.saved()
            except (json.JSONDecodeError, ValueError, OSError):  # caught mid-write
                saved = None
            if saved is not None and ready(saved):
                return saved
            assert time.monotonic() < deadline, f"the saved notebook never had {what}"
            self.nb.page.wait_for_timeout(200)
