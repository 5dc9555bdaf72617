"""The notebook's sandbox settings from the environment (``ACP_NOTEBOOK_SANDBOX``,
``ACP_NOTEBOOK_WRITABLE_DIRS``, ``ACP_NOTEBOOK_ALLOWED_PORTS``) reach the agents' starts
as one choice; a mode that is not one is refused aloud, not ignored."""

from __future__ import annotations

import os

import pytest

from acp_notebook.notebook.load.config import AcpConfig
from acp_notebook.protocol.sandbox import SandboxChoice


def test_the_environment_chooses_the_sandbox_the_agents_start_in(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACP_NOTEBOOK_SANDBOX", "workspace-offline")
    monkeypatch.setenv("ACP_NOTEBOOK_WRITABLE_DIRS", os.pathsep.join(["/data", "/models"]))
    monkeypatch.setenv("ACP_NOTEBOOK_ALLOWED_PORTS", "443, 11434")
    assert AcpConfig().sandbox_choice() == SandboxChoice(
        "workspace-offline", ("/data", "/models"), (443, 11434)
    )


def test_without_them_each_agent_runs_in_its_presets_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in (
        "ACP_NOTEBOOK_SANDBOX",
        "ACP_NOTEBOOK_WRITABLE_DIRS",
        "ACP_NOTEBOOK_ALLOWED_PORTS",
    ):
        monkeypatch.delenv(name, raising=False)
    assert AcpConfig().sandbox_choice() == SandboxChoice()


def test_a_sandbox_mode_misspelt_in_the_environment_is_refused_aloud(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # ACP_NOTEBOOK_SANDBOX=readonly fell back to workspace without a word.
    monkeypatch.setenv("ACP_NOTEBOOK_SANDBOX", "readonly")
    assert AcpConfig().sandbox is None
    assert capsys.readouterr().err == (
        "acp_notebook: ignoring ACP_NOTEBOOK_SANDBOX: the sandbox is one of workspace, "
        "read-only, workspace-offline, off, not 'readonly'\n"
    )
