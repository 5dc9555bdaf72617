"""Permission rules in a real kernel: ``%config AcpMagics.permission_rules``, applied to
new and existing sessions, listed by ``%acp --rules``, validated when set, and the
danger safeguard in a headless turn."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_notebook.notebook.load.magics import AcpMagics

from .conftest import UTILS_PY, Kernel, rel

pytestmark = pytest.mark.kernel


def set_rules(kernel: Kernel, rules: list[str]) -> str:
    """Set the rules; what the cell printed on stderr."""
    execution = kernel.execute(
        f"%config AcpMagics.permission_rules = {rules!r}", allow_stdin=False, until="idle"
    )
    assert not execution.errors, execution.describe()
    return execution.stderr


@pytest.fixture(autouse=True)
def _no_rules_left(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    if "kernel" in request.fixturenames:
        set_rules(request.getfixturevalue("kernel"), [])


def test_a_rule_allows_a_headless_edit_in_an_existing_session(
    kernel: Kernel, utils_py: Path
) -> None:
    # Without rules, headless `ask` rejects (and this creates the default session).
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", allow_stdin=False, until="final")
    assert "Permission: Reject (chosen by policy ask without a UI)" in turn.plain, turn.describe()
    assert utils_py.read_text() == UTILS_PY

    assert set_rules(kernel, ["allow edit *.py"]) == ""
    turn = kernel.execute(f"%acp /edit {rel(kernel, utils_py)}", allow_stdin=False, until="final")
    assert "Permission: Allow once (chosen by rule `allow edit *.py`)" in turn.plain, (
        turn.describe()
    )
    assert utils_py.read_text() != UTILS_PY
    assert not turn.errors


def test_rules_lists_them_in_order(kernel: Kernel) -> None:
    assert "No permission rules" in kernel.text("%acp --rules")
    set_rules(kernel, ["deny execute rm *", "allow edit *.py", "allow *"])
    out = kernel.text("%acp --rules")
    lines = out.splitlines()
    assert lines[0] == "Permission rules (the first that matches decides):"
    assert lines[1].startswith("  1. deny execute rm * — denies commands")
    assert lines[2].startswith("  2. allow edit *.py — allows `edit` tool calls")
    assert lines[3].startswith("  3. allow * — allows any tool call, except risky commands")
    assert "When none matches, the session's policy (ask) decides." in out
    assert "Safeguard:" in out


def test_a_malformed_rule_is_refused_in_one_sentence(kernel: Kernel) -> None:
    set_rules(kernel, ["allow read"])
    stderr = set_rules(kernel, ["allow read", "allow reed"])
    assert stderr.strip().splitlines() == [
        "acp_notebook: permission rules not changed: The permission rule `allow reed` names an "
        "unknown tool kind `reed`; use one of read, edit, delete, move, search, execute, think, "
        "fetch, switch_mode, other, notebook, or * for any."
    ]
    assert "1. allow read" in kernel.text("%acp --rules")
    assert "2." not in kernel.text("%acp --rules")


def test_a_wildcard_rule_does_not_run_a_risky_command(kernel: Kernel, workdir: Path) -> None:
    victim = workdir / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep\n")
    set_rules(kernel, ["allow *"])
    turn = kernel.execute(
        f"%acp -p allow /run rm -rf {rel(kernel, victim)}", allow_stdin=False, until="final"
    )
    assert (victim / "keep.txt").exists(), "the command ran"
    assert (
        "Permission: Reject (chosen by safeguard: no UI to ask) — rule `allow *` does not "
        "cover risky commands · ⚠️ Risky: deletes files recursively"
    ) in turn.plain, turn.describe()
    # The same rule runs a harmless command.
    turn = kernel.execute("%acp /run echo fine", allow_stdin=False, until="final")
    assert "Permission: Allow once (chosen by rule `allow *`)" in turn.plain, turn.describe()
    assert "fine\n[exit code 0]" in turn.plain


# ---------------------------------------------------------------------- without a kernel


def test_the_environment_sets_the_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ACP_NOTEBOOK_PERMISSION_RULES", "allow read; deny execute rm *;")
    magics = AcpMagics(shell=None)
    assert magics.permission_rules == ["allow read", "deny execute rm *"]
    shared = magics.agents.permission_rules
    assert shared.texts == ["allow read", "deny execute rm *"]
    runtime = magics.agents.runtime("demo")  # not started: only its settings
    assert runtime.rules is shared
    # Changing the trait changes the one shared object in place: no copies to sync.
    magics.permission_rules = ["allow search"]
    assert runtime.rules is shared and shared.texts == ["allow search"]
    magics.permission_rules = []
    assert runtime.rules is shared and not shared

    monkeypatch.setenv("ACP_NOTEBOOK_PERMISSION_RULES", "allow nope")
    assert AcpMagics(shell=None).permission_rules == []
    err = capsys.readouterr().err
    assert "acp_notebook: ignoring ACP_NOTEBOOK_PERMISSION_RULES: The permission rule " in err


def test_the_open_notebook_is_never_written_as_a_file(fresh_kernel: Kernel) -> None:
    # VS Code tells the kernel its notebook through __vsc_ipynb_file__ (Jupyter Server
    # through JPY_SESSION_NAME); the session opened after that refuses to write it,
    # even under the allow policy, and the agent is pointed to the notebook tools.
    notebook = fresh_kernel.cwd / "open.ipynb"
    notebook.write_text('{"cells": []}')
    fresh_kernel.text(f"__vsc_ipynb_file__ = {str(notebook)!r}")
    turn = fresh_kernel.execute(
        "%acp -p allow /write open.ipynb overwritten", allow_stdin=False, until="final"
    )
    assert "the notebook open in Jupyter" in turn.plain, turn.describe()
    assert notebook.read_text() == '{"cells": []}'

    other = fresh_kernel.execute(
        "%acp -p allow /write other.txt written", allow_stdin=False, until="final"
    )
    assert (fresh_kernel.cwd / "other.txt").read_text().startswith("written"), other.describe()
