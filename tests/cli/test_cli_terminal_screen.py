"""What ``acp-notebook run`` leaves on a terminal's screen: its output through a real
pseudo-terminal of a known size, fed to a terminal emulator (pyte). The plan is one block
redrawn in place, not reprinted at every update; a tool call's raw input reads as
``key: value`` lines, not JSON in fences."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pyte

CLI = [sys.executable, "-m", "acp_notebook.cli", "run"]
SAFETY = 120  # seconds; a safety net, never a performance bound
COLUMNS, LINES = 100, 60


def screen_of(args: list[str], cwd: Path) -> tuple[list[str], bytes]:
    """``acp-notebook run ARGS`` (the demo agent) with stdout a COLUMNS×LINES terminal:
    the screen it left (lines, right spaces cut) and the bytes it wrote."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", LINES, COLUMNS, 0, 0))
    process = subprocess.Popen(
        [*CLI, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=terminal, stderr=subprocess.PIPE
    )
    os.close(terminal)
    written = bytearray()
    try:
        while True:
            ready, _, _ = select.select([controller], [], [], SAFETY)
            assert ready, f"no output within {SAFETY} s; got {bytes(written)!r}"
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal's other end closed: the process is done
                break
            if not chunk:
                break
            written += chunk
        assert process.wait(SAFETY) == 0, process.stderr.read() if process.stderr else ""
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        os.close(controller)
    screen = pyte.Screen(COLUMNS, LINES)
    pyte.ByteStream(screen).feed(bytes(written))
    return [line.rstrip() for line in screen.display], bytes(written)


def test_on_a_terminal_the_plan_is_one_block_redrawn_in_place(tmp_path: Path) -> None:
    # The demo's /plan sends eleven plan updates; each was printed below the last, so the
    # screen held eleven 6-line plans for one plan.
    lines, written = screen_of(["/plan"], tmp_path)

    assert lines.count("Plan") == 1, "\n".join(lines)
    plan = lines.index("Plan")
    assert lines[plan + 1 : plan + 6] == [
        "- [x] Read the files involved (high)",
        "- [x] Propose the change as a diff (high)",
        "- [x] Ask for permission before writing (medium)",
        "- [x] Run the tests (medium)",
        "- [x] Summarise what changed (low)",
    ]
    # Below the steps it tracked, above how the turn ended.
    assert lines.index("5. Summarise what changed… done.") < plan
    assert plan < next(i for i, line in enumerate(lines) if line.startswith("Stop reason:"))
    assert b"\x1b[6F\x1b[J" in written  # the six rows of the plan taken back, then redrawn


def test_on_a_terminal_raw_input_reads_as_key_value_lines(tmp_path: Path) -> None:
    lines, _ = screen_of(["/fail"], tmp_path)

    raw = lines.index("  Raw input:")
    assert lines[raw + 1] == "    fail: true"
    assert not [line for line in lines if "```" in line or line.strip() in ("{", "}")]
