"""Rules against a real shell, with what the reader must fail closed on: commands generated
from expansions (``${x:=$(…)}``, arithmetic, array subscripts, process substitution,
``$'…'``), wrappers with their own options (``timeout --signal KILL 20``, ``ionice -c 3``,
``env -S``, ``bash -c --``) and ``terminal/create`` env entries (``BASH_ENV``,
``BASH_FUNC_echo%%``, ``PATH``). Every command a rule auto-allows is run by bash in a
sandbox with its env, and none may do what the deny rules forbid: create a file (the
payloads ``touch pwned``) or delete the marker (``rm -f marker``).

An audit found ``allow execute echo*`` running ``touch M`` from ``echo ${x:=$(touch M)}``,
and ``BASH_ENV`` in a terminal's env running anything under the same rule.
"""

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

#: An allow rule for echo, and the safeguard's wildcard under deny rules for the payloads.
RULE_SETS = {
    "echo": PermissionRules.parse(["allow execute echo*"]),
    "wildcard": PermissionRules.parse(
        ["deny execute rm *", "deny execute touch *", "allow execute *"]
    ),
}
TOUCH = "touch pwned"
REMOVE = "rm -f marker"
#: Words that hide a payload in an expansion the reader must not take for plain text.
EXPANSIONS = [
    "${x:=$(touch pwned)}",
    "${x:-`touch pwned`}",
    '"${x:-$(rm -f marker)}"',
    "${x/a/$(touch pwned)}",
    "${a[$(touch pwned)]}",
    "$((a[$(touch pwned)]))",
    "$(( $(touch pwned) 1 ))",
    "$[ $(touch pwned) ]",
    "<(touch pwned)",
    ">(touch pwned)",
    "$(touch pwned)",
    "`rm -f marker`",
    "${!x}",
    "$'\\x41'",
    "${#HOME}",
    "${HOME}",
    "$HOME",
    "hi",
    "'a b'",
    "--",
]
#: Wrappers with their own options, and shells started with options.
WRAPPERS = [
    "",
    "env ",
    "env -i ",
    "env -S ",
    "env -u HOME ",
    "timeout 5 ",
    "timeout --signal KILL 20 ",
    "timeout -k 1 5 ",
    "ionice -c 3 ",
    "stdbuf -i 0 ",
    "stdbuf -oL ",
    "nice -n 5 ",
    "nohup ",
    "command ",
    "exec ",
    "time -p ",
    "setsid ",
    "bash -c -- ",
    "bash -O extglob -c ",
    "bash +e -c ",
    "sh -c ",
]
PROGRAMS = [
    "echo",
    "echo -n",
    "printf %s",
    TOUCH,
    REMOVE,
    "/bin/ech[o]",
    "$(echo touch) pwned",
    "printf -v 'a[$(touch pwned)]' x",
    "busybox touch pwned",
    "env 'BASH_FUNC_echo%%=() { touch pwned; }' bash -c echo",
]
SEPARATORS = ["; ", " && ", " | ", "\n"]


def quoted_for(wrapper: str, words: str) -> str:
    # `sh -c` and `env -S` take one word: quote what follows them.
    if wrapper.endswith(("-c ", "-c -- ", "-S ")):
        return "'" + words.replace("'", "'\\''") + "'"
    return words


def mostly(plain: list[str], hostile: list[str]) -> st.SearchStrategy[str]:
    """Three draws in four from ``plain``: most commands are auto-allowed and run, and
    each carries a hostile word often enough to be tried."""
    return st.one_of(*[st.sampled_from(plain)] * 3, st.sampled_from(hostile))


def split(words: list[str], hostile: list[str]) -> tuple[list[str], list[str]]:
    return [w for w in words if w not in hostile], hostile


HOSTILE_WRAPPERS = ["env -S ", "bash -c -- ", "bash -O extglob -c ", "bash +e -c "]
PLAIN_EXPANSIONS = ["${#HOME}", "${HOME}", "$HOME", "hi", "'a b'", "--"]
segment = st.builds(
    lambda wrapper, program, args: wrapper + quoted_for(wrapper, " ".join([program, *args])),
    st.one_of(st.just(""), st.just(""), mostly(*split(WRAPPERS, HOSTILE_WRAPPERS))),
    mostly(["echo", "echo -n", "printf %s"], PROGRAMS[3:]),
    st.lists(
        mostly(*split(EXPANSIONS, [e for e in EXPANSIONS if e not in PLAIN_EXPANSIONS])), max_size=3
    ),
)
commands = st.builds(
    lambda first, rest: first + "".join(sep + seg for sep, seg in rest),
    segment,
    st.lists(st.tuples(st.sampled_from(SEPARATORS), segment), max_size=2),
)


