"""The cells as they run, followed from ``%load_ext`` on (on IPython's ``pre_run_cell`` and
``post_run_cell`` events, main thread): what ``cells.py`` makes the prompt's context of."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult, InteractiveShell

#: A top-level prompt line: ``%acp …`` or ``name = %acp …``.
PROMPT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*\s*=\s*)?%acp(\s|$)")


@dataclass(frozen=True)
class RanCell:
    """A cell that ran: its source as typed, execution count, value and exception."""

    source: str
    number: int | None
    result: Any = None
    error: BaseException | None = None


class CellLog:
    """The cell running now, the last cell that held code, and the last cell that raised."""

    def __init__(self, shell: InteractiveShell) -> None:
        self.shell = shell
        self.running: str | None = None
        self.last_code: RanCell | None = None
        self.raised: RanCell | None = None

    def install(self) -> None:
        self.shell.events.register("pre_run_cell", self._pre)
        self.shell.events.register("post_run_cell", self._post)

    def uninstall(self) -> None:
        for event, callback in (("pre_run_cell", self._pre), ("post_run_cell", self._post)):
            with contextlib.suppress(ValueError):  # not registered
                self.shell.events.unregister(event, callback)

    def _pre(self, info: ExecutionInfo) -> None:
        self.running = info.raw_cell

    def _post(self, result: ExecutionResult) -> None:
        source = result.info.raw_cell if result.info is not None else self.running
        self.running = None
        if not source or holds_no_code(source):
            return
        number = result.execution_count if result.info and result.info.store_history else None
        error = result.error_in_exec or result.error_before_exec
        ran = RanCell(source, number, result.result, error)
        self.last_code = ran
        if error is not None:
            self.raised = ran


def holds_no_code(source: str) -> bool:
    """A cell of ``%acp`` prompts and other line magics (``%load_ext``, ``%config``) and
    comments only: not code the user means by "the code above"."""
    stripped = source.strip()
    if stripped.startswith("%%acp"):
        return True
    lines = [line for line in stripped.splitlines() if line.strip() and not line.startswith("#")]
    return all(
        PROMPT_LINE.match(line) or (line.startswith("%") and not line.startswith("%%"))
        for line in lines
    )
