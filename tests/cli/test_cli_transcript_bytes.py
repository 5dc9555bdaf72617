"""The transcript ``acp-notebook run`` prints for a recorded mixed stream (thoughts, a plan
replaced, text in several messages, tool calls with text, a diff and a failure) is exactly
the recorded one, byte for byte, in both formats: the ingest path may get faster, never
different (tests/data/mixed_stream/, recorded before the hot path was tuned)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent.parent / "data" / "mixed_stream"
AGENT = Path(__file__).resolve().parent.parent / "agents" / "scripted_agent.py"
CLI = [sys.executable, "-m", "acp_notebook.cli", "run"]
SAFETY = 120  # seconds; a safety net, never a performance bound


@pytest.mark.parametrize(
    ("output_format", "recorded"), [("markdown", "transcript.md"), ("terminal", "terminal.txt")]
)
def test_the_printed_transcript_of_a_mixed_stream_is_the_recorded_one(
    tmp_path: Path, output_format: str, recorded: str
) -> None:
    # The stream's paths are under the run's directory, so they print relative to it.
    updates = tmp_path / "updates.json"
    updates.write_text(
        (DATA / "updates.json").read_text(encoding="utf-8").replace("$CWD", str(tmp_path)),
        encoding="utf-8",
    )
    agent = shlex.join([sys.executable, str(AGENT), "--updates", str(updates)])
    result = subprocess.run(
        [*CLI, "--format", output_format, "--cwd", str(tmp_path), "--agent", agent, "go"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=SAFETY,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == (DATA / recorded).read_bytes()
