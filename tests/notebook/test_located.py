"""Which notebook a kernel runs when its filesystem is not the server's: a kernel started
through a gateway runs in the gateway's directory and gets the server's notebook folder
(``KERNEL_WORKING_DIR``) and, only where both sides pass it, ``JPY_SESSION_NAME``. The
kernel names the file it can see, or none and says why once, never a wrong one."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from acp_notebook.notebook import located
from acp_notebook.notebook.prompt.cells import notebook_path
from acp_notebook.notebook.runtime.notebook_state import NotebookState

SHELL: Any = SimpleNamespace(user_ns={})


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A kernel with no notebook named yet, in ``tmp_path/kernel``; reasons not yet said."""
    for name in ("JPY_SESSION_NAME", "KERNEL_GATEWAY", "KERNEL_WORKING_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(located, "_said", set())
    cwd = tmp_path / "kernel"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    return cwd


def gateway_kernel(monkeypatch: pytest.MonkeyPatch, server_folder: Path) -> None:
    monkeypatch.setenv("KERNEL_GATEWAY", "1")
    monkeypatch.setenv("KERNEL_WORKING_DIR", str(server_folder))


def test_a_relative_session_name_is_the_file_in_the_kernels_folder(
    kernel: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An older server names the notebook relative to its root ("sub/analysis.ipynb"); the
    # kernel it starts runs in the notebook's folder, where that name resolved to nothing.
    (kernel / "analysis.ipynb").write_text("{}")
    monkeypatch.setenv("JPY_SESSION_NAME", "sub/analysis.ipynb")
    assert notebook_path(SHELL) == str(kernel / "analysis.ipynb")


def test_a_gateway_kernel_never_takes_a_same_named_file_of_its_own_directory(
    kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The gateway's directory held a sub/analysis.ipynb of its own: resolved against the
    # kernel's directory, the server's relative name pointed at that other file.
    (kernel / "sub").mkdir()
    (kernel / "sub" / "analysis.ipynb").write_text("{}")
    server_folder = tmp_path / "server" / "sub"
    gateway_kernel(monkeypatch, server_folder)
    monkeypatch.setenv("JPY_SESSION_NAME", "sub/analysis.ipynb")

    assert notebook_path(SHELL) is None
    seen = located.locate()
    assert seen.name == str(server_folder / "analysis.ipynb")
    assert seen.unseen is not None and str(server_folder / "analysis.ipynb") in seen.unseen
    assert "where the gateway runs it" in seen.unseen


def test_a_gateway_kernel_that_can_see_the_servers_notebook_uses_it(
    kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "server" / "work"
    folder.mkdir(parents=True)
    (folder / "analysis.ipynb").write_text("{}")
    gateway_kernel(monkeypatch, folder)
    monkeypatch.setenv("JPY_SESSION_NAME", str(folder / "analysis.ipynb"))
    assert notebook_path(SHELL) == str(folder / "analysis.ipynb")
    assert located.locate().unseen is None


def test_a_gateway_kernel_not_told_its_notebook_says_so_and_a_console_says_nothing(
    kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert located.locate() == located.Located(None, None, None)
    gateway_kernel(monkeypatch, tmp_path / "server")
    seen = located.locate()
    assert seen.file is None
    assert seen.unseen is not None and "did not pass JPY_SESSION_NAME" in seen.unseen


def test_the_reason_is_said_once_per_kernel(
    kernel: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gateway_kernel(monkeypatch, tmp_path / "server")
    for _ in range(3):
        located.say_once(located.locate().unseen)
    err = capsys.readouterr().err
    assert err.count("acp_notebook: This kernel runs through a gateway") == 1, err


def test_gateway_notebooks_of_two_folders_keep_their_sessions_apart(
    kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Unnamed, every notebook of a gateway was "default" in the gateway's directory: one
    # notebook's --resume continued another's session.
    keys = []
    for folder in ("alice-project", "bob-project"):
        gateway_kernel(monkeypatch, tmp_path / folder)
        keys.append(NotebookState(os.getcwd()).path)
    assert keys[0] != keys[1]
