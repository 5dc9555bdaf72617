"""The notebook's cells as prompt context: the code above a ``%acp`` line, the most
recently executed code cell (with its result or error), the last error, and the path of
the open notebook.

Cells are followed as they run (:class:`~.cell_log.CellLog`), not read back from
``In``/``Out``: a cell run without storing history (nbval does) is context too. A cell is numbered by its execution
count when it has one. Output a cell printed or displayed is not recorded by the kernel,
so it is not sent; the agent can read a result with the notebook tools.
"""

from __future__ import annotations

import sys
import traceback
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..located import Located, locate
from ..summaries import Limits, summarise
from ..summaries.model import count, cut_head, cut_text, fence
from .cell_log import PROMPT_LINE

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from .cell_log import CellLog

#: A cell's source and result as context: enough for "this function", not a whole module.
CELL_CHARS = 20_000
RESULT_LIMITS = Limits(chars=4_000, rows=10, columns=20, array_items=50)
TRACEBACK_CHARS = 10_000


@dataclass(frozen=True)
class CellText:
    """One cell as the agent is given it."""

    #: Its execution count, or None for the code above the running ``%acp``.
    number: int | None
    text: str
    lines: int
    #: The exception it raised, by type name ("ZeroDivisionError"), if it raised the last one.
    error: str | None = None
    notes: tuple[str, ...] = ()


def code_above(source: str | None) -> CellText | None:
    """The code above the first ``%acp`` line of ``source`` (None when there is none)."""
    if not source or source.lstrip().startswith("%%acp"):
        return None
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if PROMPT_LINE.match(line)), None)
    above = "\n".join(lines[:first] if first is not None else []).strip("\n")
    if not above.strip():
        return None
    text, note = cut_text(above, CELL_CHARS)
    body = f"The code above the prompt, in the same cell (already run):\n{fence(text, 'python')}"
    notes = (f"the code was cut to its {note}",) if note else ()
    return CellText(None, body, len(above.splitlines()), notes=notes)


def _traceback(shell: InteractiveShell, error: BaseException) -> tuple[str, str | None]:
    """The traceback from the first frame in a cell (IPython's own frames above it say
    nothing about the user's code, and name this machine's paths)."""
    cells = getattr(getattr(shell, "compile", None), "_filename_map", {})
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename not in cells:
        tb = tb.tb_next
    text = "".join(traceback.format_exception(type(error), error, tb or error.__traceback__))
    # A cell's code is compiled under a temporary file name: say "Cell In[4]" as IPython
    # does (the name means nothing to the agent, and is this machine's path).
    for filename, n in cells.items():
        text = text.replace(f'File "{filename}"', f"Cell In[{n}]")
    return cut_head(text.rstrip(), TRACEBACK_CHARS)


def last_code_cell(log: CellLog, named: Mapping[int, str] | None = None) -> CellText | None:
    """The most recently executed cell before the running one that holds code: its
    source, its value (bounded) or the error it raised. ``named``: the values the prompt
    attaches by name (``id`` → the name): a result among them is only referred to, as
    the value is sent once."""
    ran = log.last_code
    if ran is None:
        return None
    code, note = cut_text(ran.source.rstrip(), CELL_CHARS)
    notes = [f"the cell was cut to its {note}"] if note else []
    where = f"Cell [{ran.number}]" if ran.number is not None else "The cell"
    parts = [f"{where}, the most recently executed:\n{fence(code, 'python')}"]
    attached = (named or {}).get(id(ran.result)) if ran.result is not None else None
    if attached is not None:
        parts.append(f"Its result is `{attached}`, attached with this prompt.")
    elif ran.result is not None:
        name = f"Out[{ran.number}]" if ran.number is not None else "its value"
        summary = summarise(ran.result, name, RESULT_LIMITS)
        parts.append(f"Its result, {name} ({summary.label}):\n{summary.text}")
        notes += [f"{name}: {note}" for note in summary.notes]
    error = None
    if ran.error is not None:
        error = type(ran.error).__name__
        text, cut = _traceback(log.shell, ran.error)
        parts.append(f"It raised:\n{fence(text)}")
        if cut:
            notes.append(f"the traceback was cut to its {cut}")
    lines = len(ran.source.splitlines())
    return CellText(ran.number, "\n\n".join(parts), lines, error, tuple(notes))


def error_text(traceback_text: str, cell: str | None, code: str | None) -> str:
    """An error as the agent is given it: its traceback, then the code of the cell that
    raised it (``cell``: how that cell is named) when known."""
    parts = [f"The last error:\n{fence(traceback_text)}"]
    if code is not None:
        parts.append(f"It was raised in {cell or 'this cell'}:\n{fence(code, 'python')}")
    return "\n\n".join(parts)


def last_error(log: CellLog) -> CellText | None:
    """The last exception's traceback and the code of the cell that raised it."""
    error = getattr(sys, "last_value", None)
    if not isinstance(error, BaseException):
        return None
    text, cut = _traceback(log.shell, error)
    notes = [f"the traceback was cut to its {cut}"] if cut else []
    ran = log.raised if log.raised is not None and log.raised.error is error else None
    number, lines, code, where = None, 0, None, None
    if ran is not None:
        number, lines = ran.number, len(ran.source.splitlines())
        code, note = cut_text(ran.source.rstrip(), CELL_CHARS)
        where = f"cell [{number}]" if number is not None else None
        if note:
            notes.append(f"the cell was cut to its {note}")
    body = error_text(text, where, code)
    return CellText(number, body, lines, type(error).__name__, tuple(notes))


def cell_label(cell: CellText, where: str | None = None) -> str:
    """How the turn lists it: "cell [4] (5 lines)", "last cell (2 lines)"."""
    where = where or ("last cell" if cell.number is None else f"cell [{cell.number}]")
    return f"{where} ({count(cell.lines, 'line')})"


def notebook_located(shell: InteractiveShell) -> Located:
    """The open notebook as far as the kernel can tell (``located.py``: VS Code's
    ``__vsc_ipynb_file__``, Jupyter Server's ``JPY_SESSION_NAME``)."""
    return locate(vscode=shell.user_ns.get("__vsc_ipynb_file__"))


def notebook_path(shell: InteractiveShell) -> str | None:
    """The open notebook's absolute path, when the kernel can see the file."""
    return notebook_located(shell).file
