"""The notebook as the kernel remembers it: its variables, executed cells and last error.

Read from the shell on the main thread: ``user_ns`` (minus IPython's own names and
modules), ``In``/``Out`` (the executed cells by execution count and their results),
and ``sys.last_value`` (the last exception IPython showed), whose cell is found by the
file name IPython compiled it under.
"""

from __future__ import annotations

import sys
import traceback
import types
from typing import TYPE_CHECKING

from ..summaries import Summary, label_of, size_of, summarise
from ..summaries.model import count, cut_head, cut_text, fence

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

MAX_VARIABLES = 500
MAX_CELLS = 200
MAX_TRACEBACK = 20_000


def user_variables(shell: InteractiveShell) -> dict[str, object]:
    """The user's variables: no ``_`` names, no IPython internals, no modules."""
    hidden = getattr(shell, "user_ns_hidden", {})
    return {
        name: value
        for name, value in shell.user_ns.items()
        if not name.startswith("_")
        and not (name in hidden and hidden[name] is value)
        and not isinstance(value, types.ModuleType)
    }


def _size(value: object) -> str:
    size = size_of(value)
    return "" if size is None else f", {size:,} bytes"


def list_variables(shell: InteractiveShell) -> str:
    variables = user_variables(shell)
    if not variables:
        return "The notebook has no variables yet."
    lines = [
        f"- `{name}`: {label_of(value)}{_size(value)}"
        for name, value in list(variables.items())[:MAX_VARIABLES]
    ]
    if len(variables) > MAX_VARIABLES:
        lines.append(f"(first {MAX_VARIABLES} of {len(variables):,} variables)")
    return f"{count(len(variables), 'variable')}:\n" + "\n".join(lines)


def _cells(shell: InteractiveShell) -> tuple[list[str], dict[int, object]]:
    """The cells as the user typed them (``In`` holds them after IPython's transforms:
    ``get_ipython().run_line_magic(...)`` for ``%magic``), and their results."""
    history = getattr(shell, "history_manager", None)
    typed = getattr(history, "input_hist_raw", None)
    inputs = typed if isinstance(typed, list) else shell.user_ns.get("In", [])
    return list(inputs), dict(shell.user_ns.get("Out", {}))


def list_cells(shell: InteractiveShell) -> str:
    inputs, outputs = _cells(shell)
    executed = [(n, source) for n, source in enumerate(inputs) if n and source.strip()]
    if not executed:
        return "No cell has been executed yet."
    lines = []
    for n, source in executed[-MAX_CELLS:]:
        first = source.strip().splitlines()[0]
        first, _ = cut_text(first, 80)
        result = f" → {label_of(outputs[n])}" if n in outputs else ""
        lines.append(f"- [{n}] {first} ({count(len(source.splitlines()), 'line')}){result}")
    header = f"{count(len(executed), 'executed cell')} (read_cell(n) gives one in full)"
    if len(executed) > MAX_CELLS:
        header += f"; the last {MAX_CELLS} are listed"
    return header + ":\n" + "\n".join(lines)


def read_cell(shell: InteractiveShell, n: int) -> tuple[str, Summary | None]:
    """Cell ``n``'s source and its result's summary (None when it returned nothing).
    Raises LookupError when no cell ``n`` was executed."""
    inputs, outputs = _cells(shell)
    if not 0 < n < len(inputs):
        raise LookupError(n)
    text = f"In [{n}]:\n{fence(inputs[n].rstrip(), 'python')}"
    if n not in outputs:
        return text + f"\n\nCell [{n}] returned no value.", None
    summary = summarise(outputs[n], f"Out[{n}]")
    notes = "".join(f"\n(note: {note})" for note in summary.notes)
    return f"{text}\n\nOut [{n}] ({summary.label}):\n{summary.text}{notes}", summary


def _cell_of(shell: InteractiveShell, error: BaseException) -> int | None:
    """The execution count of the cell the traceback started in."""
    names = getattr(getattr(shell, "compile", None), "_filename_map", {})
    tb = error.__traceback__
    while tb is not None:
        n = names.get(tb.tb_frame.f_code.co_filename)
        if n:
            return int(n)
        tb = tb.tb_next
    return None


def last_error(shell: InteractiveShell) -> str | None:
    """The last exception the user saw (its traceback) and its cell, or None."""
    error = getattr(sys, "last_value", None)
    if not isinstance(error, BaseException):
        return None
    text = "".join(traceback.format_exception(type(error), error, error.__traceback__))
    text, note = cut_head(text, MAX_TRACEBACK)
    parts = [f"The last error:\n{fence(text.rstrip())}"]
    if note:
        parts.append(f"(note: the {note} of the traceback are given)")
    n = _cell_of(shell, error)
    inputs, _ = _cells(shell)
    if n is not None and n < len(inputs):
        parts.append(f"It was raised in cell [{n}]:\n{fence(inputs[n].rstrip(), 'python')}")
    return "\n\n".join(parts)
