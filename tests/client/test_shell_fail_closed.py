"""The shell reader fails closed: one row per command it must not read as certain, per
rule decision it must not let through, and per file a command writes.

An adversarial audit of the permission rules found that ``allow execute echo*`` let
``echo ${x:=$(touch M)}`` run ``touch M``, that ``ionice -c 3 rm``, ``timeout --signal KILL
20 rm``, ``env -S 'rm …'``, ``bash -c -- '…'`` and ``/bin/r[m]`` passed both ``deny execute
rm *`` and the wildcard safeguard, that a ``terminal/create`` ``env`` (``BASH_ENV``,
``BASH_FUNC_echo%%``, ``LD_PRELOAD``) was no part of the decision, that ``python3 -c
"…shutil.rmtree(…)"`` was rated no risk, and that ``echo '{}' > nb.ipynb`` wrote a
protected file no rule saw. Every example is a row here, with variants.
"""

from __future__ import annotations

import os

import pytest

from acp_notebook.client.danger import assess_command
from acp_notebook.client.rules import PermissionRules
from acp_notebook.client.shell import command_forms, uncertain
from acp_notebook.client.toolcall import ToolCallState
from acp_notebook.protocol import models as m

CWD = "/work/project"


def run(command: str, env: dict[str, str] | None = None) -> ToolCallState:
    call = ToolCallState("c", 0, kind="execute", raw_input={"command": command})
    call.command_env = env
    return call


def decide(rules: list[str], command: str, env: dict[str, str] | None = None) -> str | None:
    found = PermissionRules.parse(rules).match(run(command, env), CWD)
    return None if found is None else found.action


# ---------------------------------------------------------------------------- uncertain

