"""How a %acp line is read: options before the prompt, controls never mistaken for a prompt
(and the reverse), the cell transformations that keep the cell busy, tab completion, and
notebook variables as context."""

from __future__ import annotations

import json

import pytest

from acp_notebook.notebook.load.completion import completions
from acp_notebook.notebook.load.options import OptionError, parse_line
from acp_notebook.notebook.load.transformers import (
    AWAIT_HELPER,
    await_transformer,
    escape_transformer,
)
from acp_notebook.notebook.prompt.context import NotebookPrompt, attach_variables
from acp_notebook.protocol import models as m


def test_a_prompt_that_looks_like_a_control_is_a_prompt() -> None:
    options = parse_line("status of the build")
    assert options.control is None and options.prompt == "status of the build"
    assert parse_line("--status").control == "status"


def test_options_come_first_and_the_prompt_is_kept_verbatim() -> None:
    options = parse_line('-a claude -s review -p allow -t 30 don\'t   touch   the "tests"')
    assert (options.agent, options.session, options.permissions, options.timeout) == (
        "claude",
        "review",
        "allow",
        30.0,
    )
    assert options.prompt == 'don\'t   touch   the "tests"'


def test_a_quoted_agent_command_is_one_value() -> None:
    options = parse_line('-a "fast-agent --no-update-check acp --model passthrough" Say hello.')
    assert options.agent == "fast-agent --no-update-check acp --model passthrough"
    assert options.prompt == "Say hello."


def test_double_dash_ends_the_options() -> None:
    assert (
        parse_line("-- --status is what I want to know about").prompt
        == "--status is what I want to know about"
    )


def test_cell_magic_body_is_the_prompt() -> None:
    options = parse_line("-s notes", "line one\nline two\n")
    assert options.session == "notes" and options.prompt == "line one\nline two"


def test_valued_controls_take_their_value() -> None:
    assert (parse_line("--load abc").control, parse_line("--load abc").control_value) == (
        "load",
        "abc",
    )
    resume = parse_line("--resume -s other")
    assert resume.control == "resume" and resume.control_value is None and resume.session == "other"
    assert parse_line("--set model=demo-large").control_value == "model=demo-large"


@pytest.mark.parametrize(
    "line, message",
    [
        ("-x hello", "Unknown option -x"),
        ("-p sometimes hi", "ask, allow, deny"),
        ("-t soon hi", "number of seconds"),
        ("-t -1 hi", "must be positive"),
        ("--status --cancel", "one control at a time"),
        ("--status now please", "takes no prompt"),
        ("--load", "needs a value"),
        ("-a", "needs a value"),
    ],
)
def test_malformed_lines_say_what_is_wrong(line: str, message: str) -> None:
    with pytest.raises(OptionError, match=message):
        parse_line(line)


def test_top_level_acp_lines_are_awaited_so_the_cell_stays_busy() -> None:
    # The escape transformer runs first: a trailing "?" must not become a help request.
    escaped = escape_transformer(["%acp What can you do?\n"])
    assert escaped == ["get_ipython().run_line_magic('acp', 'What can you do?')\n"]
    assert await_transformer(escaped) == [f"await {AWAIT_HELPER}('What can you do?', None)\n"]
    cell = ["get_ipython().run_cell_magic('acp', '-s x', 'body\\n')\n"]
    assert await_transformer(cell) == [f"await {AWAIT_HELPER}('-s x', 'body\\n')\n"]
    # Inside a block it stays a plain (non-blocking) magic call.
    nested = ["for i in range(2):\n", "    get_ipython().run_line_magic('acp', 'hi')\n"]
    assert await_transformer(nested) == nested


def test_completion_offers_options_presets_policies_and_commands() -> None:
    def commands() -> list[str]:
        return ["read", "refuse", "help"]

    assert completions("%acp --st", "--st", commands) == ["--status", "--stop"]
    assert "claude" in completions("%acp -a cl", "cl", commands)
    assert completions("%acp -p a", "a", commands) == ["ask", "allow"]
    assert completions("%acp /re", "/re", commands) == ["/read", "/refuse"]
    assert completions("%acp -a demo -s x /re", "/re", commands) == ["/read", "/refuse"]
    # A slash command is the prompt's first word: later, a `/` starts a path.
    assert completions("%acp /read /re", "/re", commands) == []


def test_variables_become_embedded_resources_and_other_braces_stay() -> None:
    namespace = {"sales": [{"month": "2026-01", "units": 3}], "note": "plain text", "_private": 1}
    text, attachments, unknown = attach_variables(
        "Compare {sales} with {note}, not {missing} or {_private}; {{sales}} literal", namespace
    )
    assert text == "Compare `sales` with `note`, not {missing} or {_private}; {sales} literal"
    assert unknown == ["missing", "_private"]
    assert [(a.summary.name, a.summary.mime_type) for a in attachments] == [
        ("sales", "application/json"),
        ("note", "text/plain"),
    ]
    assert json.loads(attachments[0].summary.text) == namespace["sales"]
    prompt = NotebookPrompt("what about `sales`?", tuple(attachments[:1]))
    blocks = prompt.blocks(m.PromptCapabilities(embedded_context=True))
    assert isinstance(blocks[1], m.EmbeddedResourceContentBlock)
    assert blocks[1].to_wire()["resource"]["uri"] == "notebook://variables/sales"
    inline = prompt.blocks(m.PromptCapabilities())
    assert all(isinstance(b, m.TextContentBlock) for b in inline)
    assert "`sales`" in inline[1].text and '"units": 3' in inline[1].text


def test_attributes_keys_and_cells_name_values_but_calls_do_not() -> None:
    namespace = {"d": {"k": [1, 2]}, "In": ["", "x = 1"], "Out": {1: 42}}
    text, attachments, unknown = attach_variables(
        "{d['k']} {In[1]} {Out[1]} {d.get('k')} {d.keys}", namespace
    )
    assert [a.summary.name for a in attachments] == ["d['k']", "In[1]", "Out[1]", "d.keys"]
    assert unknown == ["d.get('k')"]
    assert "{d.get('k')}" in text
