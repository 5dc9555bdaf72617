"""The cells the notebook builders share (scripts/build_notebooks.py, scripts/protocol_course.py)."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell

KERNEL = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


def md(text: str) -> nbformat.NotebookNode:
    return new_markdown_cell(text.strip("\n"))


def code(text: str) -> nbformat.NotebookNode:
    return new_code_cell(text.strip("\n"))


def workspace_cell(name: str, files: dict[str, str]) -> nbformat.NotebookNode:
    """A cell that makes a fresh scratch folder next to the notebook and works in it."""
    lines = [
        "# A scratch folder next to this notebook, so the agent never touches your own files.",
        "import os, pathlib, shutil",
        "",
        f"home = pathlib.Path.cwd().parent if pathlib.Path.cwd().name == {name!r} else pathlib.Path.cwd()",
        f"workspace = home / {name!r}",
        "shutil.rmtree(workspace, ignore_errors=True)",
        "workspace.mkdir()",
    ]
    for path, content in files.items():
        lines.append(f"(workspace / {path!r}).write_text({content!r})")
    lines += [
        "os.chdir(workspace)",
        'print("Working in", workspace.name, "with", sorted(p.name for p in workspace.iterdir()))',
    ]
    return code("\n".join(lines))