#: (command, what the doubt says): each is a command the reader must not call certain.
UNCERTAIN = [
    # expansions it does not model
    ("echo ${x:=$(touch M)}", "inside ${…}"),
    ("echo ${x:-`touch M`}", "inside ${…}"),
    ('echo "${x:=$(touch M)}"', "inside ${…}"),
    ("echo ${!name}", "inside ${…}"),
    ("echo ${x/a/b}", "inside ${…}"),
    ("echo ${x", "unclosed ${"),
    ("echo $((1+1))", "arithmetic"),
    ("echo $[1+1]", "arithmetic"),
    ("cat <(touch M)", "process substitution"),
    ("tee >(touch M)", "process substitution"),
    ("echo $'\\x41'", "ANSI-C"),
    # a command name that cannot be read literally
    ("/bin/r[m] -rf x", "command name that the shell expands"),
    ("$(echo rm) -rf x", "command name that the shell expands"),
    ("`echo rm` -rf x", "command name that the shell expands"),
    ('"$X" -rf x', "command name that the shell expands"),
    ("r? -rf x", "command name that the shell expands"),
    ("{rm,-rf,x}", "command name that the shell expands"),
    # wrapper options the reader does not know, or that hand the command to a shell
    ("env -S 'rm -rf x'", "`env -S`"),
    ("env --split-string='rm -rf x'", "`env -S`"),
    ("env -Srm\\ -rf\\ x", "`env -S`"),
    ("env --chdir=/ rm x", "`env -C`"),
    ("env --frobnicate rm x", "`env` with the option `--frobnicate`"),
    ("timeout --wat 5 rm x", "`timeout` with the option `--wat`"),
    ("ionice -p 1 rm x", "`ionice` with the option `-p`"),
    ("nice -z rm x", "`nice` with the option `-z`"),
    ("stdbuf -x 0 rm x", "`stdbuf` with the option `-x`"),
    ("sudo -s rm x", "`sudo -s`"),
    ("sudo -i rm x", "`sudo -i`"),
    ("sudo --frob rm x", "`sudo` with the option `--frob`"),
    ("xargs --frob rm", "`xargs` with the option `--frob`"),
    ("nice -n $N rm x", "an option value that the shell expands"),
    ("timeout $T rm x", "a word that the shell expands"),
    ("env $OPTS rm x", "command name that the shell expands"),
    ("su -c 'rm -rf x'", None),  # read (as sh -c), and rated below: not a doubt by itself
    ("su", "`su` without `-c`"),
    ("watch rm x", "`watch` runs its words"),
    ("doas -s", "`doas -s`"),
    ("env 'BASH_FUNC_echo%%=() { touch M; }' bash -c 'echo hi'", "sets BASH_FUNC_echo%%"),
    ("script -c 'rm -rf x'", "`script` runs a command through a shell"),
    ("printf -v 'a[$(touch M)]' x", "a subscript the shell evaluates"),
    ("read 'a[`touch M`]' <<< 1", "a subscript the shell evaluates"),
    # shell invocations with options it does not model
    ("bash -c -- 'rm -rf x'", "`--` in a shell's options"),
    ("bash -O extglob -c 'rm -rf x'", "`-O extglob`"),
    ("bash +e -c 'rm -rf x'", "turns an option off"),
    ("bash +o posix -c 'rm -rf x'", "turns an option off"),
    ("bash -o vi -c 'rm -rf x'", "`-o vi`"),
    ("bash --rcfile x -c 'ls'", "`--rcfile`"),
    ("sh -y -c ls", "`-y`"),
    ("bash -ic 'ls'", "`-i`"),
    ("bash -k -c 'ls'", "`-k`"),
    ("bash -H -c 'ls'", "`-H`"),
    ("bash -c 'rm $1' _ x", "with expansions"),
    ('bash -c "echo $X"', "with expansions"),
    ("sh -c 'echo `id`'", "with expansions"),
    # code strings and programs read from input
    ("python -c 'print(1)'", "code given inline (`python -c`)"),
    ("python3 -c \"import shutil; shutil.rmtree('x')\"", "`python3 -c`"),
    ("python3.12 -Ic 'x'", "`python3.12 -Ic`"),
    ('node -e \'require("fs").rmSync("x")\'', "`node -e`"),
    ("node --eval 'x'", "`node --eval`"),
    ("perl -e 'unlink q(x)'", "`perl -e`"),
    ("perl -ne 'print'", "`perl -ne`"),
    ("ruby -e 'File.delete(\"x\")'", "`ruby -e`"),
    ("php -r 'unlink(\"x\");'", "`php -r`"),
    ("deno eval 'Deno.removeSync(\"x\")'", "`deno eval`"),
    ("echo rm -rf x | bash", "runs a script from its input"),
    ("bash <<< 'rm -rf x'", "runs a script from its input"),
    ("cat x | python3", "runs a program from its input"),
    ("python3 - <<< 'import os'", "runs a program from its input"),
    # settings that change what runs
    ("PATH=. ls", "sets PATH"),
    ("BASH_ENV=x bash -c ls", "sets BASH_ENV"),
    ("env LD_PRELOAD=x.so ls", "sets LD_PRELOAD"),
    ("sudo PYTHONPATH=. python x.py", "sets PYTHONPATH"),
    ("GIT_SSH_COMMAND='touch M' git fetch", "sets GIT_SSH_COMMAND"),
    ("GIT_CONFIG_COUNT=1 git status", "sets GIT_CONFIG_COUNT"),
    ("git -c core.pager='touch M' log", "`git -c`"),
    # paths and directories the shell expands
    ('echo x > "$OUT"', "a path the shell expands"),
    ("cp x $HOME/.bashrc", "a path the shell expands"),
    ("cp x nb.ipy[n]b", "a path the shell expands"),
    ('cd "$D" && ls', "a directory the shell expands"),
]


@pytest.mark.parametrize(("command", "says"), UNCERTAIN, ids=[c for c, _ in UNCERTAIN])
def test_the_reader_names_what_it_does_not_model(command: str, says: str | None) -> None:
    doubt = uncertain(command)
    if says is None:
        return
    assert doubt is not None and says in doubt, doubt


