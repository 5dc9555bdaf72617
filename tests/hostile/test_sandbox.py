"""The operating system confines the agent and everything it runs to the session's folders
(issue 25): an agent that writes without asking, from its own process, a child, a
``setsid`` double-forked grandchild and the client's terminals, under ``--permissions
allow``, in the CLI.

Measured before the sandbox: every write outside the folder and into HOME succeeded.
The scratch tree is under the checkout's ``build/`` (neither temp, which is writable by
design, nor the folder); HOME points into it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest

from acp_notebook.protocol.process import SUPERVISED
from acp_notebook.protocol.sandbox import NO_LANDLOCK_ENV, mechanism

from ..cli.test_cli import cli
from ..conftest import sandbox_scratch, skip_or_fail

ROOT = Path(__file__).resolve().parents[2]
PROBE = Path(__file__).resolve().parent / "agents" / "sandbox_probe.py"
VERBS = ("own", "child", "escapee", "terminal")

pytestmark = pytest.mark.skipif(not SUPERVISED, reason="the supervisor is Linux-only")


@pytest.fixture
def landlock() -> None:
    """The test needs this kernel's Landlock (skipped without it; failed under CI)."""
    if mechanism().name != "landlock":
        skip_or_fail("this kernel has no Landlock (Linux 5.13 or later, in the LSM list)")


@dataclass
class Tree:
    """A home, a project folder (the cwd) and a folder outside it, none of them in temp."""

    home: Path
    project: Path
    outside: Path

    @property
    def env(self) -> dict[str, str]:
        return {"HOME": str(self.home)}


@pytest.fixture
def tree() -> Iterator[Tree]:
    base = sandbox_scratch() / uuid.uuid4().hex
    made = Tree(base / "home", base / "project", base / "outside")
    for path in (made.home, made.project, made.outside):
        path.mkdir(parents=True)
    try:
        yield made
    finally:
        shutil.rmtree(base, ignore_errors=True)


