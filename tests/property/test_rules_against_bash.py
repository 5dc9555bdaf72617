"""The rule engine against a real shell: commands generated from a grammar of words,
separators, quotes, comments, redirections and wrappers; every one that an allow rule
auto-allows is run by bash in a sandbox (its own HOME and directory, a marker file), and
none may do what the rule does not allow — delete the marker or create a file."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from acp_notebook.client.rules import PermissionRules
from acp_notebook.client.toolcall import ToolCallState

BASH = shutil.which("bash")
pytestmark = pytest.mark.skipif(BASH is None, reason="bash is not installed")

#: What the allow rule allows: echoing. Anything else these words do is forbidden.
RULES = PermissionRules.parse(["allow execute echo*"])
FORBIDDEN = [
    "rm -f marker",
    "rm marker",
    "/bin/rm -f marker",
    "touch pwned",
    "env touch pwned",
    "command rm -f marker",
    "cp marker pwned",
    "mv marker pwned",
    "bash -c 'rm -f marker'",
    'sh -c "touch pwned"',
    "eval 'touch pwned'",
    "$(touch pwned)",
    "`touch pwned`",
    "xargs rm -f <<< marker",
]
HARMLESS = ["echo", "hi", "-n", "a b", "'x y'", '"z"', "$HOME", "*", "\\n", "--", "$'q'", "{a,b}"]
QUOTES = [
    "'#'",
    '"#"',
    "\\#",
    "#",
    "$'#'",
    "$'\\x23'",
    "'",
    '"',
    "$'\\''",
    "\\",
    "${IFS}",
    "$'\\n'",
    "\\\n",
]
SEPARATORS = [" ", "; ", " && ", " || ", " | ", "\n", " & ", ";", "|", "\r", " ;; "]
REDIRECTIONS = [
    "",
    " > pwned",
    " >> pwned",
    " 2> pwned",
    " &> pwned",
    " > /dev/null",
    " 2>&1",
    " >| pwned",
    " <marker",
]
WRAPPERS = ["", "env ", "command ", "nice ", "exec ", "PATH=. ", "IFS=/ ", "sudo -n "]

piece = st.one_of(
    st.sampled_from(FORBIDDEN),
    st.sampled_from(HARMLESS),
    st.sampled_from(QUOTES),
)
segment = st.builds(
    lambda wrapper, words, redirect: wrapper + " ".join(words) + redirect,
    st.sampled_from(WRAPPERS),
    st.lists(piece, min_size=1, max_size=4),
    st.sampled_from(REDIRECTIONS),
)
commands = st.builds(
    lambda first, rest: "echo " + first + "".join(sep + seg for sep, seg in rest),
    segment,
    st.lists(st.tuples(st.sampled_from(SEPARATORS), segment), max_size=4),
)


def allowed(command: str) -> bool:
    call = ToolCallState("c", 0, kind="execute", raw_input={"command": command})
    found = RULES.match(call, "/nonexistent")
    return found is not None and found.action == "allow"


def run_in_sandbox(command: str, sandbox: Path) -> None:
    shutil.rmtree(sandbox, ignore_errors=True)
    (sandbox / "home").mkdir(parents=True)
    (sandbox / "marker").write_text("keep\n")
    env = {"HOME": str(sandbox / "home"), "PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    assert BASH is not None
    subprocess.run(
        [BASH, "--noprofile", "--norc", "-c", command],
        cwd=sandbox,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=10,
        check=False,
    )


def created(sandbox: Path) -> list[str]:
    return sorted(
        os.path.relpath(os.path.join(d, f), sandbox)
        for d, _, files in os.walk(sandbox)
        for f in files
        if f != "marker"
    )


@given(command=commands)
def test_no_auto_allowed_command_does_what_the_rule_forbids(
    command: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if not allowed(command):
        return
    note(f"auto-allowed: {command!r}")
    sandbox = tmp_path_factory.mktemp("sandbox")
    run_in_sandbox(command, sandbox)
    assert (sandbox / "marker").read_text() == "keep\n", command
    assert created(sandbox) == [], command


def test_the_grammar_reaches_auto_allowed_commands() -> None:
    # Not vacuous: the rule does allow plain echoes, and bash runs them in the sandbox.
    assert allowed("echo hi 'a b' > /dev/null 2>&1")
    assert not allowed("echo hi; '#'; rm -f marker")