#: Commands the reader models: each must stay certain, or every rule would ask about it.
CERTAIN = [
    "echo hi",
    "echo ${HOME} $HOME ${#x} ${1} $@",
    'echo "${HOME}"',
    "ionice -c 3 rm x",
    "timeout --signal KILL 20 rm x",
    "timeout --sig=KILL -k 5 20 rm x",
    "stdbuf -i 0 -oL rm x",
    "nice -n 5 rm x",
    "nice -10 rm x",
    "env -i A=1 -u B rm x",
    "sudo -u bob -E rm x",
    "xargs -0 -n 1 -I{} rm {}",
    "nohup rm x",
    "time -p rm x",
    "command -p rm x",
    "exec -a name rm x",
    "bash -lc 'rm x'",
    "bash -euxo pipefail -c 'rm x'",
    "sh -c 'rm x' name arg",
    "bash script.sh",
    "python3 script.py",
    "python -m pytest",
    "git -C sub status",
    "GIT_AUTHOR_NAME=x git commit -m y",
    "cp a b",
    "cd build && make",
    "echo x > out.txt",
    'echo $(echo "a\\")"; echo "x")',
    'echo $(echo "(")',
    "echo $(echo hi # )\n)",
]


@pytest.mark.parametrize("command", CERTAIN)
def test_what_the_reader_models_stays_certain(command: str) -> None:
    assert uncertain(command) is None


# ---------------------------------------------------------------------------- env


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("BASH_ENV", "sets BASH_ENV"),
        ("ENV", "sets ENV"),
        ("BASH_FUNC_echo%%", "sets BASH_FUNC_echo%%"),
        ("LD_PRELOAD", "sets LD_PRELOAD"),
        ("LD_LIBRARY_PATH", "sets LD_LIBRARY_PATH"),
        ("PATH", "sets PATH"),
        ("PYTHONPATH", "sets PYTHONPATH"),
        ("PYTHONSTARTUP", "sets PYTHONSTARTUP"),
        ("NODE_OPTIONS", "sets NODE_OPTIONS"),
        ("PERL5OPT", "sets PERL5OPT"),
        ("RUBYOPT", "sets RUBYOPT"),
        ("GIT_SSH_COMMAND", "can make git run commands"),
        ("GIT_EXTERNAL_DIFF", "can make git run commands"),
        ("GIT_CONFIG_KEY_0", "can make git run commands"),
        ("echo%%", "no variable name"),
    ],
)
def test_an_env_entry_that_changes_what_runs_makes_the_call_uncertain(name: str, says: str) -> None:
    doubt = run("bash -c 'echo hi'", {name: "$(touch M)"}).command_uncertainty
    assert doubt is not None and says in doubt
    assert decide(["allow execute *"], "echo hi", {name: "x"}) == "ask"


def test_a_harmless_env_keeps_the_call_certain() -> None:
    call = run(
        "echo hi", {"LANG": "C.UTF-8", "TERM": "dumb", "GIT_AUTHOR_NAME": "x", "PAGER": "cat"}
    )
    assert uncertain("GIT_PAGER=cat git log") is None
    assert "sets GIT_PAGER" in (uncertain("GIT_PAGER='sh -c x' git log") or "")
    assert call.command_uncertainty is None
    assert decide(["allow execute echo*"], "echo hi", {"LANG": "C"}) == "allow"


def test_a_terminal_request_carries_its_env_and_cwd_into_the_facts() -> None:
    request = m.CreateTerminalRequest.model_validate(
        {
            "sessionId": "s",
            "command": "bash",
            "args": ["-c", "echo hi > out"],
            "env": [{"name": "BASH_ENV", "value": "/tmp/x"}],
            "cwd": "/work/project/sub",
        }
    )
    call = ToolCallState.for_terminal(request)
    assert call.kind == "execute" and call.command == "echo hi > out"
    assert call.command_uncertainty == "sets BASH_ENV"
    assert call.write_targets("/elsewhere") == ["/work/project/sub/out"]


def test_a_terminal_shell_with_options_the_reader_does_not_model_is_read_whole() -> None:
    request = m.CreateTerminalRequest.model_validate(
        {"sessionId": "s", "command": "bash", "args": ["-c", "--", "rm -rf x"]}
    )
    call = ToolCallState.for_terminal(request)
    assert call.command == "bash -c -- 'rm -rf x'"
    assert decide(["deny execute rm *"], call.command or "") == "deny"
    assert "`--`" in (call.command_uncertainty or "")