def env_entries(payloads: Path) -> st.SearchStrategy[dict[str, str]]:
    """Entries that change what runs (each reaches the payload), and harmless ones."""
    entries = {
        "BASH_ENV": str(payloads / "bash_env.sh"),
        "ENV": str(payloads / "bash_env.sh"),
        "BASH_FUNC_echo%%": "() { touch pwned; }",
        "PATH": f"{payloads}:/usr/bin:/bin",
        "PYTHONPATH": str(payloads),
        "LANG": "C",
        "FOO": "$(touch pwned)",
    }
    chosen = st.dictionaries(st.sampled_from(sorted(entries)), st.just(""), max_size=2)
    return st.one_of(st.just({}), st.just({}), chosen).map(
        lambda names: {name: entries[name] for name in names}
    )


@pytest.fixture(scope="module")
def payloads(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Outside every sandbox: a BASH_ENV script and a fake `echo` on a PATH, both touching."""
    folder = tmp_path_factory.mktemp("payloads")
    (folder / "bash_env.sh").write_text("touch pwned\n")
    fake = folder / "echo"
    fake.write_text("#!/bin/sh\ntouch pwned\n")
    fake.chmod(0o755)
    (folder / "sitecustomize.py").write_text("open('pwned', 'w').close()\n")
    return folder


def auto_allowed(rules: PermissionRules, command: str, env: dict[str, str]) -> bool:
    call = ToolCallState("c", 0, kind="execute", raw_input={"command": command})
    call.command_env = env
    found = rules.match(call, "/nonexistent")
    return found is not None and found.action == "allow"


def run_in_sandbox(command: str, env: dict[str, str], sandbox: Path) -> list[str]:
    """What running ``command`` with ``env`` changed in a fresh sandbox."""
    shutil.rmtree(sandbox, ignore_errors=True)
    (sandbox / "home").mkdir(parents=True)
    (sandbox / "marker").write_text("keep\n")
    base = {"HOME": str(sandbox / "home"), "PATH": "/usr/bin:/bin", "LC_ALL": "C"}
    assert BASH is not None
    subprocess.run(
        [BASH, "--noprofile", "--norc", "-c", command],
        cwd=sandbox,
        env={**base, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=20,
        check=False,
    )
    changed = sorted(
        os.path.relpath(os.path.join(d, f), sandbox)
        for d, _, files in os.walk(sandbox)
        for f in files
        if f != "marker"
    )
    marker = sandbox / "marker"
    if not marker.exists() or marker.read_text() != "keep\n":
        changed.append("marker removed")
    return changed


@given(data=st.data(), command=commands, rules=st.sampled_from(sorted(RULE_SETS)))
def test_no_auto_allowed_command_does_what_a_deny_rule_forbids(
    data: st.DataObject,
    command: str,
    rules: str,
    payloads: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    env = data.draw(env_entries(payloads), label="env")
    if not auto_allowed(RULE_SETS[rules], command, env):
        return
    note(f"auto-allowed by the {rules} rules: {command!r} with env {env!r}")
    sandbox = tmp_path_factory.mktemp("sandbox")
    assert run_in_sandbox(command, env, sandbox) == [], (command, env)


def test_the_sandbox_sees_each_payload(payloads: Path, tmp_path: Path) -> None:
    # Not vacuous: every payload the grammar hides does what the test looks for when run,
    # and plain echoes are still auto-allowed.
    for command, env in [
        ("echo ${x:=$(touch pwned)}", {}),
        ("echo ${a[$(touch pwned)]}", {}),
        ("echo hi", {"BASH_ENV": str(payloads / "bash_env.sh")}),
        ("bash -c 'echo hi'", {"BASH_FUNC_echo%%": "() { touch pwned; }"}),
        ("env echo hi", {"PATH": f"{payloads}:/usr/bin:/bin"}),
        ("timeout --signal KILL 20 rm -f marker", {}),
        ("bash -c -- 'touch pwned'", {}),
        ("env -S 'touch pwned'", {}),
        ("printf -v 'a[$(touch pwned)]' x", {}),
        ("env 'BASH_FUNC_echo%%=() { touch pwned; }' bash -c echo", {}),
    ]:
        assert run_in_sandbox(command, env, tmp_path / "box") != [], (command, env)
        assert not auto_allowed(RULE_SETS["echo"], command, env), command
        assert not auto_allowed(RULE_SETS["wildcard"], command, env), command
    assert auto_allowed(RULE_SETS["echo"], "echo hi ${HOME} | echo -n 'a b'", {"LANG": "C"})
    assert auto_allowed(RULE_SETS["wildcard"], "timeout --signal KILL 20 echo hi", {})
