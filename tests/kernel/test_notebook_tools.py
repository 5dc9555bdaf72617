"""The notebook tools wired into ``%acp``: every session is offered the ``notebook`` MCP
server, and an agent speaking MCP to it over stdio (the demo agent's ``/tools``, a real
``mcp`` client) lists the variables, inspects a data frame and runs code — approved like
a tool call of kind ``execute``: by the policy (headless too), by a rule, or by the
user's click; denied code does not run and the agent is told."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.tools.helpers import McpAgent, relay_processes, wait_until

from .conftest import SAFETY, Execution, Kernel

pytestmark = pytest.mark.kernel

SESSION_AGENT = Path(__file__).resolve().parents[1] / "agents" / "session_agent.py"
FRAME = "import pandas as pd\nsales = pd.DataFrame({'region': ['north', None], 'units': [3, 7]})"


def defined(kernel: Kernel, name: str) -> bool:
    return kernel.text(f"print({name!r} in globals())").strip() == "True"


def notebook_server(kernel: Kernel) -> dict[str, Any]:
    """The ``notebook`` entry of the last ``session/new`` (or load, resume) sent."""
    for direction, message in reversed(kernel.agent_log()):
        if direction == "send" and message.get("method", "").startswith("session/"):
            for server in message.get("params", {}).get("mcpServers", []) or []:
                if server.get("name") == "notebook":
                    return dict(server)
    raise AssertionError("no session was offered the notebook server")


def test_headless_allow_runs_the_code_in_the_users_namespace(kernel: Kernel) -> None:
    kernel.text(FRAME)
    turn = kernel.execute(
        "%acp -s allowed -p allow /tools made_by_agent = 6 * 7", allow_stdin=False, until="final"
    )
    assert not turn.errors, turn.describe()

    assert kernel.text("print(made_by_agent)").strip() == "42"
    plain = turn.plain
    assert "`sales`: DataFrame 2×2" in plain  # list_variables
    assert "pandas DataFrame `sales`" in plain and "north" in plain  # inspect_variable
    assert "made_by_agent = 6 * 7" in plain  # the code, shown in its tool call
    assert "Allow (chosen by policy allow)" in plain


def test_headless_deny_runs_nothing_and_the_agent_is_told(kernel: Kernel) -> None:
    turn = kernel.execute(
        "%acp -s denied -p deny /tools denied_var = 1", allow_stdin=False, until="final"
    )
    assert not turn.errors, turn.describe()

    assert not defined(kernel, "denied_var")
    plain = turn.plain
    assert (
        "answered with an error" in plain and "The code did not run: denied by policy deny" in plain
    )


def test_headless_ask_is_denied_without_a_ui(kernel: Kernel) -> None:
    turn = kernel.execute("%acp -s asked /tools asked_var = 1", allow_stdin=False, until="final")

    assert not defined(kernel, "asked_var")
    assert "The code did not run" in turn.plain


def test_an_awaited_cell_runs_the_code_once_the_user_allows_it(kernel: Kernel) -> None:
    turn = kernel.execute(
        "%acp -s clicked /tools clicked_var = 'yes'\nprint(clicked_var)", until=None
    )
    turn.wait_button("Allow")
    assert (
        "clicked_var = &#x27;yes&#x27;" in turn.html_text()
        or "clicked_var = 'yes'" in turn.html_text()
    )
    # Python in the kernel, not a shell command: the card shows its code, and no "Run …"
    # line made of its title (it read "Run Run in the notebook's kernel: …").
    shown = re.sub(r"<[^>]+>", "", turn.html_text())
    assert "Run in the notebook" in shown  # the card's title
    assert "Run Run in the notebook" not in shown, shown
    turn.click("Allow")
    turn.wait("final")

    assert not turn.errors, turn.describe()
    assert "yes" in turn.stdout  # the line after %acp ran after the turn, in the same cell
    assert "Allow (chosen by user)" in turn.plain


def test_a_rule_names_the_notebook_tool(kernel: Kernel) -> None:
    kernel.text('%config AcpMagics.permission_rules = ["allow notebook run_code"]')
    try:
        turn = kernel.execute("%acp -s ruled /tools ruled_var = 2", until="final")
    finally:
        kernel.text("%config AcpMagics.permission_rules = []")

    assert defined(kernel, "ruled_var")
    assert "chosen by rule `allow notebook run_code`" in turn.plain  # no one clicked


def test_mcp_lists_the_notebook_server_and_no_tools_turns_it_off(kernel: Kernel) -> None:
    kernel.execute("%acp -s listed -p allow /tools", allow_stdin=False, until="final")
    listed = kernel.text("%acp -s listed --mcp")
    assert "notebook: this kernel's tools" in listed and "run_code" in listed
    assert "Passed to the last session: notebook" in listed
    assert "never listed nor called" not in listed

    off = kernel.execute("%acp -s off --no-tools /tools", allow_stdin=False, until="final")
    assert "no `notebook` MCP server" in off.plain


def test_every_session_is_offered_the_same_entry_and_gets_its_own_calls(kernel: Kernel) -> None:
    """fast-agent took one notebook session per process ("Runtime MCP server 'notebook' is
    already registered with different settings"): each session had its own relay socket."""
    command = shlex.join([sys.executable, str(SESSION_AGENT), "--mcp-once"])
    agent = '"' + command.replace("\\", "\\\\").replace('"', '\\"') + '"'
    for name in ("once-a", "once-b"):
        turn = kernel.execute(
            f"%acp -a {agent} -s {name} echo hi", allow_stdin=False, until="final"
        )
        assert not turn.errors and "echo: hi" in turn.plain, turn.describe()

    first = kernel.execute(
        "%acp -s route-a -p allow /tools in_a = 1", allow_stdin=False, until="final"
    )
    entry_a = notebook_server(kernel)
    second = kernel.execute(
        "%acp -s route-b -p allow /tools in_b = 2", allow_stdin=False, until="final"
    )
    assert notebook_server(kernel) == entry_a
    assert defined(kernel, "in_a") and defined(kernel, "in_b")
    assert "in_a = 1" in first.plain and "in_b = 2" not in first.plain
    assert "in_b = 2" in second.plain and "in_a = 1" not in second.plain


def test_mcp_says_when_the_agent_never_used_the_tools_it_was_given(
    kernel: Kernel, tmp_path: Path
) -> None:
    """gemini-cli drops session/new's MCP servers in a folder it does not trust: the notebook
    tools never appeared, and `%acp --mcp` said only that they were passed."""
    gemini = tmp_path / "gemini"  # the preset's command, standing in for Gemini CLI
    gemini.write_text("#!/bin/sh\nexec " + shlex.join([sys.executable, str(SESSION_AGENT)]) + "\n")
    gemini.chmod(0o755)
    old_path = kernel.text("import os; print(os.environ['PATH'])").strip()
    kernel.text(f"os.environ['PATH'] = {str(tmp_path) + os.pathsep + old_path!r}")
    try:
        turn = kernel.execute("%acp -a gemini -s dropped echo hi", allow_stdin=False, until="final")
        assert "echo: hi" in turn.plain, turn.describe()
        said = kernel.text("%acp -a gemini -s dropped --mcp")
    finally:
        kernel.text(f"os.environ['PATH'] = {old_path!r}")
    assert (
        "the agent was given the notebook tools but has never listed nor called them; it may "
        "have dropped them. Gemini CLI ignores the MCP servers it is given, the notebook tools "
        "too, in a folder it does not trust. Fix: `%env GEMINI_CLI_TRUST_WORKSPACE=true` then "
        "`%acp --restart`."
    ) in said.replace("\n", " ")


def test_the_relays_secret_is_never_sent_shown_or_traced(kernel: Kernel) -> None:
    kernel.execute("%acp -s secret -p allow /tools", allow_stdin=False, until="final")
    server = notebook_server(kernel)
    # Everything the inspector holds and every output so far, before the test reads it.
    traced = json.dumps(kernel.agent_log())
    shown = json.dumps([m.content for m in kernel.log])
    token_file = server["args"][server["args"].index("--token-file") + 1]
    token = kernel.text(f"print(open({token_file!r}).read())").strip()

    assert len(token) > 20
    assert token not in traced and token not in shown


def test_no_relay_is_left_after_the_kernel_shuts_down(fresh_kernel: Kernel) -> None:
    fresh_kernel.execute("%acp -p allow /tools", allow_stdin=False, until="final")
    server = notebook_server(fresh_kernel)
    # An agent still connected when the kernel goes: its relay must not outlive it.
    agent = McpAgent(server)
    try:
        assert "list_variables" in agent.tool_names()
        assert relay_processes(server)
        fresh_kernel.shutdown()

        wait_until(lambda: not relay_processes(server), "the relay to exit", SAFETY)
    finally:
        with contextlib.suppress(Exception):
            agent.close()
    socket = Path(server["args"][server["args"].index("--socket") + 1])
    deadline = time.monotonic() + SAFETY
    while socket.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not socket.exists(), "the kernel left its tools socket behind"


def test_a_blocking_wait_runs_the_code_on_the_main_thread(kernel: Kernel) -> None:
    # Not at the top level of the cell, so not awaited: the cell blocks in TurnHandle.wait,
    # which must run the tool's work meanwhile (else the turn would wait for itself).
    turn = kernel.execute(
        "if True:\n    %acp -s blocking -p allow /tools blocked_var = 5", allow_stdin=False
    )
    assert not turn.errors, turn.describe()
    assert kernel.text("print(blocked_var)").strip() == "5"


def test_a_headless_notebook_run_by_nbclient(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbformat.v4 import new_code_cell, new_notebook

    from .conftest import ROOT

    cells = [
        "%load_ext acp_notebook",
        "import pandas as pd\nframe = pd.DataFrame({'a': [1, 2]})",
        "%acp -p allow /tools total = int(frame['a'].sum())",
        "print(total)",
        "%acp -s other -p deny /tools refused = 1",
        "print('refused' in globals())",
    ]
    notebook = new_notebook(cells=[new_code_cell(source) for source in cells])
    env_path = str(ROOT)
    client = NotebookClient(
        notebook,
        timeout=int(SAFETY),
        kernel_name="python3",
        resources={"metadata": {"path": str(tmp_path)}},
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTHONPATH", env_path)
        client.execute()

    outputs = ["".join(str(o.get("text", "")) for o in cell.outputs) for cell in notebook.cells]
    assert outputs[3].strip() == "3"
    assert outputs[5].strip() == "False"
    transcript = notebook.cells[4].outputs[0]["data"]["text/plain"]
    assert "The code did not run: denied by policy deny" in transcript
    nbformat.validate(notebook)


def run_code_past_the_time_limit(kernel: Kernel, session: str, limit: int, code: str) -> Execution:
    """A turn of ``session`` (allowed by policy) whose ``run_code`` runs ``code`` under
    ``-t limit``, after a first turn that starts the agent's MCP client (so the limited one
    reaches run_code soon)."""
    kernel.execute(f"%acp -s {session} -p allow /tools warm = 1", allow_stdin=False, until="final")
    return kernel.execute(
        f"%acp -s {session} -p allow -t {limit} /tools {code}", allow_stdin=False, until="final"
    )


def test_the_turns_time_limit_interrupts_the_code_it_approved(kernel: Kernel) -> None:
    # `-t` did not bound an approved run_code: the turn was cancelled, and the code went
    # on in the user's namespace until a kernel interrupt freed it.
    turn = run_code_past_the_time_limit(
        kernel, "limited", 8, "import time; time.sleep(120); after_sleep = 1"
    )
    plain = turn.plain
    assert "Now **`run_code`**" in turn.markdown, plain  # the code started
    assert not defined(kernel, "after_sleep")
    assert "it was interrupted because the turn's time limit (-t) ran out" in plain, plain
    assert "KeyboardInterrupt" in plain
    assert kernel.text("print(1 + 1)").strip() == "2"  # the kernel goes on


def test_a_cancelled_turn_ends_after_the_code_it_interrupted_has_shown_its_end(
    kernel: Kernel,
) -> None:
    # The turn ended as soon as the agent answered the cancel; code that took a moment to
    # end after the interrupt (here its `with` block's exit) showed its result too late
    # for the turn's last view, which had the call "cancelled" and nothing of the code.
    kernel.text(
        "import time\n"
        "class SlowToStop:\n"
        "    def __enter__(self):\n"
        "        return self\n"
        "    def __exit__(self, *exc):\n"
        "        time.sleep(2)\n"
        "        globals()['stopped_late'] = 1\n"
    )
    plain = run_code_past_the_time_limit(
        kernel, "slow", 6, "with SlowToStop(): time.sleep(120)"
    ).plain
    assert "cancelled" in plain, plain
    assert defined(kernel, "stopped_late")
    assert "it was interrupted because the turn's time limit (-t) ran out" in plain, plain
    assert "KeyboardInterrupt" in plain


def test_the_inspector_draws_the_tools_traffic_and_who_allowed_the_code(kernel: Kernel) -> None:
    # The inspector showed the ACP messages only: the run_code call and its approval never
    # appeared, so nothing said why the code ran.
    kernel.execute(
        "%acp -s lanes -p allow /tools inspected_var = '<b>hi</b>'",
        allow_stdin=False,
        until="final",
    )
    inspected = kernel.execute("%acp --inspect", allow_stdin=False, until="idle")
    assert not inspected.errors, inspected.describe()
    html = "\n".join(str(m.content["data"].get("text/html", "")) for m in inspected.displays)
    labels = [re.sub(r"<[^>]+>", "", s) for s in re.findall(r"<summary[^>]*>(.*?)</summary>", html)]

    assert "notebook tools (MCP)" in html
    calls = [i for i, label in enumerate(labels) if "tools/call (request" in label]
    decided = [i for i, label in enumerate(labels) if label.startswith("⚖ run_code: allowed")]
    answered = [i for i, label in enumerate(labels) if "tools/call (response" in label]
    assert calls and decided and answered, labels
    assert calls[-1] < decided[-1] < answered[-1]  # asked, decided, answered: in that order
    assert "allowed by policy allow" in labels[decided[-1]]
    assert "&lt;b&gt;hi&lt;/b&gt;" in html and "<b>hi</b>" not in html