# ---------------------------------------------------------------------------- rules

#: (rules, command, env, what they decide): every audit example, and variants.
DECISIONS: list[tuple[list[str], str, dict[str, str] | None, str | None]] = [
    # an allow rule never allows what it cannot read
    (["allow execute echo*"], "echo ${x:=$(touch M)}", None, None),
    (["allow execute echo*"], "echo ${x:-`touch M`}", None, None),
    (["allow execute echo*"], "echo ${x:-y}", None, "ask"),
    (["allow execute echo*"], "echo $'\\x41'", None, "ask"),
    (["allow execute echo*"], "echo hi", {"BASH_ENV": "$(touch M)"}, "ask"),
    (["allow execute echo*"], "echo hi", {"BASH_FUNC_echo%%": "() { touch M; }"}, "ask"),
    (["allow execute bash*"], "bash run.sh", {"LD_PRELOAD": "/tmp/x.so"}, "ask"),
    (["allow execute echo*"], "echo hi", {"PATH": "."}, "ask"),
    (["allow execute echo*"], "echo hi", {"NODE_OPTIONS": "--require x"}, "ask"),
    (["allow execute echo*"], "echo hi > nb.ipynb", None, "ask"),
    (["allow execute echo*"], "echo hi", {"LANG": "C"}, "allow"),
    (["allow execute echo*"], 'echo $(echo "a\\")"; touch M; echo "x")', None, None),
    (["allow execute echo*"], "echo $(echo hi # )\ntouch M\n)", None, None),
    (["deny execute touch *"], 'echo $(echo "a\\")"; touch M; echo "x")', None, "deny"),
    (["allow execute python*"], "python3 -c 'import shutil; shutil.rmtree(\"x\")'", None, "ask"),
    # a deny rule sees through wrappers by their own option grammar
    (["deny execute rm *"], "ionice -c 3 rm -rf x", None, "deny"),
    (["deny execute rm *"], "timeout --signal KILL 20 rm -rf x", None, "deny"),
    (["deny execute rm *"], "timeout -s KILL -k 5 20 rm -rf x", None, "deny"),
    (["deny execute rm *"], "stdbuf -i 0 rm -rf x", None, "deny"),
    (["deny execute rm *"], "stdbuf -i0 -oL rm -rf x", None, "deny"),
    (["deny execute rm *"], "env -S 'rm -rf x'", None, "deny"),
    (["deny execute rm *"], "env -u HOME -i rm -rf x", None, "deny"),
    (["deny execute rm *"], "nice -n 19 ionice -c3 nohup rm -rf x", None, "deny"),
    (["deny execute rm *"], "sudo -u bob -- rm -rf x", None, "deny"),
    (["deny execute rm *"], "xargs -0 -P 4 rm -f", None, "deny"),
    (["deny execute rm *"], "bash -c -- 'rm -rf x'", None, "deny"),
    (["deny execute rm *"], "bash -O extglob -c 'rm -rf x'", None, "deny"),
    (["deny execute rm *"], "bash +e -c 'rm -rf x'", None, "deny"),
    (["deny execute rm *"], "su -c 'rm -rf x'", None, "deny"),
    (["deny execute rm *"], "find . -name '*.o' -exec rm {} ;", None, "deny"),
    (["deny execute rm *"], "busybox rm -rf x", None, "deny"),
    (["allow execute printf*"], "printf -v 'a[$(touch M)]' x", None, "ask"),
    # a deny or ask rule that an unreadable command may escape asks
    (["deny execute rm *"], "/bin/r[m] -rf x", None, "ask"),
    (["deny execute rm *"], "$(echo rm) -rf x", None, "ask"),
    (["deny execute rm *"], '"$X" -rf x', None, "ask"),
    (["deny execute rm *"], "echo ${x:=$(touch M)}", None, "ask"),
    (["deny execute rm *"], "env --frobnicate rm -rf x", None, "ask"),
    (["deny execute rm *"], "python3 -c 'import os; os.remove(\"x\")'", None, "ask"),
    (["ask execute git push*", "allow *"], "$(echo git) push", None, "ask"),
    (["deny execute rm *"], "echo hi", {"PATH": "/tmp/evil"}, "ask"),
    (["deny execute rm *"], "ls -la", None, None),
    (["deny execute rm *", "allow execute echo*"], "echo hi", None, "allow"),
    # the safeguard: a wildcard rule never allows a risky command, wrappers looked through
    (["allow execute *"], "ionice -c 3 rm -rf x", None, "ask"),
    (["allow execute *"], "timeout --signal KILL 20 rm -rf x", None, "ask"),
    (["allow execute *"], "stdbuf -i 0 rm -rf x", None, "ask"),
    (["allow execute *"], "env -S 'rm -rf x'", None, "ask"),
    (["allow execute *"], "bash -c -- 'rm -rf x'", None, "ask"),
    (["allow execute *"], "bash -O extglob -c 'rm -rf x'", None, "ask"),
    (["allow execute *"], "bash +e -c 'rm -rf x'", None, "ask"),
    (["allow *"], "python3 -c 'import shutil; shutil.rmtree(\"x\")'", None, "ask"),
    (["allow *"], "echo rm -rf ~ | bash", None, "ask"),
    (["allow *"], "bash <<< 'rm -rf ~'", None, "ask"),
    (["allow execute *"], "ls -la", None, "allow"),
]


