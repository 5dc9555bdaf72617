"""Approving a notebook tool that reviews its change in place (a cell edit): the rules
and the policy decide first, and only what would be asked goes to the in-cell review."""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace
from typing import Any

import anyio

from acp_notebook.client.permissions import PermissionBroker
from acp_notebook.client.rules import PermissionRules
from acp_notebook.notebook.tools import Approved, Denied, ToolApproval, ToolRegistry, kernel_tools
from acp_notebook.notebook.tools.approval import Review
from acp_notebook.notebook.tools.session_tools import KernelTools, SessionTools

EDIT = ToolApproval(
    "s", "edit_cell", "Edit cell 2", kind="edit", review_in_place=True, paths=("/work/a.ipynb",)
)


def decide(policy: str, rules: list[str] = [], interactive: bool = True) -> Any:  # noqa: B006
    loop: Any = None
    tools = SessionTools(loop, loop, "s", ToolRegistry())
    broker = PermissionBroker(
        policy,  # type: ignore[arg-type]
        interactive=interactive,
        rules=PermissionRules.parse(rules),
    )
    tools.session = SimpleNamespace(closed=False, cwd="/work", permissions=broker)  # type: ignore[assignment]
    return anyio.run(tools.approve, EDIT)


def test_rules_decide_before_the_review() -> None:
    assert decide("ask", ["allow notebook edit_cell"]) == Approved(
        "rule `allow notebook edit_cell`"
    )
    assert decide("ask", ["allow edit *.ipynb"]) == Approved("rule `allow edit *.ipynb`")
    assert decide("allow", ["deny notebook"]) == Denied(
        "denied by rule `deny notebook`", "rule `deny notebook`"
    )


def test_the_policy_decides_when_no_rule_matches() -> None:
    assert decide("allow", ["allow notebook run_code"]) == Approved("the policy allow")
    assert decide("deny") == Denied("denied by the policy deny", "the policy deny")


def test_what_would_be_asked_is_reviewed_in_the_cell_unless_no_one_can_answer() -> None:
    assert decide("ask") == Review()
    assert decide("ask", ["ask notebook"]) == Review()
    denied = decide("ask", interactive=False)
    assert isinstance(denied, Denied) and "no one can answer" in denied.reason


def test_notebook_tools_outside_a_turn_are_not_approved_whatever_the_policy() -> None:
    """After a `-p allow` turn ended, the agent called run_code while the kernel was idle:
    it ran at once in the user's namespace, with no card and no turn showing it."""
    loop: Any = None
    tools = SessionTools(loop, loop, "s", ToolRegistry())
    broker = PermissionBroker("allow", interactive=True, rules=PermissionRules.parse(["allow *"]))
    broker.turn = lambda: None  # the session's turn ended
    tools.session = SimpleNamespace(closed=False, cwd="/work", permissions=broker)  # type: ignore[assignment]
    run = ToolApproval("s", "run_code", "Run in the notebook's kernel: x = 1", "x = 1")
    for request in (EDIT, run):
        decision = anyio.run(tools.approve, request)
        assert isinstance(decision, Denied) and "no turn is running" in decision.reason
    assert broker.requests == {}, "no card was made"


def test_a_sessions_broker_knows_its_notebook_server_and_which_tools_only_read() -> None:
    loop: Any = None
    tools = SessionTools(loop, loop, "s", kernel_tools())
    broker = PermissionBroker("ask")
    tools.session = SimpleNamespace(closed=False, cwd="/work", permissions=broker)  # type: ignore[assignment]
    server = broker.notebook_server
    assert server is not None and server.name == "notebook"
    offered = server.tools()
    assert offered["list_variables"] is True and offered["run_code"] is False


def test_the_run_code_card_says_the_code_runs_unconfined_in_the_kernel() -> None:
    # The agent is confined; the kernel its run_code runs in is the user's, never confined.
    from acp_notebook.client.notebook_names import IN_KERNEL
    from acp_notebook.client.render import Renderer
    from acp_notebook.client.transcript import Transcript

    loop: Any = None
    tools = SessionTools(loop, loop, "s", kernel_tools())
    broker = PermissionBroker("deny", interactive=False)
    transcript = Transcript("/work")
    tools.session = SimpleNamespace(  # type: ignore[assignment]
        closed=False,
        cwd="/work",
        roots=["/work"],
        session_id="s1",
        permissions=broker,
        transcript=transcript,
        active_turn=None,
        sandbox="🔒 confined to `work/` · network on",
    )
    run = ToolApproval("s", "run_code", "Run in the notebook's kernel: x = 1", "x = 1")
    assert isinstance(anyio.run(tools.approve, run), Denied)
    (request,) = broker.requests.values()
    assert request.sandbox == IN_KERNEL
    (call,) = transcript.tool_calls.values()
    shown = Renderer(transcript, markdown=False).tool_call(call)
    assert "🔓 unconfined: the code runs in your kernel" in shown and "🔒" not in shown


def test_a_call_goes_to_the_session_of_the_agent_that_started_the_relay_and_runs_a_turn() -> None:
    kernel = KernelTools(None, lambda: None)  # type: ignore[arg-type]
    kernel.runner = object()  # type: ignore[assignment]
    sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
    relay, other_agent = subprocess.Popen(sleep), subprocess.Popen(sleep)
    try:
        ours, theirs, idle = (kernel.for_session(name) for name in ("ours", "theirs", "idle"))
        assert ours is not None and theirs is not None and idle is not None

        def session(agent_pid: int, running: bool) -> Any:
            return SimpleNamespace(
                active_turn=object() if running else None,
                connection=SimpleNamespace(process=SimpleNamespace(pid=agent_pid)),
                permissions=PermissionBroker("ask"),
            )

        # This process stands for the agent that started the relay.
        ours.session = session(os.getpid(), running=True)
        theirs.session = session(other_agent.pid, running=True)
        idle.session = session(os.getpid(), running=False)
        assert kernel.route(relay.pid) is ours.context
        said = kernel.route(None)  # the relay's process unknown: two turns could be asking
        assert isinstance(said, str) and said.startswith("2 sessions of this agent could be")
        ours.close()
        assert kernel.route(relay.pid) is idle.context  # the only one left of that agent
    finally:
        for process in (relay, other_agent):
            process.kill()
            process.wait()
