"""A flood of agent text costs bounded memory: a run of text keeps its beginning and its
end, with a note in place saying how much was dropped (issue 11, medium)."""

from __future__ import annotations

import re
import subprocess
import sys

from acp_notebook.client.transcript import TEXT_RUN_HEAD, TEXT_RUN_TAIL, TextRun

from ..cli.test_cli import CLI, SAFETY
from .test_cli_payloads import hostile


def test_a_long_run_keeps_its_head_and_tail_with_a_note_of_what_was_dropped():
    run = TextRun("start ")
    chunk = "x" * 99_999 + "\n"
    for n in range(200):  # 20 MB
        run.append(chunk if n < 199 else "the very end")
    text = run.text
    assert run.received == 6 + 199 * 100_000 + len("the very end")
    assert len(text) <= TEXT_RUN_HEAD + 2 * TEXT_RUN_TAIL + 200
    assert text.startswith("start xxx") and text.endswith("xxx\nthe very end")
    assert "MB of text dropped here, to bound memory" in text
    (note,) = re.findall(r"\n\n… [^…]* …\n\n", text)
    assert run.dropped == run.received - len(text) + len(note)
    # the live view shows the beginning and the note, a prefix that only grows at its end
    assert run.live_text.startswith(text[:TEXT_RUN_HEAD])
    assert run.live_text.endswith("to bound memory …\n\n")


def test_a_short_run_is_kept_whole():
    run = TextRun("a")
    run.append("b")
    assert run.text == run.live_text == "ab" and run.dropped == 0


def test_the_command_line_prints_head_and_tail_of_a_text_flood_in_bounded_memory(tmp_path):
    # Run through a parent of its own, so the peak RSS read is the command's alone.
    measure = (
        "import resource, subprocess, sys;"
        "done = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL);"
        "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)"
    )
    result = subprocess.run(
        [sys.executable, "-c", measure, *CLI, "run", "flood 20", "--agent", hostile()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=SAFETY,
        stdin=subprocess.DEVNULL,
    )
    code, max_rss_kb = (int(word) for word in result.stderr.split()[-2:])
    assert code == 0, result.stderr[-2000:]
    assert "\nline 0\nline 1\n" in result.stdout
    assert "of text dropped here, to bound memory" in result.stdout
    assert result.stdout.endswith("stop reason: end_turn\n")
    # 20 MB of text went through (about 180 MB of RSS before the bound); far less now
    assert max_rss_kb < 150 * 1024
