"""The notebook's state (its last sessions) lives in the per-user state directory, keyed by
the notebook's path, so no `.acp-notebook.json` appears beside notebooks (issue 13, problem
8); an old `.acp-notebook.json` is still read; and every state file is opened safely and
read leniently (issue 11): no FIFO, symlink or huge file is read, and bad JSON or bad
entries are skipped with a warning instead of breaking `%acp`."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from acp_notebook.notebook.runtime.notebook_state import MAX_BYTES, NotebookState, StateFileWarning


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "state"
    monkeypatch.setenv("XDG_STATE_HOME", str(home))
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "work" / "analysis.ipynb"))
    (tmp_path / "work").mkdir()
    return home


def old_state(work: Path, session_id: object, servers: dict[str, object]) -> None:
    """An `.acp-notebook.json` as earlier versions wrote it, beside ``analysis.ipynb``."""
    notebooks = {"analysis.ipynb": {"demo": {"default": {"sessionId": session_id}}}}
    (work / ".acp-notebook.json").write_text(
        json.dumps({"notebooks": notebooks, "mcpServers": servers})
    )


def test_a_remembered_session_goes_to_the_state_dir_not_beside_the_notebook(
    tmp_path: Path, state_home: Path
) -> None:
    work = tmp_path / "work"
    state = NotebookState(str(work))
    state.remember_session("claude", "default", "s-1", "Refactor")
    assert list(work.iterdir()) == []
    assert state.path.is_relative_to(state_home / "acp-notebook")
    saved = json.loads(state.path.read_text())
    assert saved["notebook"] == str(work / "analysis.ipynb")
    assert NotebookState(str(work)).last_session("claude", "default") == {
        "sessionId": "s-1",
        "title": "Refactor",
    }


def test_two_notebooks_in_one_folder_keep_their_own_sessions(
    tmp_path: Path, state_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = str(tmp_path / "work")
    NotebookState(work).remember_session("demo", "default", "first", None)
    monkeypatch.setenv("JPY_SESSION_NAME", str(tmp_path / "work" / "other.ipynb"))
    assert NotebookState(work).last_session("demo", "default") is None


def test_an_old_state_file_beside_the_notebook_is_still_read(
    tmp_path: Path, state_home: Path
) -> None:
    work = tmp_path / "work"
    old_state(work, "old-1", {"files": {"command": "mcp-files", "args": []}})
    state = NotebookState(str(work))
    assert state.last_session("demo", "default") == {"sessionId": "old-1"}
    assert state.mcp_servers() == {"files": {"command": "mcp-files", "args": []}}
    state.remember_session("demo", "default", "new-1", None)
    assert state.last_session("demo", "default") == {"sessionId": "new-1"}
    # Read, never written.
    assert "new-1" not in (work / ".acp-notebook.json").read_text()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_place_of_the_file_is_not_read(tmp_path: Path, state_home: Path) -> None:
    work = tmp_path / "work"
    os.mkfifo(work / ".acp-notebook.json")  # opening it for reading would block forever
    with pytest.warns(StateFileWarning, match="not a regular file"):
        assert NotebookState(str(work)).mcp_servers() == {}


def test_a_symlinked_state_file_is_not_followed(tmp_path: Path, state_home: Path) -> None:
    work = tmp_path / "work"
    secret = tmp_path / "elsewhere.json"
    secret.write_text(json.dumps({"mcpServers": {"x": {"command": "evil"}}}))
    (work / ".acp-notebook.json").symlink_to(secret)
    with pytest.warns(StateFileWarning, match="cannot be opened as a regular file"):
        assert NotebookState(str(work)).mcp_servers() == {}


def test_a_huge_state_file_is_not_read(tmp_path: Path, state_home: Path) -> None:
    work = tmp_path / "work"
    (work / ".acp-notebook.json").write_text(" " * (MAX_BYTES + 1) + "{}")
    with pytest.warns(StateFileWarning, match="larger than"):
        assert NotebookState(str(work)).mcp_servers() == {}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("[" * 100_000 + "]" * 100_000, "not valid JSON"),
        ("{not json", "not valid JSON"),
        ("[1, 2]", "not an object"),
    ],
)
def test_unreadable_content_is_skipped_with_a_warning(
    tmp_path: Path, state_home: Path, content: str, problem: str
) -> None:
    work = tmp_path / "work"
    (work / ".acp-notebook.json").write_text(content)
    with pytest.warns(StateFileWarning, match=problem):
        assert NotebookState(str(work)).last_session("demo", "default") is None


def test_entries_of_the_wrong_type_are_skipped_and_the_rest_kept(
    tmp_path: Path, state_home: Path
) -> None:
    work = tmp_path / "work"
    old_state(work, 7, {"good": {"command": "ok"}, "bad": "rm -rf ~"})
    state = NotebookState(str(work))
    with pytest.warns(StateFileWarning, match="no string sessionId"):
        assert state.last_session("demo", "default") is None
    with pytest.warns(StateFileWarning, match="'bad'"):
        assert state.mcp_servers() == {"good": {"command": "ok"}}
    # Wrong types at any level never raise.
    (work / ".acp-notebook.json").write_text(json.dumps({"notebooks": [], "mcpServers": []}))
    with pytest.warns(StateFileWarning):
        assert state.mcp_servers() == {}
    assert state.last_session("demo", "default") is None
