"""The control registry and what is derived from it (the %acp option, --help, Tab
completion, the acp.* function), and the controls as %acp and acp.*() run them, against
real agents without a kernel."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest

from acp_notebook.client.presets import preset_table
from acp_notebook.client.session import Session
from acp_notebook.notebook import api
from acp_notebook.notebook.controls import REGISTRY, Control, ControlFailed, run
from acp_notebook.notebook.controls.answers import Column, Table, Text
from acp_notebook.notebook.load.completion import completions
from acp_notebook.notebook.load.options import parse_line, usage
from acp_notebook.notebook.runtime.agents import NotebookAgents
from acp_notebook.notebook.runtime.snapshots import SessionSnapshot
from acp_notebook.notebook.turn.handle import TurnSettings
from acp_notebook.protocol import models as m

from .conftest import Seen, agent_command, context, on_loop


def test_every_control_is_an_option_a_help_line_a_completion_and_a_function() -> None:
    help_text = usage()
    for control in REGISTRY:
        value = " ID=VALUE" if control.arg is not None and control.arg.required else ""
        options = parse_line(control.flag + value)
        assert options.control == control.name, control.flag
        assert f"{control.usage}  " in help_text and control.help in help_text
        assert control.flag in completions(f"%acp {control.flag}", control.flag, list)
        function = getattr(api, control.name)
        assert function.__name__ == control.name and control.help in (function.__doc__ or "")
        handler = list(inspect.signature(control.handler).parameters)[1:]
        selectors = {"notebook": [], "agent": ["agent"], "session": ["agent", "session"]}
        assert list(inspect.signature(function).parameters) == handler + selectors[control.scope]
    assert sorted(api.__all__) == sorted(
        ["ControlFailed", "ask", "messages", "report", "session", *REGISTRY.by_name]
    )


def test_every_control_names_its_handler_and_value_reader_as_functions() -> None:
    # Handlers named by strings ("sessions.load") were found by no jump-to-definition.
    words = {"name", "help", "scope", "metavar"}
    named = [
        (control.name, field.name)
        for control in REGISTRY
        for row in (control, control.arg)
        if row is not None
        for field in dataclasses.fields(row)
        if field.name not in words and isinstance(getattr(row, field.name), str)
    ]
    assert named == []
    for control in REGISTRY:
        assert control.handler.__module__.startswith("acp_notebook.notebook.controls")


def test_a_control_that_needs_someone_to_click_says_so_headless(agents: NotebookAgents) -> None:
    poke = Control("poke", ("--poke",), "poke the cell", lambda ctx: Text("poked"), headless=False)
    with pytest.raises(ControlFailed, match="--poke needs a notebook where someone can click"):
        run(poke, context(agents, interactive=False))
    assert run(poke, context(agents, interactive=True)) == "poked"


def test_a_malformed_value_and_an_unknown_agent_are_one_sentence(agents: NotebookAgents) -> None:
    with pytest.raises(
        ControlFailed, match=r"^--set takes ID=VALUE, e\.g\. --set model=demo-large\.$"
    ):
        REGISTRY["set_option"].arguments("model")
    with pytest.raises(ControlFailed, match=r"^The agent command '\"oops' cannot be read"):
        run(REGISTRY["restart"], context(agents, agent='"oops'))


def test_session_controls_change_the_session_and_answer_snapshots(agents: NotebookAgents) -> None:
    ctx = context(agents, session="cfg")
    assert run(REGISTRY["mode"], ctx, "code") == "Mode: code."
    assert run(REGISTRY["set_option"], ctx, "model", "demo-large") == "Model: Demo large."
    assert run(REGISTRY["set_option"], ctx, "verbose", True) == "Protocol notes: on."
    with pytest.raises(ControlFailed, match="`verbose` is on or off; give true or false"):
        run(REGISTRY["set_option"], ctx, "verbose", "maybe")
    settings = run(REGISTRY["settings"], ctx)
    assert isinstance(settings, Text) and "Model [model]: Demo large" in settings
    sessions = run(REGISTRY["sessions"], ctx)
    assert isinstance(sessions, Table)
    (snapshot,) = sessions
    assert isinstance(snapshot, SessionSnapshot)
    assert (snapshot.agent, snapshot.name) == ("demo", "cfg")
    assert ("mode", "Code") in snapshot.options and ("model", "Demo large") in snapshot.options
    assert "read" in snapshot.commands and not snapshot.busy and not snapshot.pending
    # A snapshot does not follow the session: it is what was asked, safe on any thread.
    run(REGISTRY["mode"], ctx, "ask")
    (now,) = run(REGISTRY["sessions"], ctx)
    assert ("mode", "Code") in snapshot.options and ("mode", "Ask") in now.options
    with pytest.raises(AttributeError):
        snapshot.mode = "ask"  # type: ignore[misc]


def _edit_waiting(agents: NotebookAgents, name: str, path: Path) -> Session:
    """A session ``name`` whose turn waits for permission to edit ``path``."""
    ctx = context(agents, session=name, interactive=True)  # requests wait for a click
    session: Session = agents.loop.run(ctx.open_session, timeout=60)
    asked = Seen()

    def submit() -> None:
        def listener(_transcript: object) -> None:
            if session.permissions.pending:
                asked()

        session.on_change(listener)
        session.submit(f"/edit {path.name}")

    on_loop(agents, submit)
    asked.wait(f"the permission request of session {name}")
    return session


def test_pending_keys_name_the_session_and_answer_decides_only_that_request(
    agents: NotebookAgents, tmp_path: Path
) -> None:
    target = tmp_path / "utils.py"
    target.write_text("def add(a, b):\n    return a + b\n")
    first = _edit_waiting(agents, "first", target)
    second = _edit_waiting(agents, "second", target)
    # Each broker numbers its requests from perm-1: the key says whose it is.
    pending = run(REGISTRY["pending"], context(agents))
    assert isinstance(pending, Table)
    assert sorted(p.key for p in pending) == ["first/perm-1", "second/perm-1"]
    assert all("Allow once" in p.options for p in pending)

    assert run(REGISTRY["answer"], context(agents), "second/perm-1", "allow once") == "Allow once"
    assert on_loop(agents, lambda: [r.key for r in first.permissions.pending]) == ["perm-1"]
    assert on_loop(agents, lambda: second.permissions.requests["perm-1"].state) == "selected"
    with pytest.raises(ControlFailed, match="The request second/perm-1 was already decided"):
        run(REGISTRY["answer"], context(agents), "second/perm-1", "Reject")
    with pytest.raises(ControlFailed, match="No permission request third/perm-1"):
        run(REGISTRY["answer"], context(agents), "third/perm-1", "Reject")
    # spec: cancelling the turn answers its pending permission request "cancelled".
    agents.loop.run(first.cancel, timeout=60)
    assert on_loop(agents, lambda: first.permissions.requests["perm-1"].state) == "cancelled"
    assert run(REGISTRY["pending"], context(agents)).rows == ()


def test_wait_with_a_timeout_raises_and_the_turn_goes_on(agents: NotebookAgents) -> None:
    handle = agents.start_turn(TurnSettings(prompt="hello", agent="demo", headless=True))
    with pytest.raises(TimeoutError, match="did not end within 0 s"):
        handle.wait(0)  # the agent has not even started
    assert handle.wait(60).stop_reason == "end_turn"
    assert "**You:** hello" in handle.bundle()["text/markdown"]


def test_rules_are_one_object_held_by_every_session(agents: NotebookAgents) -> None:
    session: Session = agents.loop.run(context(agents).open_session, timeout=60)
    assert session.permissions.rules is agents.permission_rules
    agents.permission_rules.replace(["allow read"])
    assert session.permissions.rules is agents.permission_rules
    assert agents.permission_rules.texts == ["allow read"]
    with pytest.raises(ValueError, match="unknown tool kind `reed`"):
        agents.permission_rules.replace(["allow reed"])
    assert agents.permission_rules.texts == ["allow read"]


def test_presets_say_how_each_starts_or_what_to_install() -> None:
    rows = {row.preset.id: row for row in preset_table(which=lambda _name: None)}
    assert rows["demo"].status == "ready via builtin" and rows["demo"].usable is not None
    assert rows["claude"].status == "not installed" and rows["claude"].usable is None
    assert any("npx" in option.missing for option in rows["claude"].options)


def test_agent_text_in_a_table_cannot_break_it() -> None:
    command = m.AvailableCommand(name="odd", description="a | b\nc")
    table = Table(
        [command],
        [
            Column("command", lambda c: f"/{c.name}", code=True),
            Column("description", lambda c: c.description),
        ],
        empty="none",
    )
    assert table._repr_markdown_().splitlines()[-1] == "| `/odd` | a \\| b c |"


def test_the_agents_login_error_is_shown_as_text_not_html(agents: NotebookAgents) -> None:
    from acp_notebook.notebook.view.live_cell import LiveCell
    from acp_notebook.ui.turn import TurnView

    loop = agents.loop
    view = TurnView("login agent", "default", post=loop.post, schedule_later=loop.call_later)
    cell = LiveCell(view, loop)
    shown = Seen()
    cell.widget.children[1].observe(shown, "children")  # the panels under the view
    settings = TurnSettings(prompt="hello", agent=agent_command("login_agent.py"))
    handle = agents.start_turn(settings, cell)
    shown.wait("the login prompt")
    prompt = cell.login
    assert prompt is not None
    answered = Seen()
    prompt.status.observe(lambda change: answered(change["new"]), "value")
    prompt.buttons["web"].click()
    answered.wait("the agent's answer to authenticate")
    error = answered.values[0]
    assert "&lt;img src=x onerror=alert(1)&gt;Bad &lt;b&gt;token&lt;/b&gt;" in error
    assert "<img" not in error and "<b>" not in error
    prompt.cancel()
    handle.wait(60)
    assert handle.error is not None and "needs authentication: Log in first." in handle.error


def test_the_sandbox_modes_are_the_same_option_trait_and_preset_default() -> None:
    import argparse

    from acp_notebook.cli.commands import build_parser
    from acp_notebook.notebook.load.config import AcpConfig
    from acp_notebook.protocol.sandbox import MODES

    (sub,) = (a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command in ("run",):
        (option,) = (a for a in sub.choices[command]._actions if a.dest == "sandbox")
        assert tuple(option.choices or ()) == MODES
    assert tuple(AcpConfig.class_traits()["sandbox"].values) == MODES
    for row in preset_table():
        assert row.preset.sandbox.get("default", "workspace") in MODES, row.preset.id


def test_help_says_what_needs_the_extension_and_what_to_type_without_it() -> None:
    help_text = " ".join(usage().split())
    assert "the acp-notebook extension adds a Fix button under an error" in help_text
    assert "Ask about this cell (Ctrl+K" in help_text
    assert "without it (VS Code, the classic Notebook, jupyter console) type %acp --fix" in (
        help_text
    )
