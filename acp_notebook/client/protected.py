"""Paths an agent never writes unasked, whatever the policy: where a write would run
commands later, change code every later run imports, or plant settings the client trusts.

:func:`is_protected` says why a path is protected; ``decision.py`` asks before such a
write (an ``fs/write_text_file`` or a command's write target) unless a rule names it.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePath

__all__ = ["STATE_FILE_NAMES", "is_protected", "make_state_dir", "state_dir"]

#: The notebook state file (``notebook/runtime/notebook_state.py`` reads it): MCP servers planted there
#: reach later agents, so the agent never writes it unasked.
STATE_FILE_NAMES = frozenset({".acp-notebook.json"})


def state_dir() -> Path:
    """The per-user state directory of acp_notebook (XDG base directory rules)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(base) / "acp-notebook"


def make_state_dir() -> Path:
    """The per-user state directory, made readable by its user only (0700), also when an
    earlier version left it open: what a user's notebooks remember (their sessions, the
    trust key) is not for another user of the machine (a JupyterHub with a local spawner)
    to list or read. Its parents are left as they are."""
    path = state_dir()
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if info.st_uid == os.getuid() and info.st_mode & 0o077:
        path.chmod(0o700)
    return path


def _inside(path: str, directory: str) -> bool:
    try:
        return os.path.commonpath([path, directory]) == directory
    except ValueError:
        return False


def is_protected(path: str) -> str | None:
    """Why writing ``path`` (absolute) always asks, or None: inside ``.git/`` (a hook or a
    ``core.fsmonitor`` there runs commands), inside a virtual environment or
    ``site-packages`` (code every later run imports), the notebook state file or the
    per-user state directory (remembered sessions, trusted MCP servers), or a notebook
    (``.ipynb``). Reads the disk (``pyvenv.cfg`` of each ancestor)."""
    pure = PurePath(path)
    if ".git" in pure.parts[:-1] or pure.name == ".git":
        return "inside `.git/`, where hooks and config run commands"
    if "site-packages" in pure.parts or pure.name == "pyvenv.cfg":
        return "inside a Python environment"
    if any(os.path.isfile(os.path.join(parent, "pyvenv.cfg")) for parent in pure.parents):
        return "inside a virtual environment"
    if pure.name in STATE_FILE_NAMES:
        return "the notebook's acp_notebook settings"
    state = os.path.normpath(str(state_dir()))
    if _inside(os.path.normpath(path), state) or _inside(
        os.path.normpath(path), os.path.realpath(state)
    ):
        return "acp_notebook's own state (remembered sessions, trusted MCP servers)"
    if pure.suffix == ".ipynb":
        return "a notebook"
    return None
