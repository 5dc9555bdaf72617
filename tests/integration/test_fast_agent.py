"""ClientConnection against a real third-party agent: fast-agent (``fast-agent-mcp``) with
its offline ``passthrough`` model and ``--shell``.

The passthrough model turns a prompt ``***CALL_TOOL NAME {json}`` into a call of that
tool, so the agent exercises every client-side method for real: a permission request,
``terminal/create`` → ``wait_for_exit`` → ``output`` → ``release`` for ``execute``, and
``fs/read_text_file`` / ``fs/write_text_file`` for the file tools.

fast-agent needs Python ≥ 3.12 (on 3.11 pip silently picks 0.2.36, which has no ACP). The
first run on a machine creates a venv of the pinned version in the agent cache
(``tests/integration/npm.py``; about 340 MB, 30–60 s); later runs and clones reuse it.
The module skips, saying why, when no such Python exists or the install fails (no network);
under ``CI=true`` it fails instead, so CI cannot go green without this layer.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client.connection import ClientConnection
from acp_notebook.client.transcript import MessageEntry

from ..client.helpers import Wire
from ..conftest import skip_or_fail
from .npm import AGENT_CACHE

PACKAGE = "fast-agent-mcp==0.10.48"
VENV = AGENT_CACHE / f"fast-agent-{PACKAGE.split('==')[1]}"
STAMP = VENV / ".acp-notebook-verified"
INSTALL_TIMEOUT = 900

# The first test sets the venv up (a fresh CI machine always does): pytest-timeout's
# 300 s for the whole test would cut the install short of its own INSTALL_TIMEOUT.
pytestmark = [pytest.mark.slow, pytest.mark.anyio, pytest.mark.timeout(INSTALL_TIMEOUT + 300)]
SAFETY = 90.0  # fast-agent takes ~2 s to answer initialize; a safety net only


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _python_312_plus() -> str | None:
    """An interpreter ≥ 3.12 that really runs (pyenv shims exist but may refuse to)."""
    candidates = [shutil.which(name) for name in ("python3.13", "python3.12", "python3.14")]
    if sys.version_info >= (3, 12):
        candidates.insert(0, sys.executable)
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    candidates += sorted(glob.glob(os.path.join(root, "versions", "3.1[2-9]*", "bin", "python3")))
    for candidate in filter(None, candidates):
        try:
            probe = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                capture_output=True,
                text=True,
                timeout=30,
            )
        except (OSError, subprocess.TimeoutExpired):
            continue
        if probe.returncode == 0 and probe.stdout.strip() == "True":
            return candidate
    return None


def _acp_works(fast_agent: Path, home: Path) -> bool:
    try:
        result = subprocess.run(
            [str(fast_agent), "--no-update-check", "acp", "--help"],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "HOME": str(home), "NO_COLOR": "1"},
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and "acp" in result.stdout.lower()


def install_fast_agent() -> Path:
    """The ``fast-agent`` executable of the cached venv, created on first use; skipped
    (failed under CI) when it cannot be."""
    executable = VENV / "bin" / "fast-agent"
    if STAMP.exists() and executable.exists():
        return executable
    python = _python_312_plus()
    if python is None:
        skip_or_fail("fast-agent needs Python >= 3.12 and none was found (python3.12/3.13, pyenv)")
    if not (VENV / "bin" / "pip").exists():
        made = subprocess.run(
            [python, "-m", "venv", str(VENV)], capture_output=True, text=True, timeout=300
        )
        if made.returncode != 0:
            skip_or_fail(f"could not create the fast-agent venv: {made.stderr.strip()[-300:]}")
    try:
        installed = subprocess.run(
            [str(VENV / "bin" / "pip"), "install", "--quiet", "--disable-pip-version-check",
             PACKAGE],
            capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
        )  # fmt: skip
    except subprocess.TimeoutExpired:
        skip_or_fail(f"`pip install fast-agent-mcp` took longer than {INSTALL_TIMEOUT} s")
    if installed.returncode != 0:
        errors = [line for line in installed.stderr.splitlines() if "WARNING" not in line]
        skip_or_fail(
            "`pip install fast-agent-mcp` failed (no network?): " + " | ".join(errors[-3:])[-400:]
        )
    with tempfile.TemporaryDirectory() as home:
        works = executable.exists() and _acp_works(executable, Path(home))
    if not works:
        skip_or_fail(
            "the installed fast-agent-mcp has no `acp` subcommand (pip picked an old version?)"
        )
    STAMP.write_text("fast-agent-mcp with `acp` verified\n")
    return executable


@pytest.fixture(scope="module")
def fast_agent() -> Path:
    return install_fast_agent()


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A scratch cwd and an environment with a writable, empty HOME."""
    work = tmp_path / "work"
    home = tmp_path / "home"
    work.mkdir()
    home.mkdir()
    return work, {"HOME": str(home), "NO_COLOR": "1", "TERM": "dumb"}


def command(fast_agent: Path) -> list[str]:
    return [str(fast_agent), "--no-update-check", "acp", "--model", "passthrough", "--shell"]


