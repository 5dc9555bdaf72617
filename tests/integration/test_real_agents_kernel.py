"""Each real agent driven as users drive it: ``%acp -a PRESET …`` in a kernel of the
project's kernelspec started as Jupyter Server starts one, against the loopback model
(:mod:`.loopback`), which asks for the notebook tools and the agent's own tools by
the name each agent gives them.

One kernel per agent is shared by its tests (the agent's ``default`` session goes on from
test to test); the tests that need an environment of their own (no key) start their own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from ..kernel.conftest import Execution, Kernel
from .loopback import Call, LoopbackModel, Script
from .real_agents import AGENTS, SAFETY, Place, RealAgent, processes_marked, start_kernel

pytestmark = [pytest.mark.agents, pytest.mark.timeout(900)]

ENDED = "Stop reason: end_turn"
#: The agents these tests run: every preset's real agent.
CHECKED = ["claude", "codex", "qwen-code", "fast-agent", "gemini", "opencode"]


@dataclass
class Notebook:
    """A kernel whose turns go to one agent, and the model behind it."""

    agent: RealAgent
    kernel: Kernel
    place: Place
    model: LoopbackModel
    mark: str

    def turn(self, prompt: str, script: Script, options: str = "") -> Execution:
        self.model.play(script)
        line = f"%acp -a {self.agent.preset} {options} {prompt}".replace("  ", " ")
        return self.kernel.execute(line, allow_stdin=False, until="final")

    def sent_to_model(self, since: int) -> str:
        return "\n".join(r.text for r in self.model.since(since))

    def usage_used(self) -> list[object]:
        """The ``used`` of each ``usage_update`` the agent sent (the kernel's message log)."""
        said = self.kernel.text(
            "import json, acp_notebook\n"
            "print(json.dumps([m.event.message['params']['update'].get('used', 'absent')\n"
            "    for m in acp_notebook.messages(method='session/update')\n"
            "    if m.event.message['params']['update'].get('sessionUpdate') == 'usage_update']))"
        )
        return list(json.loads(said))


def open_notebook(agent: RealAgent, model: LoopbackModel, *, keyless: bool = False) -> Notebook:
    """A kernel for ``agent`` in a fresh place; ``keyless``: without its key (its key's
    variables set empty, its key's files not written)."""
    executables = agent.install()
    place = Place.make()
    bin_dir = place.base / "bin"
    bin_dir.mkdir()
    for name, path in executables.items():
        (bin_dir / name).symlink_to(path)
    agent.configure(place.home, model, keyless=keyless)
    env = agent.environment(model, bin_dir)
    if keyless:
        env.update({key: "" for key in agent.key_vars})
    kernel, mark = start_kernel(place, env)
    return Notebook(agent, kernel, place, model, mark)


@pytest.fixture(scope="module", params=CHECKED)
def notebook(request: pytest.FixtureRequest, model: LoopbackModel) -> Iterator[Notebook]:
    agent = AGENTS[request.param]
    opened = open_notebook(agent, model)
    try:
        if agent.login:
            said = opened.kernel.text(f"%acp -a {agent.preset} --login {agent.login}")
            assert "Logged in" in said, said
        yield opened
    finally:
        opened.kernel.shutdown()
        opened.place.remove()


def test_a_plain_turn_ends_with_the_models_reply(notebook: Notebook) -> None:
    turn = notebook.turn("say hello", Script(reply="Hello from the loopback model, plainly."))
    assert ENDED in turn.plain, turn.describe()
    assert "plainly" in turn.markdown
    bugs = notebook.agent.bugs
    if "title" in bugs:
        # The agent's bug: the first turn's title is its prompt, the context sent with it too.
        assert "Session title: say hello Cell [" in turn.plain, turn.describe()
    if "warning in the reply" in bugs:
        # The agent's bug: its own warning is sent as the model's words.
        assert "Model metadata for `mock-model` not found" in turn.plain, turn.describe()
    if "usage used" in bugs:
        # The agent's bug: the context's use is null (shown as no "Context:" line).
        used = notebook.usage_used()
        assert used and None in used, used
        assert "Context:" not in turn.plain, turn.describe()


def test_the_previous_cell_and_a_frame_reach_the_model(notebook: Notebook) -> None:
    notebook.kernel.text(
        "import pandas as pd\n"
        "def add_vat(price):\n"
        "    return price * 1.2\n"
        "prices = pd.DataFrame({'net_price_eur': [10, 20, 30]})\n"
    )
    since = notebook.model.mark()
    turn = notebook.turn("what does add_vat do to {prices}?", Script(reply="It adds VAT."))
    assert ENDED in turn.plain, turn.describe()
    sent = notebook.sent_to_model(since)
    assert "def add_vat" in sent and "net_price_eur" in sent


def test_run_code_allowed_defines_a_variable_in_the_kernel(notebook: Notebook) -> None:
    script = Script(
        reply="Defined it.", calls=(Call("run_code", {"code": "from_the_agent = 6 * 7"}),)
    )
    turn = notebook.turn("define from_the_agent", script, "-p allow")
    assert ENDED in turn.plain, turn.describe()
    assert notebook.kernel.text("print(from_the_agent)").strip() == "42", turn.describe()


def test_run_code_denied_never_runs(notebook: Notebook) -> None:
    script = Script(reply="It was denied.", calls=(Call("run_code", {"code": "denied_name = 1"}),))
    turn = notebook.turn("define denied_name", script, "-p deny")
    assert ENDED in turn.plain, turn.describe()
    # How the call reads after differs (qwen-code leaves it pending), and the option's name.
    assert "(chosen by policy deny)" in turn.plain, turn.describe()
    if "rejected call" in notebook.agent.bugs:
        # The agent's bug: it never says how the call it asked about ended.
        assert "· ⏳ pending" in turn.plain, turn.describe()
    assert notebook.kernel.text("print('denied_name' in globals())").strip() == "False"


def test_list_variables_in_a_headless_turn_reaches_the_model(notebook: Notebook) -> None:
    notebook.kernel.text("secret_ratio_for_the_agent = 0.125")
    since = notebook.model.mark()
    script = Script(reply="Listed them.", calls=(Call("list_variables", {}),))
    # Without the cells as context, only the tool's answer can name the variable.
    turn = notebook.turn("which variables are there?", script, "--no-context")
    assert ENDED in turn.plain, turn.describe()
    assert "secret_ratio_for_the_agent" in notebook.sent_to_model(since), turn.describe()


def test_a_notebook_rule_lets_run_code_run_unasked(notebook: Notebook) -> None:
    kernel = notebook.kernel
    kernel.text('%config AcpMagics.permission_rules = ["allow notebook run_code"]')
    try:
        script = Script(reply="Ran it.", calls=(Call("run_code", {"code": "by_rule = 'ok'"}),))
        turn = notebook.turn("define by_rule", script)
    finally:
        kernel.text("%config AcpMagics.permission_rules = []")
    assert ENDED in turn.plain, turn.describe()
    if "notebook rule" in notebook.agent.bugs:
        # The agent's bug: its request is a call of no known tool, which no rule decides.
        assert "Reject (chosen by policy ask without a UI)" in turn.plain, turn.describe()
        assert kernel.text("print('by_rule' in globals())").strip() == "False"
        return
    assert "chosen by rule `allow notebook run_code`" in turn.plain, turn.describe()
    assert kernel.text("print(by_rule)").strip() == "ok"


def test_the_agents_own_write_outside_the_folder_is_refused_and_the_turn_ends(
    notebook: Notebook,
) -> None:
    agent = notebook.agent
    target = notebook.place.outside / f"{agent.preset}-outside.txt"
    call = Call(agent.write_tool, agent.write_args(target, "from the agent"))
    since = notebook.model.mark()
    turn = notebook.turn("write the file", Script(reply="I tried.", calls=(call,)), "-p allow")
    assert ENDED in turn.plain, turn.describe()
    assert not target.exists(), turn.describe()
    # The model asked for the write and was answered: the agent tried it.
    asked_again = notebook.sent_to_model(since + 1)
    assert str(target) in asked_again, turn.describe()


def test_the_agents_own_write_inside_the_folder_is_allowed(notebook: Notebook) -> None:
    agent = notebook.agent
    target = notebook.place.project / f"{agent.preset}-inside.txt"
    call = Call(agent.write_tool, agent.write_args(target, "from the agent"))
    turn = notebook.turn("write the file", Script(reply="Written.", calls=(call,)), "-p allow")
    assert ENDED in turn.plain, turn.describe()
    if "new file" in agent.bugs:
        # The agent's bug: the client's answer that the file is not there ends its write.
        assert "Error checking existing file" in turn.plain, turn.describe()
        assert not target.exists(), turn.describe()
        return
    assert target.exists() and target.read_text() == "from the agent", turn.describe()


def test_an_interrupt_ends_the_turn_and_the_next_one_runs(notebook: Notebook) -> None:
    kernel, model = notebook.kernel, notebook.model
    model.play(Script(reply="Too late.", hold=True))
    try:
        turn = kernel.execute(
            f"%acp -a {notebook.agent.preset} wait for it", allow_stdin=False, until=None
        )
        kernel.wait_for(model.holding.is_set, "the agent's request to the model")
        kernel.interrupt()
        turn.wait("idle")
    finally:
        model.release()
    assert [e.content["ename"] for e in turn.errors] == ["TurnInterrupted"], turn.describe()
    again = notebook.turn("say hello again", Script(reply="Back again."))
    assert ENDED in again.plain, again.describe()


@pytest.mark.parametrize("preset", CHECKED)
def test_without_a_key_the_cell_says_what_to_set_and_no_process_outlives_the_kernel(
    preset: str, model: LoopbackModel
) -> None:
    agent = AGENTS[preset]
    opened = open_notebook(agent, model, keyless=True)
    try:
        model.play(Script(reply="Should not be reached."))
        line = f"%acp -a {preset} {agent.no_key_options} say hello".replace("  ", " ")
        # A safety net for a start and a whole `-t`, not a bound on either.
        turn = opened.kernel.execute(line, allow_stdin=False, until="idle", timeout=2 * SAFETY)
        shown = turn.describe()
        assert agent.no_key_hint in shown, shown
        # Started: still running beside the kernel, or ended by itself (fast-agent).
        started = len(processes_marked(opened.mark)) > 1 or f"`{preset}` exited" in shown
        assert started, "the agent was not started"
    finally:
        opened.kernel.shutdown()
        opened.place.remove()
    deadline = time.monotonic() + SAFETY
    while processes_marked(opened.mark) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_marked(opened.mark) == []