def probe(
    tree: Tree,
    actions: list[list[str]],
    *options: str,
    permissions: str | None = "allow",
    env: dict[str, str] | None = None,
) -> dict[str, str]:
    """Run one turn of the probe agent with ``actions`` and ``options`` (None
    ``permissions``: the default); each action's outcome by ``"verb target"``."""
    agent = shlex.join([sys.executable, str(PROBE), json.dumps(actions)])
    result = cli(
        "run", "go", "--agent", agent, "--format", "markdown",
        *options, *(["--permissions", permissions] if permissions else []),
        cwd=tree.project, env={**tree.env, **(env or {})},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("stop reason: end_turn\n"), result.stdout
    outcomes = {}
    for verb, target in actions:
        key = f"{verb} {target}"
        line = next(line for line in result.stdout.splitlines() if line.startswith(key + ": "))
        outcomes[key] = line[len(key) + 2 :]
    return outcomes


def writes(targets: list[Path]) -> list[list[str]]:
    return [[verb, str(target / verb)] for target in targets for verb in VERBS]


def refused(outcome: str) -> bool:
    """A write the kernel refused: EACCES in the process, "Permission denied" from a shell
    (Landlock); EROFS, "Read-only file system" (bubblewrap)."""
    if outcome in ("EACCES", "EROFS"):
        return True
    return "exit" in outcome and ("Permission denied" in outcome or "Read-only" in outcome)


def no_bwrap_path() -> str:
    """PATH without the directories that hold bubblewrap: as on a machine without it."""
    dirs = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return os.pathsep.join(d for d in dirs if not os.path.exists(os.path.join(d, "bwrap")))


#: Without Landlock and without bubblewrap: nothing can confine the agent.
NOTHING_TO_CONFINE = {NO_LANDLOCK_ENV: "1", "PATH": no_bwrap_path()}


def test_writes_outside_the_folder_and_into_home_are_refused_from_every_process(
    landlock, tree, tmp_path
):
    outcomes = probe(tree, writes([tree.outside, tree.home, tree.project, tmp_path]))
    for verb in VERBS:
        assert refused(outcomes[f"{verb} {tree.outside / verb}"]), outcomes
        assert refused(outcomes[f"{verb} {tree.home / verb}"]), outcomes
        assert outcomes[f"{verb} {tree.project / verb}"] == "ok", outcomes
        assert outcomes[f"{verb} {tmp_path / verb}"] == "ok", outcomes
        assert not (tree.outside / verb).exists() and not (tree.home / verb).exists()
        assert (tree.project / verb).exists() and (tmp_path / verb).exists()


def test_with_the_default_options_the_agents_own_writes_outside_are_refused_too(landlock, tree):
    # --permissions ask with no one to ask: the client refuses the terminal itself, and the
    # sandbox the writes the agent makes without asking.
    outcomes = probe(tree, writes([tree.outside, tree.home, tree.project]), permissions=None)
    for verb in ("own", "child", "escapee"):
        assert outcomes[f"{verb} {tree.outside / verb}"] == "EACCES", outcomes
        assert outcomes[f"{verb} {tree.home / verb}"] == "EACCES", outcomes
        assert outcomes[f"{verb} {tree.project / verb}"] == "ok", outcomes
    assert "was refused: no one can be asked" in outcomes[f"terminal {tree.outside / 'terminal'}"]
    assert not [p for p in (tree.outside, tree.home) for v in VERBS if (p / v).exists()]


def test_sandbox_off_lets_every_write_through_as_before(tree):
    outcomes = probe(tree, writes([tree.outside, tree.home]), "--sandbox", "off")
    assert set(outcomes.values()) == {"ok"}, outcomes
    assert all((tree.outside / verb).exists() for verb in VERBS)


def test_read_only_refuses_writes_to_the_folder_but_not_to_temp(landlock, tree, tmp_path):
    outcomes = probe(tree, writes([tree.project, tmp_path]), "--sandbox", "read-only")
    for verb in VERBS:
        assert refused(outcomes[f"{verb} {tree.project / verb}"]), outcomes
        assert outcomes[f"{verb} {tmp_path / verb}"] == "ok", outcomes


def test_add_dir_makes_another_folder_writable(landlock, tree):
    outcomes = probe(tree, writes([tree.outside]), "--add-dir", str(tree.outside))
    assert set(outcomes.values()) == {"ok"}, outcomes


@pytest.fixture
def listeners() -> Iterator[tuple[int, int]]:
    """Two loopback ports something listens on."""
    sockets = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    try:
        yield tuple(s.getsockname()[1] for s in sockets)  # type: ignore[misc]
    finally:
        for s in sockets:
            s.close()


@pytest.mark.skipif(mechanism().abi < 4, reason="Landlock's network rules need ABI 4")
def test_workspace_offline_refuses_a_connect_to_a_port_not_allowed(landlock, tree, listeners):
    allowed, other = listeners
    actions = [["connect", str(allowed)], ["connect", str(other)]]
    outcomes = probe(tree, actions, "--sandbox", "workspace-offline", "--allow-port", str(allowed))
    assert outcomes == {f"connect {allowed}": "ok", f"connect {other}": "EACCES"}
    # Online (the default), both connect.
    assert set(probe(tree, actions).values()) == {"ok"}


def test_without_landlock_the_agent_runs_unconfined_and_says_so(tree):
    outcomes = probe(tree, writes([tree.outside]), env=NOTHING_TO_CONFINE)
    assert set(outcomes.values()) == {"ok"}, outcomes


def test_without_landlock_the_cli_says_the_agent_runs_unconfined(tree):
    env = {**tree.env, **NOTHING_TO_CONFINE}
    result = cli("run", "/help", cwd=tree.project, env=env)
    assert result.returncode == 0
    assert result.stderr == (
        "acp-notebook: the agent runs unconfined: this kernel has no Landlock and bubblewrap "
        "is not installed.\n"
    )
    doctor = cli("doctor", cwd=tree.project, env=env)
    assert (
        "Sandbox: workspace, not enforced: agents run unconfined (this kernel has no Landlock"
        in doctor.stdout
    )


def test_the_streamed_turn_and_doctor_say_where_the_agent_is_confined(landlock, tree):
    result = cli("run", "/help", "--format", "terminal", cwd=tree.project, env=tree.env)
    assert result.stderr == "acp_notebook demo agent · 🔒 confined to `project/` · network on\n"
    assert result.stdout.startswith("Session title: /help.")
    doctor = cli("doctor", cwd=tree.project, env=tree.env)
    assert "Sandbox: workspace, enforced by Landlock ABI" in doctor.stdout
    assert "(here: confined to `project/` · network on)" in doctor.stdout


def test_a_write_the_agent_reports_failed_under_the_sandbox_says_the_sandbox_refused_it(
    landlock, tree
):
    agent = shlex.join([sys.executable, str(PROBE), json.dumps([["own", str(tree.outside / "x")]])])
    result = cli("run", "go", "--agent", agent, cwd=tree.project, env=tree.env)
    assert "❌ failed: a write was refused, most likely by the sandbox" in result.stdout
    unconfined = cli(
        "run", "go", "--agent", agent, "--sandbox", "off", cwd=tree.project, env=tree.env
    )
    assert "✅ completed" in unconfined.stdout and "refused" not in unconfined.stdout


def test_a_command_the_sandbox_refused_says_so_in_the_transcript(landlock, tree):
    target = tree.outside / "x"
    command = f"/run touch {target}"
    refused = cli("run", command, "--permissions", "allow", cwd=tree.project, env=tree.env)
    assert "[exit code 1: a write was refused, most likely by the sandbox" in refused.stdout
    assert not target.exists()
    allowed = cli(
        "run", command, "--permissions", "allow", "--sandbox", "off", cwd=tree.project, env=tree.env
    )
    assert "[exit code 0]" in allowed.stdout and target.exists()


def test_the_permission_of_a_command_says_whether_it_runs_confined(landlock, tree):
    # The card said what would run, not that the agent had no way out of the folder.
    command = "/run touch x"
    confined = cli("run", command, "--permissions", "allow", cwd=tree.project, env=tree.env)
    assert (
        "Permission: Allow once (chosen by policy allow)\n\n🔒 confined to `project/` · network on"
        in confined.stdout
    )
    for options, env, line in (
        (["--sandbox", "off"], tree.env, "🔓 unconfined (sandbox off) · network on"),
        (
            [],
            {**tree.env, **NOTHING_TO_CONFINE},
            "⚠️ unconfined: this kernel has no Landlock and bubblewrap is not installed",
        ),
    ):
        result = cli("run", command, "--permissions", "allow", *options, cwd=tree.project, env=env)
        assert f"Permission: Allow once (chosen by policy allow)\n\n{line}" in result.stdout


def test_codex_runs_without_its_own_sandbox_only_inside_the_clients(landlock, tree):
    # Codex's own sandbox needs bubblewrap; confined by the client it is told to leave
    # sandboxing to the client, and unconfined it keeps its own.
    bin_dir = tree.home / "bin"
    bin_dir.mkdir()
    codex = bin_dir / "codex-acp"  # stands in for codex-acp: records how it was started
    codex.write_text('#!/bin/sh\nfor a in "$@"; do echo "$a"; done > argv.txt\nexit 3\n')
    codex.chmod(0o755)
    path = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
    for options, env, args in (
        ([], {}, ["-c", 'sandbox_mode="danger-full-access"']),
        (["--sandbox", "off"], {}, []),
        ([], NOTHING_TO_CONFINE, []),
    ):
        run_env = {**tree.env, **env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', path)}"}
        result = cli("run", "hi", "--agent", "codex", *options, cwd=tree.project, env=run_env)
        assert result.returncode != 0
        assert (tree.project / "argv.txt").read_text().splitlines() == args, options
    doctor = cli("doctor", "--agent", "codex", cwd=tree.project, env={**tree.env, "PATH": path})
    assert "Command: " + shlex.join([str(codex), "-c", 'sandbox_mode="danger-full-access"']) in (
        doctor.stdout
    )
    assert "Codex's own sandbox (bubblewrap on Linux) is left to the client's" in doctor.stdout


def test_the_report_cards_agent_runs_confined_and_doctor_report_says_how(landlock, tree, tmp_path):
    # doctor --report started the agent with no sandbox and said nothing of it.
    from acp_notebook.lab.report import report_card

    outside, ran = tree.outside / "card", tmp_path / "ran"  # temp: writable, so the turn ran
    actions = json.dumps([["own", str(outside)], ["own", str(ran)]])
    card = anyio.run(lambda: report_card([sys.executable, str(PROBE), actions], timeout=30))
    assert (
        card.text().splitlines()[1].startswith("  sandbox: workspace, enforced by Landlock ABI")
    ), card.text()
    assert card.to_json()["sandbox"] == card.sandbox
    assert ran.exists(), card.text()
    assert not outside.exists(), "the report card's agent wrote outside its folder"
    # Where nothing can confine it, the same agent writes outside, and doctor says so.
    agent = shlex.join([sys.executable, str(PROBE), actions])
    env = {**tree.env, **NOTHING_TO_CONFINE}
    report = cli("doctor", "--report", "--agent", agent, cwd=tree.project, env=env)
    assert "\n  sandbox: workspace, not enforced: agents run unconfined (" in report.stdout
    assert outside.exists()


def test_without_landlock_bubblewrap_confines_the_agent_instead(tree, tmp_path):
    if not shutil.which("bwrap"):
        skip_or_fail("bubblewrap is not installed (apt-get install -y bubblewrap)")
    outcomes = probe(
        tree, writes([tree.outside, tree.project, tmp_path]), env={NO_LANDLOCK_ENV: "1"}
    )
    for verb in VERBS:
        assert refused(outcomes[f"{verb} {tree.outside / verb}"]), outcomes
        assert outcomes[f"{verb} {tree.project / verb}"] == "ok", outcomes
        assert outcomes[f"{verb} {tmp_path / verb}"] == "ok", outcomes
    doctor = cli("doctor", cwd=tree.project, env={**tree.env, NO_LANDLOCK_ENV: "1"})
    assert (
        "Sandbox: workspace, enforced by bubblewrap (this kernel has no Landlock)" in doctor.stdout
    )


def test_read_only_refuses_the_writes_the_agent_asks_the_client_for_too(tree):
    agent = shlex.join(
        [
            sys.executable,
            str(PROBE.with_name("unasked_actions.py")),
            json.dumps([["write", "{cwd}/x.txt", "x"]]),
        ]
    )
    result = cli(
        "run", "go", "--agent", agent, "--permissions", "allow", "--sandbox", "read-only",
        cwd=tree.project, env=tree.env,
    )  # fmt: skip
    assert "error -32003 Writing " in result.stdout and "the sandbox is read-only" in result.stdout
    assert not (tree.project / "x.txt").exists()
