"""In a real kernel, the agent the notebook starts and every command it runs are confined
to the notebook's folder by the operating system (issue 25), while the kernel itself is
not: an agent writing without asking, from its own process, a child, a ``setsid``
double-forked grandchild and a client terminal, under ``-p allow``.

The kernel's folder and HOME are under the checkout's ``build/`` (not temp, which is
writable by design)."""

from __future__ import annotations

import json
import shlex
import shutil
import socket
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_notebook.protocol.process import SUPERVISED
from acp_notebook.protocol.sandbox import NO_LANDLOCK_ENV, mechanism

from ..conftest import sandbox_scratch, skip_or_fail
from ..hostile.test_sandbox import no_bwrap_path
from .conftest import ROOT, Execution, Kernel, _start

pytestmark = [
    pytest.mark.kernel,
    pytest.mark.skipif(not SUPERVISED, reason="the supervisor is Linux-only"),
]

PROBE = ROOT / "tests" / "hostile" / "agents" / "sandbox_probe.py"
VERBS = ("own", "child", "escapee", "terminal")


@pytest.fixture
def scratch(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A tree with ``home``, ``project`` (the kernel's folder) and ``outside``; HOME is
    ``home`` for the kernel and so for its agents."""
    base = sandbox_scratch() / uuid.uuid4().hex
    for name in ("home", "project", "outside"):
        (base / name).mkdir(parents=True)
    monkeypatch.setenv("HOME", str(base / "home"))
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def probe_turn(kernel: Kernel, actions: list[list[str]]) -> dict[str, str]:
    return outcomes_of(probe_execution(kernel, actions), actions)


def probe_execution(kernel: Kernel, actions: list[list[str]], live: bool = False) -> Execution:
    """The turn; ``live``: as a frontend with widgets runs it (with stdin), so the turn
    has its live view (a cell run without stdin is taken as headless)."""
    agent = shlex.join([sys.executable, str(PROBE), json.dumps(actions)])
    kernel.text(f"%config AcpMagics.agent = {agent!r}")
    return kernel.execute("%acp -p allow go", allow_stdin=live, until="final")


def outcomes_of(turn: Execution, actions: list[list[str]]) -> dict[str, str]:
    plain = turn.plain
    assert "Stop reason: end_turn" in plain, turn.describe()
    outcomes = {}
    for verb, target in actions:
        key = f"{verb} {target}"
        line = next(line for line in plain.splitlines() if line.startswith(key + ": "))
        outcomes[key] = line[len(key) + 2 :]
    return outcomes


def refused(outcome: str) -> bool:
    return outcome == "EACCES" or ("exit" in outcome and "Permission denied" in outcome)


def test_the_notebooks_agent_writes_only_in_its_folder_and_temp(scratch: Path, tmp_path: Path):
    if mechanism().name != "landlock":
        skip_or_fail("this kernel has no Landlock (Linux 5.13 or later, in the LSM list)")
    kernel = _start(scratch / "project", widgets=False)
    try:
        places = [scratch / "outside", scratch / "home", scratch / "project", tmp_path]
        actions = [[v, str(p / v)] for p in places for v in VERBS]
        turn = probe_execution(kernel, actions)
        outcomes = outcomes_of(turn, actions)
        # The agent's own failed write reads as the sandbox's refusal, not a mystery.
        assert "❌ failed: a write was refused, most likely by the sandbox" in turn.plain
        for verb in VERBS:
            assert refused(outcomes[f"{verb} {scratch / 'outside' / verb}"]), outcomes
            assert refused(outcomes[f"{verb} {scratch / 'home' / verb}"]), outcomes
            assert outcomes[f"{verb} {scratch / 'project' / verb}"] == "ok", outcomes
            assert outcomes[f"{verb} {tmp_path / verb}"] == "ok", outcomes
        status = kernel.text("%acp --status")
        assert (
            "Sandbox: each agent's default (workspace unless its preset says), enforced by Landlock"
            in status
        )
        assert "confined to `project/` · network on" in status
        # The kernel is the user's: the notebook's own code writes where it likes.
        kernel.text(f"open({str(scratch / 'outside' / 'kernel')!r}, 'w').write('k')")
        assert (scratch / "outside" / "kernel").exists()
        # `%config AcpMagics.sandbox = "off"` takes effect when the agent next starts.
        kernel.text('%config AcpMagics.sandbox = "off"')
        kernel.text("%acp --restart")
        again = probe_turn(kernel, [["own", str(scratch / "outside" / "again")]])
        assert again == {f"own {scratch / 'outside' / 'again'}": "ok"}
    finally:
        kernel.shutdown()


def test_without_landlock_the_status_says_the_agent_runs_unconfined(
    scratch: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv(NO_LANDLOCK_ENV, "1")
    monkeypatch.setenv("PATH", no_bwrap_path())  # nor bubblewrap
    kernel = _start(scratch / "project", widgets=True)
    try:
        outside = scratch / "outside" / "own"
        turn = probe_execution(kernel, [["own", str(outside)]], live=True)
        assert outcomes_of(turn, [["own", str(outside)]]) == {f"own {outside}": "ok"}
        # The turn's header says it, never silently.
        assert (
            "⚠️ unconfined: this kernel has no Landlock and bubblewrap is not installed"
            in turn.html_text()
        ), turn.describe()
        status = kernel.text("%acp --status")
        assert "not enforced: agents run unconfined (this kernel has no Landlock" in status
        assert "unconfined: this kernel has no Landlock and bubblewrap is not installed" in status
    finally:
        kernel.shutdown()


def test_the_notebooks_sandbox_traits_choose_what_the_agent_may_write_and_reach(
    scratch: Path, tmp_path: Path
):
    # read-only, writable_dirs and workspace-offline with allowed_ports, set by %config.
    if mechanism().name != "landlock":
        skip_or_fail("this kernel has no Landlock (Linux 5.13 or later, in the LSM list)")
    project, outside, home = scratch / "project", scratch / "outside", scratch / "home"
    kernel = _start(project, widgets=False)
    listeners = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    try:
        kernel.text('%config AcpMagics.sandbox = "read-only"')
        actions = [
            [verb, str(place / f"ro-{verb}")] for place in (project, tmp_path) for verb in VERBS
        ]
        outcomes = probe_turn(kernel, actions)
        for verb in VERBS:
            assert refused(outcomes[f"{verb} {project / f'ro-{verb}'}"]), outcomes
            assert outcomes[f"{verb} {tmp_path / f'ro-{verb}'}"] == "ok", outcomes
        kernel.text('%config AcpMagics.sandbox = "workspace"')
        kernel.text(f"%config AcpMagics.writable_dirs = [{str(outside)!r}]")
        kernel.text("%acp --restart")
        actions = [[verb, str(place / f"wd-{verb}")] for place in (outside, home) for verb in VERBS]
        outcomes = probe_turn(kernel, actions)
        for verb in VERBS:
            assert outcomes[f"{verb} {outside / f'wd-{verb}'}"] == "ok", outcomes
            assert refused(outcomes[f"{verb} {home / f'wd-{verb}'}"]), outcomes
        if mechanism().abi < 4:
            return  # Landlock's network rules need ABI 4
        allowed, other = (str(s.getsockname()[1]) for s in listeners)
        kernel.text('%config AcpMagics.sandbox = "workspace-offline"')
        kernel.text(f"%config AcpMagics.allowed_ports = [{allowed}]")
        kernel.text("%acp --restart")
        outcomes = probe_turn(kernel, [["connect", allowed], ["connect", other]])
        assert outcomes == {f"connect {allowed}": "ok", f"connect {other}": "EACCES"}
        assert f"network off but TCP port {allowed}" in kernel.text("%acp --status")
    finally:
        for listener in listeners:
            listener.close()
        kernel.shutdown()
