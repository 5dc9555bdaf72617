"""`acp-notebook run --permissions ask` on a real terminal (a pty) against a hostile agent:
two requests at once are asked one at a time, and the answer typed goes to the question on
screen; a `--timeout` while a question waits answers it `cancelled` and the CLI exits."""

from __future__ import annotations

import json
import os
import pty
import shlex
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

AGENT = Path(__file__).resolve().parent / "agents" / "unasked_actions.py"
SCRIPT = Path(sys.executable).parent / "acp-notebook"
CLI = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "acp_notebook"]
#: A safety net against hangs, never a performance bound.
SAFETY = 30.0


class Terminal:
    """The CLI with a pty as its stdin; stderr (where questions go) read as it comes."""

    def __init__(self, cwd: Path, actions: list[Any], *options: str) -> None:
        agent = shlex.join([sys.executable, str(AGENT), json.dumps(actions)])
        self.controller, terminal = pty.openpty()
        self.process = subprocess.Popen(
            [*CLI, "run", "go", "--agent", agent, "--permissions", "ask", *options],
            cwd=cwd,
            stdin=terminal,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        os.close(terminal)
        self.screen = ""
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for chunk in iter(lambda: stderr.read1(4096), b""):
            with self._changed:
                self.screen += chunk.decode(errors="replace")
                self._changed.notify_all()

    def wait_for(self, text: str, count: int = 1) -> str:
        """The screen once ``text`` is on it ``count`` times."""
        with self._changed:
            assert self._changed.wait_for(lambda: self.screen.count(text) >= count, SAFETY), (
                self.screen
            )
            return self.screen

    def type(self, line: str) -> None:
        with self._changed:
            self.screen += f"<typed {line}>"
        os.write(self.controller, line.encode() + b"\n")

    def finish(self) -> tuple[int, str]:
        safety = threading.Timer(SAFETY, self.process.kill)  # a CLI that hangs fails
        safety.start()
        try:
            # Not communicate(): it would read stderr too, away from the reader thread.
            stdout = self.process.stdout
            assert stdout is not None
            out = stdout.read()
            self.process.wait(SAFETY)
        finally:
            safety.cancel()
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            os.close(self.controller)
        self._reader.join(SAFETY)
        return self.process.returncode, out.decode()


def test_two_requests_at_once_are_asked_one_at_a_time(tmp_path: Path) -> None:
    sent = tmp_path / "sent"
    calls = [
        {
            "toolCallId": "list",
            "title": "List files",
            "kind": "execute",
            "rawInput": {"command": "ls"},
        },
        {
            "toolCallId": "wipe",
            "title": "Clean up",
            "kind": "execute",
            "rawInput": {"command": "rm -rf ~"},
        },
    ]
    terminal = Terminal(tmp_path, [["race", str(sent), calls]])
    first = terminal.wait_for("Choice: ")
    while not sent.exists():  # the agent sent both requests before the answer is typed
        terminal.wait_for("Choice: ")
    terminal.type("1")
    second = terminal.wait_for("Choice: ", 2)
    terminal.type("2")
    code, out = terminal.finish()
    assert code == 0, terminal.screen
    before_answer = second.split("<typed 1>")[0]
    assert before_answer.count("The agent asks for permission:") == 1, before_answer
    on_screen = "list" if "List files" in first else "wipe"
    other = "wipe" if on_screen == "list" else "list"
    assert f"{on_screen}=allow" in out and f"{other}=reject" in out, (terminal.screen, out)


def test_a_timeout_answers_the_waiting_question_cancelled_and_exits(tmp_path: Path) -> None:
    call = {"toolCallId": "p1", "title": "Edit", "kind": "edit", "locations": [{"path": "/x"}]}
    terminal = Terminal(tmp_path, [["ask", call]], "--timeout", "2")
    terminal.wait_for("Choice: ")
    code, out = terminal.finish()  # nobody types: the timeout must end the question
    assert "ask p1: cancelled" in out, (terminal.screen, out)
    assert code != 0 and "Traceback" not in terminal.screen
    assert "Cancelled (the turn timed out)" in terminal.screen
