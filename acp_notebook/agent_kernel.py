"""The "ACP agent" kernel: every cell is a prompt, unless it says otherwise.

Started as IPython with ``--ext=acp_notebook.agent_kernel``. A cell is sent to the agent
as ``%%acp`` would send it; a cell whose first line is ``%%py`` runs as Python in this
kernel (the line is dropped); a cell starting with ``%`` or ``!`` (``%acp --status``,
``%pip install …``) runs as usual. Everything else — the UI, permissions, cancel, the
saved transcript — is the same as with ``%acp`` in a Python notebook.
"""

from __future__ import annotations

from typing import Any

PYTHON_MARKER = "%%py"


def prompt_transformer(lines: list[str]) -> list[str]:
    """Turn a prompt cell into ``%%acp``; leave Python (``%%py``) and magics alone."""
    text = "".join(lines)
    stripped = text.lstrip()
    if not stripped:
        return lines
    first = stripped.splitlines()[0].strip()
    if first == PYTHON_MARKER or first.startswith(PYTHON_MARKER + " "):
        return stripped.splitlines(keepends=True)[1:]
    if stripped.startswith(("%", "!")):
        return lines
    return ["%%acp\n", *lines]


def load_ipython_extension(shell: Any) -> None:
    from . import load_ipython_extension as load_acp

    load_acp(shell)
    if prompt_transformer not in shell.input_transformers_cleanup:
        # First: the prompt becomes a %%acp cell before anything reads it as Python.
        shell.input_transformers_cleanup.insert(0, prompt_transformer)


def unload_ipython_extension(shell: Any) -> None:
    from . import unload_ipython_extension as unload_acp

    if prompt_transformer in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(prompt_transformer)
    unload_acp(shell)
