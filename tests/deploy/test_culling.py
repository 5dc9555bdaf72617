"""A kernel its JupyterLab server culls for idleness (``cull_idle_timeout``) or restarts
takes its agent, the agent's terminals and the notebook tools' relay with it; after the
restart ``%acp --resume`` continues the notebook's last session (``lifecycle.py``).

The server culls a kernel idle for 3 s with no page connected (the default: a connected
kernel is never culled), so the kernel is culled only once the test closes its page, as
when a user closes the tab and walks away with a turn still running.
"""

from __future__ import annotations

import pytest

from ..browser.conftest import NotebookPage
from .lifecycle import check_ended, check_restarted_then_resumed, culled_once_left

CULL = ["--MappingKernelManager.cull_idle_timeout=3", "--MappingKernelManager.cull_interval=1"]


@pytest.fixture(scope="module")
def lab_args() -> list[str]:
    return ["--YDocExtension.disable_rtc=True", *CULL]


def test_a_kernel_the_server_culls_leaves_no_agent_terminal_or_relay(
    notebook: NotebookPage,
) -> None:
    check_ended(notebook, culled_once_left(notebook))


def test_a_kernel_the_server_restarts_leaves_nothing_and_resume_continues_its_session(
    notebook: NotebookPage,
) -> None:
    check_restarted_then_resumed(notebook)
