"""The comm-status wrapper is installed only on kernels with a concurrent comm path."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_notebook.notebook import comm_status


class OldKernel:
    """ipykernel 6.x / 7.0–7.3: no concurrent dispatch."""

    session = object()

    async def dispatch_shell(self, msg: Any) -> None:
        pass

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        pass


class Shell:
    def __init__(self, kernel: object) -> None:
        self.kernel = kernel


def test_kernels_without_a_concurrent_comm_path_are_left_alone() -> None:
    kernel = OldKernel()
    assert not comm_status.has_concurrent_comms(kernel)
    assert comm_status.install(Shell(kernel)) is None
    assert "dispatch_shell" not in vars(kernel)
    with comm_status.awaiting():  # a no-op there
        pass
    comm_status.uninstall()


def test_a_plain_ipython_shell_has_no_kernel_to_wrap() -> None:
    assert comm_status.install(object()) is None


class NewKernel:
    """ipykernel 7.4's shape: ``dispatch_shell(..., concurrent=...)`` and the main lock."""

    def __init__(self) -> None:
        self._main_asyncio_lock = asyncio.Lock()
        self.session = object()
        self.dispatched: list[bool] = []

    async def dispatch_shell(
        self, msg: Any, /, subshell_id: str | None = None, *, concurrent: bool = False
    ) -> None:
        self.dispatched.append(concurrent)

    def get_parent(self, channel: str = "shell") -> dict[str, Any]:
        return {"header": {"msg_id": "cell"}}

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        raise AssertionError("no status is published when no %acp cell awaits")


def test_the_wrapper_passes_through_unless_a_cell_awaits_and_unloads_cleanly() -> None:
    kernel = NewKernel()
    status = comm_status.install(Shell(kernel))
    try:
        assert status is not None and "dispatch_shell" in vars(kernel)
        asyncio.run(kernel.dispatch_shell([], concurrent=True))
        asyncio.run(kernel.dispatch_shell([]))
        assert kernel.dispatched == [True, False]
    finally:
        comm_status.uninstall()
    assert "dispatch_shell" not in vars(kernel)
