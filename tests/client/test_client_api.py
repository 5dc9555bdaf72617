"""The public client API: what ``acp_notebook.client`` exports, ``connect()``, and the
documented example of the client without Jupyter (docs/python-client.md), run as a user would run it."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

import acp_notebook
import acp_notebook.client
from acp_notebook._version import __version__
from acp_notebook.client import ClientConnection, connect
from acp_notebook.client.connection import CLIENT_INFO

from .helpers import DEMO, SAFETY, Wire

PAGE = Path(__file__).resolve().parents[2] / "docs" / "python-client.md"

pytestmark = pytest.mark.anyio


def documented_example() -> str:
    """The first Python code block of docs/python-client.md."""
    found = re.search(r"```python\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)
    assert found, "docs/python-client.md has no Python example"
    return found.group(1)


def test_the_documented_example_runs_against_the_demo_agent(tmp_path: Path) -> None:
    example = tmp_path / "example.py"
    example.write_text(documented_example(), encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(example)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SAFETY * 2,
    )
    assert done.returncode == 0, done.stderr
    assert "$ sh -c 'echo hi'\nhi\n[exit code 0]" in done.stdout
    assert done.stdout.endswith("stop reason: end_turn\n")


async def test_connect_starts_and_initializes_the_agent(tmp_path: Path) -> None:
    wire = Wire()
    async with connect(DEMO, cwd=tmp_path, observers=[wire]) as conn:
        assert isinstance(conn, ClientConnection)
        assert conn.initialize_response is not None
        assert conn.agent_label == "acp_notebook demo agent"
        assert wire.methods_sent() == ["initialize"]
        process = conn.process
        assert process is not None
    assert process.returncode is not None  # shut down on exit


def test_every_public_name_of_the_client_is_importable() -> None:
    names = acp_notebook.client.__all__
    assert {"connect", "ClientConnection", "Session", "PromptTurn", "AgentRequests"} <= set(names)
    for name in names:
        assert getattr(acp_notebook.client, name) is not None
    for module in ("connection", "session", "handlers", "fs", "terminals", "elicitation",
                   "pending", "errors", "mcp"):  # fmt: skip
        imported = importlib.import_module(f"acp_notebook.client.{module}")
        for name in imported.__all__:
            assert hasattr(imported, name), f"{module}.{name}"


def test_the_package_root_offers_connect_and_one_version() -> None:
    assert acp_notebook.connect is connect
    assert acp_notebook.__version__ == __version__ == CLIENT_INFO["version"]
