"""The command line and the demo agent start without Jupyter: ``acp-notebook run`` in a
plain shell must not pay for (or depend on) IPython, ipykernel or ipywidgets."""

from __future__ import annotations

import subprocess
import sys

import pytest

#: Top-level packages of the Jupyter and widget stack, and the layers built on them.
JUPYTER = {"IPython", "ipykernel", "ipywidgets", "jupyter_client", "comm", "traitlets"}
ABOVE_THE_CLIENT = ("acp_notebook.ui", "acp_notebook.notebook")


def imported_by(module: str) -> set[str]:
    """Every module ``python -X importtime -c "import MODULE"`` reports."""
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return {
        line.rsplit("|", 1)[1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    }


@pytest.mark.parametrize(
    "module", ["acp_notebook.cli", "acp_notebook.agents.demo", "acp_notebook.lab"]
)
def test_importing_it_loads_no_jupyter_or_widget_code(module: str) -> None:
    modules = imported_by(module)
    assert module in modules  # the report is read right
    assert {name for name in modules if name.split(".")[0] in JUPYTER} == set()
    assert [name for name in modules if name.startswith(ABOVE_THE_CLIENT)] == []


def test_the_command_and_its_run_start_the_agent_before_loading_the_models() -> None:
    # `acp-notebook run` starts the agent with what cli.run imports, then loads the client
    # (cli.turn) while the agent starts: the protocol models are loaded once it runs.
    modules = imported_by("acp_notebook.cli.run")
    assert "acp_notebook.cli.commands" in modules
    assert "acp_notebook.protocol.models" not in modules
    # Nor pydantic, nor what only some turns use: --rule's matcher, --trace's writer.
    later = {"pydantic", "wcmatch", "acp_notebook.client.rules", "acp_notebook.client.trace"}
    assert later & modules == set()
    assert "acp_notebook.protocol.models" in imported_by("acp_notebook.cli.turn")


def test_a_turn_loads_the_shell_reader_and_the_risk_rating_only_for_a_command() -> None:
    # Every session makes its permission rules and guard; the command parser and the risk
    # rating they use are loaded where a command is read (client/rules.py), so a turn
    # that runs no command does not pay for them.
    modules = imported_by("acp_notebook.cli.turn")
    assert "acp_notebook.client.rules" in modules  # the report is read right
    reader = {"acp_notebook.client.shell", "acp_notebook.client.shell_lexer"}
    assert (reader | {"acp_notebook.client.danger"}) & modules == set()


def test_the_cancel_grace_help_names_the_default_the_session_applies(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # The parser offers --cancel-grace without loading the session: its help states the
    # session's default in words, so the two must agree.
    from acp_notebook.cli.commands import build_parser
    from acp_notebook.client.session import DEFAULT_CANCEL_GRACE

    parser = build_parser()
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--help"])
    assert f"(default: {DEFAULT_CANCEL_GRACE:g})" in " ".join(capsys.readouterr().out.split())
    assert parser.parse_args(["run", "hi"]).cancel_grace is None
    assert "acp_notebook.client.session" not in imported_by("acp_notebook.cli.commands")
