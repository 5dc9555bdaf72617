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
    uncertain,
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


def test_only_an_unquoted_hash_at_a_word_start_is_a_comment() -> None:
    assert [[c.argv for c in p] for p in pipelines("ls; '#'; rm -rf ~")] == [
        [["ls"]],
        [["#"]],
        [["rm", "-rf", "~"]],
    ]
    assert [[c.argv for c in p] for p in pipelines("echo a#b # note\nls")] == [
        [["echo", "a#b"]],
        [["ls"]],
    ]


def test_descriptor_numbers_belong_to_their_redirection() -> None:
    (pipeline,) = pipelines("pytest -q 2>&1 >/dev/null")
    assert pipeline[0].argv == ["pytest", "-q"]
    assert pipeline[0].writes == ["1", "/dev/null"]


def test_nested_substitutions_are_read_level_by_level() -> None:
    assert "rm -rf x" in command_parts("echo $(echo $(rm -rf x))")
    assert "rm -rf x" in command_parts('echo "a $(rm -rf x) b"')


def test_uncertain_names_what_the_reader_cannot_follow() -> None:
    assert uncertain("pytest -q 2>&1") is None
    assert uncertain("git add -A && git status") is None
    for command, says in [
        ("pytest; '#'; rm", "quoted `#`"),
        ("echo $'\\x41'", "ANSI-C"),
        ("cat <<EOF\nx\nEOF", "heredoc"),
        ("{ ls; }", "keyword `{`"),
        ("f() { ls; }", "function"),
        ("echo $((1+1))", "arithmetic"),
        ("diff <(ls) <(ls -a)", "process substitution"),
        ('pytest > "$OUT"', "a path the shell expands"),
        ("PATH=. ls", "sets PATH"),
        ("env LD_PRELOAD=x.so ls", "sets LD_PRELOAD"),
        ("eval ls", "`eval`"),
        ("ls 'x", "unclosed quote"),
        ("echo $(ls", "unbalanced"),
        ("$X", "expands"),
        ("ls\rrm", "control characters"),
    ]:
        doubt = uncertain(command)
        assert doubt is not None and says in doubt, (command, doubt)