@pytest.mark.parametrize(
    ("rules", "command", "env", "decision"),
    DECISIONS,
    ids=[f"{r[0]}: {c} {e or ''}" for r, c, e, _ in DECISIONS],
)
def test_rules_decide_uncertain_commands_by_asking(
    rules: list[str], command: str, env: dict[str, str] | None, decision: str | None
) -> None:
    assert decide(rules, command, env) == decision


def test_the_transcript_says_which_rule_could_not_be_checked() -> None:
    found = PermissionRules.parse(["deny execute rm *"]).match(run("/bin/r[m] -rf x"), CWD)
    assert found is not None and found.safeguard and found.note is not None
    assert "deny execute rm *" in found.note and "cannot read with certainty" in found.note


def test_the_rules_say_that_an_uncertain_command_is_asked() -> None:
    lines = PermissionRules.parse(["deny execute rm *"]).describe("allow")
    assert any("cannot read with certainty" in line for line in lines)


def test_a_deny_rule_sees_the_command_that_env_split_string_runs() -> None:
    assert "rm -rf x" in command_forms("env -S 'rm -rf x'")
    assert "rm -rf x" in command_forms("timeout --signal KILL 20 rm -rf x")


# ---------------------------------------------------------------------------- risk


@pytest.mark.parametrize(
    ("command", "level"),
    [
        ("ionice -c 3 rm -rf x", "danger"),
        ("timeout --signal KILL 20 rm -rf x", "danger"),
        ("stdbuf -i 0 rm -rf x", "danger"),
        ("env -S 'rm -rf x'", "danger"),
        ("bash -c -- 'rm -rf x'", "danger"),
        ("bash -O extglob -c 'rm -rf x'", "danger"),
        ("bash +e -c 'rm -rf x'", "danger"),
        ("python3 -c \"import shutil; shutil.rmtree('x')\"", "danger"),
        ("python3 -c \"import os; os.system('x')\"", "danger"),
        ('node -e \'require("fs").rmSync("x", {recursive: true})\'', "danger"),
        ("perl -e 'unlink glob q(*)'", "danger"),
        ("python -c \"import csv; print(sum(1 for _ in open('sales.csv')))\"", "caution"),
        ("ruby -e 'puts 1'", "caution"),
    ],
)
def test_inline_code_and_wrapped_commands_are_rated(command: str, level: str) -> None:
    rating = assess_command(command)
    assert rating is not None and rating.level == level, rating


# ---------------------------------------------------------------------------- write targets

