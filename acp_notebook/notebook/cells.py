"""The notebook's cells as prompt context: the code above a ``%acp`` line, the most
recently executed code cell (with its result or error), the last error, and the path of
the open notebook.

Read on the main thread from the kernel's own records: the cells as typed
(``history_manager.input_hist_raw``, indexed by execution count; the running cell is
already stored there when its ``%acp`` runs), their results (``Out``) and the last
exception IPython showed (``sys.last_value``). Output a cell printed or displayed is not
recorded by the kernel, so it is not sent; the agent can read a result with the notebook
tools.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .summaries import Limits, summarise
from .summaries.model import count, cut_head, cut_text, fence
from .tools.history import cell_of_error

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

#: A cell's source and result as context: enough for "this function", not a whole module.
CELL_CHARS = 20_000
RESULT_LIMITS = Limits(chars=4_000, rows=10, columns=20, array_items=50)
TRACEBACK_CHARS = 10_000

#: A top-level prompt line: ``%acp …`` or ``name = %acp …``.
_PROMPT_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*\s*=\s*)?%acp(\s|$)")


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


def _typed(shell: InteractiveShell) -> list[str]:
    history = getattr(shell, "history_manager", None)
    typed = getattr(history, "input_hist_raw", None)
    return list(typed) if isinstance(typed, list) else []


def holds_no_code(source: str) -> bool:
    """A cell of ``%acp`` prompts and other line magics (``%load_ext``, ``%config``) and
    comments only: not code the user means by "the code above"."""
    stripped = source.strip()
    if stripped.startswith("%%acp"):
        return True
    lines = [line for line in stripped.splitlines() if line.strip() and not line.startswith("#")]
    return all(
        _PROMPT_LINE.match(line) or (line.startswith("%") and not line.startswith("%%"))
        for line in lines
    )


def running_cell(shell: InteractiveShell) -> str | None:
    """The source of the cell running now: the last one stored (IPython stores a cell
    before running it)."""
    typed = _typed(shell)
    return typed[-1] if len(typed) > 1 else None


def code_above(source: str | None) -> CellText | None:
    """The code above the first ``%acp`` line of ``source`` (None when there is none)."""
    if not source or source.lstrip().startswith("%%acp"):
        return None
    lines = source.splitlines()
    first = next((i for i, line in enumerate(lines) if _PROMPT_LINE.match(line)), None)
    above = "\n".join(lines[:first] if first is not None else []).strip("\n")
    if not above.strip():
        return None
    text, note = cut_text(above, CELL_CHARS)
    body = f"The code above the prompt, in the same cell (already run):\n{fence(text, 'python')}"
    notes = (f"the code was cut to its {note}",) if note else ()
    return CellText(None, body, len(above.splitlines()), notes=notes)


def _last_error(shell: InteractiveShell) -> tuple[BaseException, int | None] | None:
    error = getattr(sys, "last_value", None)
    if not isinstance(error, BaseException):
        return None
    return error, cell_of_error(shell, error)


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


def last_code_cell(shell: InteractiveShell) -> CellText | None:
    """The most recently executed cell before the running one that holds code:
    its source, its result (bounded) or the error it raised."""
    typed = _typed(shell)
    for n in range(len(typed) - 2, 0, -1):
        source = typed[n]
        if source.strip() and not holds_no_code(source):
            return _cell(shell, n, source)
    return None


def _cell(shell: InteractiveShell, n: int, source: str) -> CellText:
    code, note = cut_text(source.rstrip(), CELL_CHARS)
    notes = [f"the cell was cut to its {note}"] if note else []
    parts = [f"Cell [{n}], the most recently executed:\n{fence(code, 'python')}"]
    outputs = shell.user_ns.get("Out", {})
    if isinstance(outputs, dict) and n in outputs:
        summary = summarise(outputs[n], f"Out[{n}]", RESULT_LIMITS)
        parts.append(f"Its result, Out[{n}] ({summary.label}):\n{summary.text}")
        notes += [f"Out[{n}]: {note}" for note in summary.notes]
    raised = _last_error(shell)
    error = None
    if raised is not None and raised[1] == n:
        error = type(raised[0]).__name__
        text, cut = _traceback(shell, raised[0])
        parts.append(f"It raised:\n{fence(text)}")
        if cut:
            notes.append(f"the traceback was cut to its {cut}")
    return CellText(n, "\n\n".join(parts), len(source.splitlines()), error, tuple(notes))


def last_error(shell: InteractiveShell) -> CellText | None:
    """The last exception's traceback and the code of the cell that raised it."""
    raised = _last_error(shell)
    if raised is None:
        return None
    error, n = raised
    text, cut = _traceback(shell, error)
    notes = [f"the traceback was cut to its {cut}"] if cut else []
    parts = [f"The last error:\n{fence(text)}"]
    typed = _typed(shell)
    lines = 0
    if n is not None and n < len(typed):
        code, note = cut_text(typed[n].rstrip(), CELL_CHARS)
        lines = len(typed[n].splitlines())
        parts.append(f"It was raised in cell [{n}]:\n{fence(code, 'python')}")
        if note:
            notes.append(f"the cell was cut to its {note}")
    return CellText(n, "\n\n".join(parts), lines, type(error).__name__, tuple(notes))


def cell_label(cell: CellText) -> str:
    """How the turn lists it: "cell [4] (5 lines)", "code above (2 lines)"."""
    where = "code above" if cell.number is None else f"cell [{cell.number}]"
    return f"{where} ({count(cell.lines, 'line')})"


def notebook_path(shell: InteractiveShell) -> str | None:
    """The open notebook's absolute path, when the kernel can learn it: VS Code sets
    ``__vsc_ipynb_file__``; Jupyter Server sets ``JPY_SESSION_NAME``."""
    for candidate in (shell.user_ns.get("__vsc_ipynb_file__"), os.environ.get("JPY_SESSION_NAME")):
        if isinstance(candidate, str) and candidate.endswith(".ipynb"):
            path = os.path.abspath(candidate)
            if os.path.isfile(path):
                return path
    return None
