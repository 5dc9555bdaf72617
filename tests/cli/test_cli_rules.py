"""``acp-notebook run --rule RULE``: permission rules from the command line."""

from __future__ import annotations

from pathlib import Path

from acp_notebook.cli import EXIT_USAGE

from .test_cli import cli, one_error_line


def test_a_rule_allows_a_command_with_no_terminal_to_ask(tmp_path: Path) -> None:
    # stdin is not a TTY and the policy is ask: without the rule this would be rejected.
    result = cli("run", "/run echo hi", "--rule", "allow execute echo*", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "Permission: Allow once (chosen by rule `allow execute echo*`)" in result.stdout
    assert "$ sh -c 'echo hi'\nhi\n[exit code 0]" in result.stdout


def test_rules_are_tried_in_order_before_the_policy(tmp_path: Path) -> None:
    target = tmp_path / "module.py"
    target.write_bytes(b"def f(x):\n    return x\n")
    result = cli(
        "run",
        "/edit module.py",
        "--permissions",
        "allow",
        "--rule",
        "deny edit *.py",
        "--rule",
        "allow edit",
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert target.read_bytes() == b"def f(x):\n    return x\n"
    assert "Permission: Reject (chosen by rule `deny edit *.py`)" in result.stdout


def test_a_wildcard_rule_does_not_run_rm_rf(tmp_path: Path) -> None:
    victim = tmp_path / "x"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep\n")
    result = cli("run", "/run rm -rf x", "--rule", "allow *", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert (victim / "keep.txt").exists()
    assert (
        "Permission: Reject (chosen by safeguard: no UI to ask) — rule `allow *` does not "
        "cover risky commands · ⚠️ Risky: deletes files recursively"
    ) in result.stdout


def test_a_malformed_rule_is_a_usage_error(tmp_path: Path) -> None:
    result = cli("run", "hello", "--rule", "permit read", cwd=tmp_path)
    assert result.returncode == EXIT_USAGE
    line = one_error_line(result)
    assert "must start with allow, deny or ask, not `permit`" in line
