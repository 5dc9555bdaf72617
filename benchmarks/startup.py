"""Start-up: ``%load_ext acp_notebook`` against ``import ipywidgets``, each in a fresh
process with an IPython shell already made (what a fresh kernel has before the first
cell), alternating, medians of wall time."""

from __future__ import annotations

import statistics

from .child import last_line
from .table import Row

CHILD = """
import sys, time
from IPython.core.interactiveshell import InteractiveShell
shell = InteractiveShell.instance()
start = time.perf_counter()
if sys.argv[1] == "load_ext":
    shell.run_line_magic("load_ext", "acp_notebook")
else:
    import ipywidgets
print(time.perf_counter() - start)
"""


def _once(what: str) -> float:
    return float(last_line(CHILD, what, timeout=120))


def measure(quick: bool) -> list[Row]:
    _once("load_ext")  # bytecode compiled, files in the page cache
    _once("ipywidgets")
    reps = 3 if quick else 7
    load, widgets = [], []
    for _ in range(reps):
        load.append(_once("load_ext"))
        widgets.append(_once("ipywidgets"))
    return [
        Row(
            f"`%load_ext acp_notebook` in a fresh shell (median of {reps})",
            statistics.median(load) * 1000,
            statistics.median(widgets) * 1000,
            "`import ipywidgets`",
            "ms",
            limit=1.5,
        )
    ]