def call_tool(name: str, arguments: dict[str, Any]) -> str:
    import json

    return f"***CALL_TOOL {name} {json.dumps(arguments)}"


def reply_text(session: Any, turn: int) -> str:
    return "".join(
        e.text
        for e in session.transcript.entries_of(turn)
        if isinstance(e, MessageEntry) and e.role == "agent"
    )


def agent_requests(wire: Wire, start: int = 0) -> list[str]:
    """Methods of the agent's requests to the client, in order."""
    return [
        e.message["method"]
        for e in wire.events[start:]
        if e.direction == "recv" and e.message and "method" in e.message and "id" in e.message
    ]


async def test_execute_read_and_write_through_the_client(
    fast_agent: Path, workspace: tuple[Path, dict[str, str]]
) -> None:
    work, env = workspace
    source = work / "in.txt"
    source.write_text("hello from the file\n")
    existing = work / "existing.txt"
    existing.write_text("old content\n")
    created = work / "sub" / "new.txt"
    wire = Wire()
    async with ClientConnection.spawn(
        command(fast_agent), env=env, cwd=work, observers=[wire]
    ) as conn:
        with anyio.fail_after(SAFETY):
            response = await conn.initialize()
            assert response.agent_info is not None and response.agent_info.name == "fast-agent-acp"
            session = await conn.new_session(work, policy="allow")

            start = len(wire.events)
            turn = await session.prompt(call_tool("execute", {"command": "echo hi"}))
            assert turn.stop_reason == "end_turn", turn.error
            assert agent_requests(wire, start) == [
                "session/request_permission",
                "terminal/create",
                "terminal/wait_for_exit",
                "terminal/output",
                "terminal/release",
            ]
            assert "hi" in reply_text(session, turn.record.index)
            # The released terminal stays readable for display.
            (created_reply,) = [
                m
                for m in wire.sent()
                if isinstance(m.get("result"), dict) and "terminalId" in m["result"]
            ]
            view = session.terminal_view(created_reply["result"]["terminalId"])
            assert view is not None and view.output == "hi\n" and view.exit_code == 0

            start = len(wire.events)
            turn = await session.prompt(call_tool("read_text_file", {"path": str(source)}))
            assert turn.stop_reason == "end_turn", turn.error
            assert "fs/read_text_file" in agent_requests(wire, start)
            assert "hello from the file" in reply_text(session, turn.record.index)

            turn = await session.prompt(
                call_tool("write_text_file", {"path": str(existing), "content": "new content\n"})
            )
            assert turn.stop_reason == "end_turn", turn.error
            assert existing.read_text() == "new content\n"

            start = len(wire.events)
            turn = await session.prompt(
                call_tool("write_text_file", {"path": str(created), "content": "created\n"})
            )
            assert turn.stop_reason == "end_turn", turn.error
            assert "fs/write_text_file" in agent_requests(wire, start)
            assert created.read_text() == "created\n"
            markdown = turn.bundle()["text/markdown"]
            assert "+created" in markdown and "sub/new.txt" in markdown
    assert wire.schema_errors_of_client() == []
    assert session.file_changes, "the writes were recorded as file changes"


async def test_denied_permission_leaves_the_file_alone(
    fast_agent: Path, workspace: tuple[Path, dict[str, str]]
) -> None:
    work, env = workspace
    target = work / "keep.txt"
    target.write_bytes(b"keep me\n")
    wire = Wire()
    async with ClientConnection.spawn(
        command(fast_agent), env=env, cwd=work, observers=[wire]
    ) as conn:
        with anyio.fail_after(SAFETY):
            await conn.initialize()
            session = await conn.new_session(work, policy="deny")
            turn = await session.prompt(
                call_tool("write_text_file", {"path": str(target), "content": "overwritten\n"})
            )
            assert turn.stop_reason is not None, turn.error
            denied = await session.prompt(call_tool("execute", {"command": f"rm {target}"}))
            assert denied.stop_reason is not None, denied.error
    assert target.read_bytes() == b"keep me\n"
    assert "fs/write_text_file" not in agent_requests(wire)
    assert "terminal/create" not in agent_requests(wire)
    decided = [r for r in session.permissions.requests.values()]
    assert decided and all(r.chosen is not None and not r.chosen.allows for r in decided)
    assert wire.schema_errors_of_client() == []


async def test_reading_outside_the_session_roots_is_refused(
    fast_agent: Path, workspace: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    work, env = workspace
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret\n")
    wire = Wire()
    async with ClientConnection.spawn(
        command(fast_agent), env=env, cwd=work, observers=[wire]
    ) as conn:
        with anyio.fail_after(SAFETY):
            await conn.initialize()
            session = await conn.new_session(work, policy="allow")
            turn = await session.prompt(call_tool("read_text_file", {"path": str(secret)}))
    assert turn.done
    reads = [
        m for m in wire.sent()
        if "method" not in m and "error" in m
    ]  # fmt: skip
    assert reads, "the read outside the roots was answered with an error"
    assert "top secret" not in reply_text(session, 0)
