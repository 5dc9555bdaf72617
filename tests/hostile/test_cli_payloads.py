"""A hostile agent against the real command line: deep, unparseable, surrogate and
terminal-escape payloads neither kill the turn nor reach the terminal raw (issue 11); an agent
that never answers the handshake: test_handshake_timeout.py."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from acp_notebook.cli.output import _SHOWN, terminal_safe
from acp_notebook.protocol.bounds import CUT_NOTE

from ..cli.test_cli import cli, read_trace

HOSTILE = Path(__file__).parent / "agents" / "hostile_agent.py"


def hostile(*options: str) -> str:
    return shlex.join([sys.executable, str(HOSTILE), *options])


@pytest.mark.parametrize("prompt", ["deep 900", "deep 100000"])
def test_raw_input_nested_deeper_than_the_bound_renders_cut_with_a_note(tmp_path, prompt):
    result = cli("run", prompt, "--agent", hostile(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert CUT_NOTE in result.stdout
    assert "after deep" in result.stdout
    assert result.stdout.endswith("stop reason: end_turn\n")


@pytest.mark.parametrize("prompt", ["toodeep 1000", "garbage"])
def test_lines_that_are_not_messages_are_skipped_and_the_turn_goes_on(tmp_path, prompt):
    result = cli("run", prompt, "--agent", hostile(), "--trace", "t.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"after {prompt.split()[0]}" in result.stdout
    assert any("invalid" in record for record in read_trace(tmp_path / "t.jsonl"))


def test_lone_surrogates_reach_stdout_and_the_trace_as_replacement_characters(tmp_path):
    result = cli("run", "surrogate", "--agent", hostile(), "--trace", "t.jsonl", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "bad \ufffd text" in result.stdout and "title \ufffd" in result.stdout
    trace = (tmp_path / "t.jsonl").read_bytes().decode("utf-8")  # strict: valid UTF-8
    texts = json.dumps(read_trace(tmp_path / "t.jsonl"), ensure_ascii=False)
    assert "bad \ufffd text" in texts and "title \ufffd" in trace


def test_terminal_escapes_in_agent_text_and_titles_are_shown_not_obeyed(tmp_path):
    result = cli("run", "escapes", "--agent", hostile(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for control in ("\x1b", "\x07", "\r", "\x9b", "\u202e"):
        assert control not in result.stdout + result.stderr
    assert "text \u241b]52;c;cm0gLXJmIH4=\u2407\u241b[1A" in result.stdout
    assert "title \u241b]52" in result.stdout


@pytest.mark.parametrize(
    "text",
    [
        "plain ascii\n\ttabbed",
        "naïve — ✓ 🧑 text with nothing to replace",
        "bell\a, escape \x1b]52;c;aGk=\x07 and \x1b[1A\x1b[2K, DEL\x7f",
        "C1 \x85\x9b and bidi \u202e\u2066 next to — non-ASCII",
        "colours pass: \x1b[1mbold\x1b[0m, \x1b[8mconceal\x1b[0m does not",
    ],
)
def test_terminal_safe_text_is_the_text_with_each_obeyed_character_shown(text: str) -> None:
    shown = "".join(_SHOWN.get(ord(c), c) for c in text)
    if "\x1b[1m" in text:  # the command's own styling passes, conceal does not
        shown = shown.replace("␛[1m", "\x1b[1m").replace("␛[0m", "\x1b[0m")
    assert terminal_safe(text) == shown
