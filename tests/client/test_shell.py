"""Reading shell command lines: simple commands of pipelines and chains, substitutions,
shell payloads, wrappers looked through, and what a rule must cover."""

from __future__ import annotations

from acp_notebook.client.shell import (
    command_parts,
    flags,
    pipelines,
    positional,
    shell_payload,
    substitutions,
    unwrap,
)


def test_command_parts_are_what_a_rule_must_cover() -> None:
    assert command_parts("pytest -q") == ["pytest -q"]
    assert command_parts("pytest -q && rm -rf x | tee log; echo done") == [
        "pytest -q",
        "rm -rf x",
        "tee log",
        "echo done",
    ]
    parts = command_parts("echo $(whoami) && bash -c 'ls; pwd'")
    assert "whoami" in parts and "ls" in parts and "pwd" in parts


def test_pipelines_split_chains_and_keep_what_redirections_write() -> None:
    found = pipelines("make | tee build.log > /tmp/out && echo ok\n# a comment\nls")
    assert [[cmd.argv for cmd in pipeline] for pipeline in found] == [
        [["make"], ["tee", "build.log"]],
        [["echo", "ok"]],
        [["ls"]],
    ]
    assert found[0][1].writes == ["/tmp/out"]
    assert found[0][1].text == "tee build.log > /tmp/out"


def test_substitutions_and_shell_payloads_are_commands_of_their_own() -> None:
    assert substitutions("echo $(date) `whoami` <(ls)") == ["date", "whoami", "ls"]
    assert shell_payload(["bash", "-lc", "make test"]) == "make test"
    assert shell_payload(["eval", "rm", "-rf", "x"]) == "rm -rf x"
    assert shell_payload(["bash", "script.sh"]) is None


def test_wrappers_are_looked_through_and_root_is_noticed() -> None:
    assert unwrap(["sudo", "-u", "bob", "rm", "-rf", "x"]).argv == ["rm", "-rf", "x"]
    assert unwrap(["sudo", "ls"]).as_root
    assert unwrap(["FOO=1", "nice", "-n", "5", "timeout", "10", "make"]).argv == ["make"]
    su = unwrap(["su", "-c", "make install"])
    assert su.argv == ["sh", "-c", "make install"] and su.as_root
    assert not unwrap(["env", "A=1", "pytest"]).as_root


def test_flags_and_positional_arguments() -> None:
    assert flags(["rm", "-rf", "--force=yes", "--", "-x"]) == ({"r", "f"}, {"--force"})
    assert positional(["cp", "-r", "a", "--", "-b"]) == ["a", "-b"]


def test_an_unclosed_quote_is_read_word_by_word() -> None:
    (pipeline,) = pipelines("rm -rf 'build")
    assert pipeline[0].argv[:2] == ["rm", "-rf"]
