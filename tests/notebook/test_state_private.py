"""The per-user state directory is its user's only: on a machine shared by several users
(a JupyterHub with a local spawner) another user listed it, the names of the notebooks'
state files and the demo agent's sessions among them, when it was made 0755."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from acp_notebook.client.protected import state_dir
from acp_notebook.notebook.runtime.notebook_state import NotebookState


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    return tmp_path


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_saving_a_notebooks_state_makes_the_state_directory_private(state_home: Path) -> None:
    NotebookState(str(state_home)).save({"sessions": {}})
    assert mode(state_dir()) == 0o700


def test_a_state_directory_left_open_is_closed_on_the_next_save(state_home: Path) -> None:
    state_dir().mkdir(parents=True, mode=0o755)
    state_dir().chmod(0o755)
    NotebookState(str(state_home)).save({"sessions": {}})
    assert mode(state_dir()) == 0o700