#: (command, files it writes, from CWD): redirections and the programs that name their
#: outputs, resolved against the command's directory and every literal `cd`. Each file
#: listed must be found; a row that lists none must find none (a copy's destination is
#: also listed joined with each source, in case it is a directory).
WRITES = [
    ("echo '{}' > nb.ipynb", ["nb.ipynb"]),
    ("printf x > .git/hooks/post-checkout", [".git/hooks/post-checkout"]),
    ("> .acp-notebook.json", [".acp-notebook.json"]),
    ("echo x >> a 2> b &> c >| d 2>&1 > /dev/null", ["a", "b", "c", "d"]),
    ("echo x >&out", ["out"]),
    ("cp a.py b.ipynb", ["b.ipynb", "b.ipynb/a.py"]),
    ("cp -r src .git/", [".git", ".git/src"]),
    ("cp -t .git/hooks x", [".git/hooks", ".git/hooks/x"]),
    ("cp --target-directory=d x", ["d", "d/x"]),
    ("mv old.ipynb new.txt", ["new.txt", "new.txt/old.ipynb", "old.ipynb"]),
    ("install -m 755 hook .git/hooks/pre-commit", [".git/hooks/pre-commit"]),
    ("ln -sf /tmp/x .acp-notebook.json", [".acp-notebook.json"]),
    ("rsync -a x/ nb.ipynb", ["nb.ipynb"]),
    ("rsync -a x host:nb.ipynb", []),
    ("echo x | tee -a a.ipynb b", ["a.ipynb", "b"]),
    ("dd if=/dev/zero of=nb.ipynb bs=1", ["nb.ipynb"]),
    ("sed -i 's/a/b/' .git/config", [".git/config"]),
    ("curl -fsSL -o .git/hooks/post-checkout https://x", [".git/hooks/post-checkout"]),
    ("wget -O nb.ipynb https://x", ["nb.ipynb"]),
    ("sort -o nb.ipynb x", ["nb.ipynb"]),
    ("tar -xf a.tar -C .git", [".git"]),
    ("mkdir -p .git/hooks", [".git/hooks"]),
    ("rm -f nb.ipynb", ["nb.ipynb"]),
    ("touch .git/hooks/x", [".git/hooks/x"]),
    ("sudo -u bob tee nb.ipynb", ["nb.ipynb"]),
    ("bash -c 'echo x > nb.ipynb'", ["nb.ipynb"]),
    ("echo $(cp a .git/b)", [".git/b", ".git/b/a"]),
    ("cd .git && echo x > hooks/pre-commit", ["hooks/pre-commit", ".git/hooks/pre-commit"]),
    ("cd /etc; echo x > motd", ["motd", "/etc/motd"]),
    ("echo x > /abs/file", ["/abs/file"]),
    ("echo x > sub/../nb.ipynb", ["nb.ipynb"]),
    ("echo x > $OUT", []),
    ("ls -la; cat a > /dev/null", []),
]


@pytest.mark.parametrize(("command", "written"), WRITES, ids=[c for c, _ in WRITES])
def test_write_targets_are_the_files_a_command_names_as_written(
    command: str, written: list[str]
) -> None:
    expected = [os.path.normpath(os.path.join(CWD, p)) for p in written]
    found = run(command).write_targets(CWD)
    assert [p for p in found if p in expected] == expected
    assert found or not expected
    if not expected:
        assert found == []


def test_write_targets_read_a_leading_tilde_both_ways() -> None:
    found = run("echo x > ~/.bashrc").write_targets(CWD)
    assert found == [f"{CWD}/~/.bashrc", os.path.expanduser("~/.bashrc")]


def test_an_agents_call_is_resolved_from_the_directory_it_names_and_the_sessions() -> None:
    call = ToolCallState(
        "c", 0, kind="execute", raw_input={"command": "echo x > hooks/x", "workdir": ".git"}
    )
    assert call.write_targets(CWD) == [f"{CWD}/.git/hooks/x", f"{CWD}/hooks/x"]


def test_a_call_that_runs_no_command_writes_nothing_and_is_certain() -> None:
    call = ToolCallState("c", 0, kind="edit", raw_input={"path": "x.py"})
    assert call.write_targets(CWD) == [] and call.command_uncertainty is None
