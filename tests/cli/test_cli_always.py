"""``acp-notebook run --permissions ask`` on a terminal: "Allow always" on a call rated
risky asks a second question before it binds; no goes back to the options."""

from __future__ import annotations

import os
import pty
import subprocess
import threading
from pathlib import Path

from .test_cli import CLI, SAFETY


class Terminal:
    """The CLI with stdin a pseudo-terminal; its stderr (where it asks) read as it comes."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        self._controller, terminal = pty.openpty()
        self.process = subprocess.Popen(
            [*CLI, *args], cwd=cwd, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        os.close(terminal)
        self._errors: list[bytes] = []
        self._grew = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        stderr = self.process.stderr
        assert stderr is not None
        for chunk in iter(lambda: stderr.read1(4096), b""):  # type: ignore[attr-defined]
            with self._grew:
                self._errors.append(chunk)
                self._grew.notify_all()

    @property
    def shown(self) -> str:
        return b"".join(self._errors).decode()

    def answer(self, prompt: str, count: int, line: str) -> None:
        """When ``prompt`` has been shown ``count`` times, type ``line``."""
        with self._grew:
            shown = self._grew.wait_for(lambda: self.shown.count(prompt) >= count, SAFETY)
        assert shown, self.shown
        os.write(self._controller, line.encode() + b"\n")

    def finish(self) -> str:
        try:
            out, _ = self.process.communicate(timeout=SAFETY)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
            os.close(self._controller)
        self._reader.join(SAFETY)
        return out.decode()


def test_allow_always_on_a_risky_command_asks_again_and_no_returns_to_the_options(
    tmp_path: Path,
) -> None:
    run = Terminal(
        ["run", "/run curl -s https://example.invalid/x", "--permissions", "ask"], tmp_path
    )
    run.answer("Choice: ", 1, "2")  # [2] Allow always
    run.answer("[y/N]: ", 1, "n")
    run.answer("Choice: ", 2, "3")  # back at the options: [3] Reject
    out = run.finish()

    shown = run.shown
    assert "🔸 Caution" in shown
    assert "Allow every future execute call like this one without asking?" in shown
    assert "Permission: Reject (chosen by user)" in out, out + shown


def test_yes_to_the_second_question_allows_always(tmp_path: Path) -> None:
    run = Terminal(
        ["run", "/run curl -s https://example.invalid/x", "--permissions", "ask"], tmp_path
    )
    run.answer("Choice: ", 1, "2")
    run.answer("[y/N]: ", 1, "y")
    out = run.finish()

    assert "Permission: Allow always (chosen by user)" in out, out + run.shown
