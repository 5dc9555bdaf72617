"""The demo agent keeps a notebook's sessions across kernel restarts (in the per-user state
directory), so ``%acp --resume``, ``--load`` and ``--history`` work after a restart."""

from __future__ import annotations

import pytest

from .conftest import SAFETY, Kernel

pytestmark = pytest.mark.kernel


def restart(kernel: Kernel) -> None:
    """Restart the kernel as a frontend's Restart does, and load the extension again."""
    kernel.km.restart_kernel(now=False)
    kernel.kc.wait_for_ready(timeout=SAFETY)
    kernel.text("%load_ext acp_notebook")


def test_after_a_kernel_restart_resume_continues_the_demo_session(fresh_kernel: Kernel) -> None:
    kernel = fresh_kernel
    first = kernel.execute("%acp remember the word tangerine", allow_stdin=False, until="final")
    assert "Stop reason: end_turn" in first.plain, first.describe()

    restart(kernel)
    history = kernel.execute("%acp --history", allow_stdin=False, until="idle")
    shown = "\n".join(str(m.content["data"].get("text/markdown", "")) for m in history.displays)
    assert "demo-session-1" in shown, history.describe()
    resumed = kernel.execute("%acp --resume", allow_stdin=False, until="idle")
    assert "Resumed session demo-session-1" in resumed.stdout, resumed.describe()
    later = kernel.execute("%acp and now?", allow_stdin=False, until="final")
    assert "Stop reason: end_turn" in later.plain, later.describe()
    prompts = [
        msg["params"]["sessionId"]
        for direction, msg in kernel.agent_log()
        if direction == "send" and msg.get("method") == "session/prompt"
    ]
    assert prompts == ["demo-session-1"]  # the new kernel's agent: the same session
    loaded = kernel.execute("%acp -s replay --load demo-session-1", allow_stdin=False, until="idle")
    replayed = "\n".join(str(m.content["data"].get("text/markdown", "")) for m in loaded.displays)
    assert "remember the word tangerine" in replayed, loaded.describe()
