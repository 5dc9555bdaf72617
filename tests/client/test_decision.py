"""The one permission decision as a table: one row per case, each the facts of a call, the
turn, the rules, the grants and who can answer, and what ``decide`` says. Rows marked with
a finding are the audit's cases that broke while the decision was made in three places."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from acp_notebook.client.decision import Grant, Question, Turn, decide
from acp_notebook.client.permission_request import Origin
from acp_notebook.client.rules import PermissionRules
from acp_notebook.client.toolcall import ToolCallState
from acp_notebook.protocol import models as m

CWD = "/work/proj"
IN_ASK, IN_ALLOW, IN_DENY = Turn(3, "ask"), Turn(3, "allow"), Turn(3, "deny")


def write(path: str = f"{CWD}/notes.txt") -> ToolCallState:
    call = ToolCallState("", None, kind="edit", raw_input={"path": path})
    call.locations = [m.ToolCallLocation(path=path)]
    return call


def command(text: str) -> ToolCallState:
    return ToolCallState("", None, kind="execute", raw_input={"command": text})


def tool(name: str, kind: str = "execute", paths: tuple[str, ...] = ()) -> ToolCallState:
    call = ToolCallState("", None, title=name, kind=kind)
    call.locations = [m.ToolCallLocation(path=p) for p in paths]
    call.notebook_tool = name
    return call


def grant(
    names: set[str],
    *,
    kind: str = "execute",
    turn: int | None = 3,
    allowed: bool = True,
    always: bool = False,
    by_user: bool = True,
    risk: int = 0,
) -> Grant:
    return Grant(kind, turn, allowed, always, by_user, risk, frozenset(names))


@dataclass(frozen=True)
class Row:
    id: str
    call: ToolCallState
    origin: Origin
    expected: str  # "allow", "deny", "ask"
    says: str = ""  # a fragment of the reason (deny, ask) or of who allowed
    turn: Turn | None = IN_ASK
    rules: tuple[str, ...] = ()
    grants: tuple[Grant, ...] = ()
    can_ask: bool = True
    names: frozenset[str] = frozenset()
    protected: str | None = None
    open_notebook: bool = False
    risk: int = 0
    read_only: bool = False
    uncertainty: str | None = None
    extra: dict[str, str] = field(default_factory=dict)


ECHO = frozenset({"command:echo hello"})
PIP = frozenset({"command:pip install rich"})
NOTES = frozenset({f"path:{CWD}/notes.txt"})

ROWS = [
    # Finding 1: a policy lasts for its turn; between turns nothing is served.
    Row("no turn: a write under allow", write(), "write", "deny", "no turn is running", turn=None),
    Row("no turn: a command", command("echo hi"), "command", "deny", "no turn", turn=None),
    Row("no turn: run_code", tool("run_code"), "tool", "deny", "no turn", turn=None),
    Row("no turn: the agent asks", command("ls"), "request", "deny", "no turn", turn=None),
    Row(
        "no turn: a rule does not help",
        write(),
        "write",
        "deny",
        "no turn",
        turn=None,
        rules=("allow edit *",),
    ),
    # The turn's policy.
    Row("policy allow writes", write(), "write", "allow", "policy allow", turn=IN_ALLOW),
    Row("policy deny refuses", write(), "write", "deny", "policy is deny", turn=IN_DENY),
    Row("policy ask asks a person", write(), "write", "ask"),
    Row("policy ask, headless", write(), "write", "deny", "no one can be asked", can_ask=False),
    Row(
        "policy ask, the agent asks, headless",
        command("ls"),
        "request",
        "deny",
        "no one can be asked",
        can_ask=False,
    ),
    # Rules before the policy.
    Row(
        "a deny rule beats allow",
        command("rm -f x"),
        "command",
        "deny",
        "`deny execute rm *`",
        turn=IN_ALLOW,
        rules=("deny execute rm *",),
    ),
    Row(
        "an allow rule beats deny",
        command("echo hi"),
        "command",
        "allow",
        "rule",
        turn=IN_DENY,
        rules=("allow execute echo *",),
    ),
    Row(
        "an ask rule asks under allow",
        command("git push"),
        "request",
        "ask",
        "git push",
        turn=IN_ALLOW,
        rules=("ask execute git push*",),
    ),
    Row(
        "a wildcard rule never allows a risky command",
        command("rm -rf build"),
        "request",
        "ask",
        "risky",
        rules=("allow *",),
    ),
    # Finding 2 and 7 (decision side): what the reader cannot read is not allowed unseen.
    Row(
        "an allow rule does not cover an uncertain command",
        command("echo hi"),
        "command",
        "ask",
        "cannot read",
        rules=("allow execute echo *",),
        uncertainty="an expansion inside ${…}",
    ),
    Row(
        "a grant does not cover an uncertain command",
        command("echo hello"),
        "command",
        "ask",
        grants=(grant(set(ECHO), always=True, turn=1),),
        names=ECHO,
        uncertainty="a wrapper option it does not know",
    ),
    # Protected paths, fs/* and a command's write targets alike (finding 8).
    Row(
        "the open notebook is never written",
        write(f"{CWD}/a.ipynb"),
        "write",
        "deny",
        "notebook open in Jupyter",
        turn=IN_ALLOW,
        rules=("allow edit *",),
        open_notebook=True,
        protected="a notebook",
    ),
    Row(
        "a rule naming the open notebook lifts it",
        write(f"{CWD}/a.ipynb"),
        "write",
        "allow",
        "rule",
        turn=IN_ALLOW,
        rules=("allow edit a.ipynb",),
        open_notebook=True,
        protected="a notebook",
    ),
    Row(
        "a command writing the open notebook",
        command("echo {} > a.ipynb"),
        "command",
        "deny",
        "notebook open in Jupyter",
        turn=IN_ALLOW,
        open_notebook=True,
        protected="a notebook",
    ),
    Row(
        ".git under allow asks",
        write(f"{CWD}/.git/config"),
        "write",
        "ask",
        "`.git/`",
        turn=IN_ALLOW,
        rules=("allow *",),
        protected="inside `.git/`",
    ),
    Row(
        ".git under allow, headless",
        write(f"{CWD}/.git/config"),
        "write",
        "deny",
        "no one can be asked",
        turn=IN_ALLOW,
        can_ask=False,
        protected="inside `.git/`",
    ),
    Row(
        ".git under deny is refused, not asked",
        write(f"{CWD}/.git/config"),
        "write",
        "deny",
        "policy is deny",
        turn=IN_DENY,
        protected="inside `.git/`",
    ),
    Row(
        "a command writing .git/hooks asks under allow",
        command("printf x > .git/hooks/post-checkout"),
        "command",
        "ask",
        "`.git/`",
        turn=IN_ALLOW,
        protected="inside `.git/`",
    ),
    Row(
        "a command writing the settings file, headless",
        command("echo {} > .acp-notebook.json"),
        "command",
        "deny",
        "settings",
        turn=IN_ALLOW,
        can_ask=False,
        protected="the notebook's acp_notebook settings",
    ),
    Row(
        "a rule naming a protected path lifts it",
        write(f"{CWD}/.git/info/exclude"),
        "write",
        "allow",
        "rule",
        turn=IN_ALLOW,
        rules=("allow edit .git/info/exclude",),
        protected="inside `.git/`",
    ),
    # This turn's answers bind the agent's later writes and commands.
    Row(
        "a rejected request binds",
        write(),
        "write",
        "deny",
        "rejected it in this turn",
        turn=IN_ALLOW,
        grants=(grant(set(NOTES), kind="edit", allowed=False),),
        names=NOTES,
    ),
    Row(
        "an allowed request covers",
        write(),
        "write",
        "allow",
        "the user",
        turn=IN_DENY,
        grants=(grant(set(NOTES), kind="edit"),),
        names=NOTES,
    ),
    Row(
        "the user's allow covers a protected path",
        write(f"{CWD}/.git/x"),
        "write",
        "allow",
        "the user",
        grants=(grant({f"path:{CWD}/.git/x"}, kind="edit"),),
        names=frozenset({f"path:{CWD}/.git/x"}),
        protected="inside `.git/`",
    ),
    Row(
        "a policy's allow does not cover a protected path",
        write(f"{CWD}/.git/x"),
        "write",
        "ask",
        "`.git/`",
        turn=IN_ALLOW,
        grants=(grant({f"path:{CWD}/.git/x"}, kind="edit", by_user=False),),
        names=frozenset({f"path:{CWD}/.git/x"}),
        protected="inside `.git/`",
    ),
    Row(
        "an answer of another turn covers nothing",
        write(),
        "write",
        "ask",
        grants=(grant(set(NOTES), kind="edit", turn=2),),
        names=NOTES,
    ),
    # "Allow always": the same kind, the same or a lower risk; never wider.
    Row(
        "always covers the same risk",
        command("echo hello"),
        "command",
        "allow",
        "always",
        grants=(grant(set(ECHO), always=True, turn=1),),
        names=ECHO,
    ),
    Row(
        "always never widens to a riskier call",
        command("pip install rich"),
        "command",
        "deny",
        "no one can be asked",
        can_ask=False,
        grants=(grant(set(ECHO), always=True, turn=1),),
        names=PIP,
        risk=1,
    ),
    Row(
        "always for a riskier call covers a lower one",
        command("echo hello"),
        "command",
        "allow",
        "always",
        grants=(grant(set(PIP), always=True, turn=1, risk=1),),
        names=ECHO,
    ),
    Row(
        "always of another kind covers nothing",
        command("echo hello"),
        "command",
        "ask",
        grants=(grant(set(NOTES), kind="edit", always=True, turn=1),),
        names=ECHO,
    ),
    Row(
        "reject always refuses whatever the risk",
        command("pip install rich"),
        "command",
        "deny",
        "rejected it for this session",
        turn=IN_ALLOW,
        grants=(grant(set(ECHO), always=True, allowed=False, turn=1),),
        names=PIP,
        risk=1,
    ),
    # Finding 9: the agent's own question about this session's notebook tool.
    Row(
        "the agent asks about a read-only tool, headless",
        tool("list_variables", "read"),
        "request",
        "allow",
        "read-only",
        can_ask=False,
        read_only=True,
    ),
    Row(
        "the agent asks about run_code: its own approval asks",
        tool("run_code"),
        "request",
        "allow",
        "own approval",
    ),
    Row(
        "a deny notebook rule denies the agent's question",
        tool("run_code"),
        "request",
        "deny",
        "`deny notebook run_code`",
        rules=("deny notebook run_code",),
    ),
    Row(
        "under deny the agent's question about run_code is denied",
        tool("run_code"),
        "request",
        "deny",
        "policy is deny",
        turn=IN_DENY,
    ),
    Row(
        "an allow notebook rule under deny lets it through",
        tool("run_code"),
        "request",
        "allow",
        "own approval",
        turn=IN_DENY,
        rules=("allow notebook run_code",),
    ),
    # The client's own notebook tools.
    Row(
        "allow notebook run_code",
        tool("run_code"),
        "tool",
        "allow",
        "rule",
        rules=("allow notebook run_code",),
        can_ask=False,
    ),
    Row("run_code under ask", tool("run_code"), "tool", "ask"),
    Row(
        "run_code headless", tool("run_code"), "tool", "deny", "no one can be asked", can_ask=False
    ),
    Row(
        "a cell edit is not a protected write",
        tool("edit_cell", "edit", (f"{CWD}/a.ipynb",)),
        "tool",
        "allow",
        "policy allow",
        turn=IN_ALLOW,
        protected="a notebook",
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[row.id for row in ROWS])
def test_the_decision_table(row: Row) -> None:
    question = Question(
        row.call,
        row.origin,
        names=row.names,
        protected=row.protected,
        open_notebook=row.open_notebook,
        risk=row.risk,
        read_only=row.read_only,
        uncertainty=row.uncertainty,
    )
    verdict = decide(
        question,
        turn=row.turn,
        rules=PermissionRules.parse(list(row.rules)),
        cwd=CWD,
        grants=row.grants,
        can_ask=row.can_ask,
    )
    assert verdict.action == row.expected, verdict
    said = f"{verdict.by} {verdict.reason} {verdict.note or ''}"
    assert row.says in said, verdict
