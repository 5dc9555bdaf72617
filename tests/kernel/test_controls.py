"""The session controls of %acp in a real kernel, against the demo agent: settings, modes
and config options, session history (list, load, resume, close), login (the control and
the prompt shown in the cell), MCP servers, variables as context, the inspector, and
malformed agent commands."""

from __future__ import annotations

import json
import sys

import pytest

from acp_notebook.notebook.runtime.notebook_state import NotebookState

from .conftest import Kernel, rel

pytestmark = pytest.mark.kernel

AUTH_AGENT = f'"{sys.executable} -m acp_notebook.agents.demo --require-auth"'


def out(kernel: Kernel, code: str) -> str:
    """stdout (and stderr) of a headless control cell, which must not raise."""
    execution = kernel.execute(code, allow_stdin=False, until="idle")
    assert not execution.errors, execution.describe()
    return execution.stdout + execution.stderr


def markdown_outputs(kernel: Kernel, code: str) -> str:
    execution = kernel.execute(code, allow_stdin=False, until="idle")
    assert not execution.errors, execution.describe()
    return "\n".join(str(m.content["data"].get("text/markdown", "")) for m in execution.displays)


def test_modes_and_config_options_follow_the_agent(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    settings = out(kernel, "%acp -s cfg --settings")
    assert "Mode: Ask" in settings and "Model [model]: Demo small" in settings
    # The demo has both modes and a `mode` config option: the config option is used (spec).
    assert "Mode: code." in out(kernel, "%acp -s cfg --mode code")
    assert "Model: Demo large." in out(kernel, "%acp -s cfg --set model=demo-large")
    assert "on." in out(kernel, "%acp -s cfg --set verbose=yes")
    after = out(kernel, "%acp -s cfg --settings")
    assert (
        "Model [model]: Demo large" in after and "[verbose]: on" in after and "Mode: Code" in after
    )
    # The agent saw exactly the protocol calls for these changes.
    methods = [msg.get("method") for direction, msg in kernel.agent_log() if direction == "send"]
    assert methods.count("session/set_config_option") >= 2
    # Errors are one sentence, not a traceback.
    bad = kernel.execute("%acp -s cfg --set model", allow_stdin=False, until="idle")
    assert not bad.errors and "ID=VALUE" in bad.stderr
    unknown = kernel.execute("%acp -s cfg --set colour=red", allow_stdin=False, until="idle")
    assert not unknown.errors and "no config option `colour`" in unknown.stderr


def test_history_load_resume_and_close(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    first = kernel.execute("%acp remember this conversation", allow_stdin=False, until="final")
    assert "remember this conversation" in first.markdown
    history = markdown_outputs(kernel, "%acp --history")
    assert "demo-session-1" in history and "this notebook's last" in history
    loaded = markdown_outputs(kernel, "%acp -s replay --load demo-session-1")
    assert "Loaded session `demo-session-1`" in loaded and "remember this conversation" in loaded
    # The loaded session continues: the next prompt goes to it.
    later = kernel.execute("%acp -s replay and now?", allow_stdin=False, until="final")
    prompts = [
        msg
        for d, msg in kernel.agent_log()
        if d == "send" and msg.get("method") == "session/prompt"
    ]
    assert prompts[-1]["params"]["sessionId"] == "demo-session-1" and "and now?" in later.markdown
    resumed = out(kernel, "%acp -s again --resume demo-session-1")
    assert "Resumed session demo-session-1" in resumed
    assert "Closed session 'again'" in out(kernel, "%acp -s again --close")
    # The notebook's state, in the per-user state directory (never beside the notebook),
    # remembers the last session per name.
    state = json.loads(NotebookState(str(kernel.cwd)).path.read_text())
    assert state["sessions"]["demo"]["default"]["sessionId"] == "demo-session-1"
    assert not (kernel.cwd / ".acp-notebook.json").exists()


def test_login_control_and_headless_hint(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    refused = kernel.execute(f"%acp -a {AUTH_AGENT} hello", allow_stdin=False, until="final")
    assert (
        "needs authentication" in refused.markdown and "%acp --login demo-login" in refused.markdown
    )
    # Without a method and without anyone to click, no agent-handled login starts (codex's
    # opens a browser and waits): the methods are listed; the hint's own line logs in.
    assert "Name the auth method" in out(kernel, f"%acp -a {AUTH_AGENT} --login")
    assert "Logged in" in out(kernel, f"%acp -a {AUTH_AGENT} --login demo-login")
    after = kernel.execute(f"%acp -a {AUTH_AGENT} hello", allow_stdin=False, until="final")
    assert "**You:** hello" in after.markdown and "Stop reason: end_turn" in after.markdown


def test_login_prompt_in_the_cell_then_the_turn_goes_on(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    execution = kernel.execute(f"%acp -a {AUTH_AGENT} hello", until=None)
    button = execution.wait_button("Log in: Demo login")
    assert execution.busy
    kernel.send_click(button.comm_id)
    execution.wait("final")
    assert "**You:** hello" in execution.markdown and "Stop reason: end_turn" in execution.markdown
    methods = [msg.get("method") for d, msg in kernel.agent_log() if d == "send"]
    assert methods.index("authenticate") < methods.index("session/prompt")


def test_mcp_servers_are_passed_and_shown(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    config = {
        "files": {"command": "cat", "args": ["--version"]},
        "web": {"type": "http", "url": "http://127.0.0.1:9/mcp"},
    }
    kernel.text(f"%config AcpMagics.mcp_servers = {json.dumps(config)}")
    kernel.execute("%acp hello", allow_stdin=False, until="final")
    new = [
        msg for d, msg in kernel.agent_log() if d == "send" and msg.get("method") == "session/new"
    ][-1]
    servers = new["params"]["mcpServers"]
    # The configured servers, then the notebook's own tools.
    assert [s["name"] for s in servers] == ["files", "notebook"]
    assert servers[0]["command"].startswith("/")
    shown = out(kernel, "%acp --mcp")
    assert "files: stdio" in shown and "Passed to the last session: files, notebook" in shown
    assert "`web` (http) was not passed" in shown


def test_variables_become_embedded_resources(kernel: Kernel) -> None:
    kernel.text("temperatures = {'mon': 21.5, 'tue': 23.0}")
    execution = kernel.execute(
        "%acp What stands out in {temperatures}? {unknown_name}", allow_stdin=False, until="final"
    )
    prompt = [
        msg
        for d, msg in kernel.agent_log()
        if d == "send" and msg.get("method") == "session/prompt"
    ][-1]
    blocks = prompt["params"]["prompt"]
    assert blocks[0]["text"] == "What stands out in `temperatures`? {unknown_name}"
    resources = {b["resource"]["uri"]: b["resource"] for b in blocks if b["type"] == "resource"}
    value = resources["notebook://variables/temperatures"]
    assert json.loads(value["text"]) == {"mon": 21.5, "tue": 23.0}
    assert "notebook://variables/temperatures" in execution.markdown
    assert "Sent: cell [" in execution.plain and "· temperatures dict (2 keys)" in execution.plain


def test_the_inspector_lists_and_steps_through_messages(kernel: Kernel) -> None:
    kernel.execute("%acp hi", allow_stdin=False, until="final")
    table = kernel.execute(
        'import acp_notebook as acp\nacp.messages(method="initialize")',
        allow_stdin=False,
        until="idle",
    )
    result = next(m for m in table.messages if m.msg_type == "execute_result")
    markdown = result.content["data"]["text/markdown"]
    assert "| 1 | client → agent | request 0 | `initialize` |" in markdown
    assert "| 2 | agent → client | response 0 | `initialize` |" in markdown
    step = kernel.execute(
        'acp.messages(method="session/new").step(3)', allow_stdin=False, until="idle"
    )
    detail = next(m for m in step.messages if m.msg_type == "execute_result").content["data"][
        "text/markdown"
    ]
    assert '"cwd": "$CWD"' in detail and str(kernel.cwd) not in detail


def test_inspect_runs_the_turn_with_its_timeline_under_it(kernel: Kernel) -> None:
    execution = kernel.execute("%acp --inspect /notice", allow_stdin=False, until="idle")
    assert not execution.errors, execution.describe()
    markdown = "\n".join(
        str(m.content["data"].get("text/markdown", "")) for m in execution.displays
    )
    assert "Indexing finished" in markdown  # the turn's notices, in its transcript
    assert "| # | from | message | method | kind | session | paired | time | schema |" in markdown
    assert "| notice |" in markdown and "| ok |" in markdown


def test_an_agent_command_with_an_unclosed_quote_is_one_sentence(kernel: Kernel) -> None:
    execution = kernel.execute('%acp -a "python -c \'oops" hello', allow_stdin=False, until="final")
    assert not execution.errors, execution.describe()
    assert "cannot be read" in execution.markdown and "No closing quotation" in execution.markdown


def test_a_pending_permission_can_be_answered_from_python(kernel: Kernel, utils_py) -> None:
    # For frontends that cannot show the buttons: list what waits, answer it by name.
    before = utils_py.read_text()
    turn = kernel.execute(f"%acp --no-wait /edit {rel(kernel, utils_py)}", until="idle")
    turn.wait_button("Allow once")
    listed = kernel.text(
        "import acp_notebook as acp\nfor request in acp.pending():\n"
        "    print(request.session, request.key, list(request.options))"
    )
    key = listed.split()[1]
    assert key.startswith("default/perm-"), listed
    assert "'Allow once'" in listed and utils_py.read_text() == before
    assert kernel.text(f"print(acp.answer({key!r}, 'allow once'))").strip() == "Allow once"
    turn.wait("final")
    assert "Allow once (chosen by user)" in turn.markdown and utils_py.read_text() != before
    failed = kernel.execute(f"acp.answer({key!r}, 'Reject')", allow_stdin=False, until="idle")
    assert failed.errors and "already decided" in failed.errors[0].content["evalue"]


def complete(kernel: Kernel, code: str) -> tuple[list[str], str]:
    """What the kernel offers for Tab at the end of ``code``, and the text it replaces."""
    reply = kernel.kc.complete(code, len(code), reply=True, timeout=60)["content"]
    return reply["matches"], code[reply["cursor_start"] : reply["cursor_end"]]


def test_tab_after_a_slash_offers_only_the_agents_commands(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    # Tab after `%acp /re` offered `/repr` and `/reversed` (Python builtins) beside the
    # agent's `/read` and `/rename`.
    assert complete(kernel, "%acp /re") == (["/re"], "/re"), "no command known yet: Tab keeps it"
    kernel.execute("%acp hello", allow_stdin=False, until="final")  # the commands are announced

    assert complete(kernel, "%acp /re") == (["/read", "/refuse", "/rename"], "/re")
    assert complete(kernel, "%acp -a demo /re")[0] == ["/read", "/refuse", "/rename"]
    assert complete(kernel, "%acp --st") == (["--status", "--stop"], "--st")
    # Elsewhere on the line the usual completions stay: a path, a variable in braces.
    matches, _ = complete(kernel, "%acp /read /us")
    assert "/usr/" in matches and "/read" not in matches
    kernel.text("sales_by_region = 1")
    assert "sales_by_region" in complete(kernel, "%acp explain {sales_by")[0]
