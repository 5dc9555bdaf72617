"""The comm-status wrapper is installed only on kernels with a concurrent comm path."""

from __future__ import annotations

import asyncio
from typing import Any

from acp_notebook.notebook.turn import comm_status


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
    assert "dispatch_shell" not in vars(kernel) and "_publish_status" not in vars(kernel)
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
    assert "dispatch_shell" not in vars(kernel) and "_publish_status" not in vars(kernel)


class Session:
    """Reads a raw message's header the way ``jupyter_client.Session`` does."""

    def feed_identities(self, msg: list[Any], copy: bool = True) -> tuple[list[Any], list[Any]]:
        return [], msg

    def deserialize(self, frames: list[Any], content: bool = True, copy: bool = True) -> Any:
        return {"header": frames[0]}


class AwaitingKernel(NewKernel):
    """Records the statuses published while an ``%acp`` cell awaits."""

    def __init__(self) -> None:
        super().__init__()
        self.session = Session()
        self.statuses: list[tuple[str, str]] = []

    async def dispatch_shell(
        self, msg: Any, /, subshell_id: str | None = None, *, concurrent: bool = False
    ) -> None:
        if not concurrent:  # what ipykernel publishes itself outside the concurrent path
            self._publish_status("busy", "shell", parent={"header": msg[0]})
            self._publish_status("idle", "shell", parent={"header": msg[0]})

    def _publish_status(self, status: str, channel: str, parent: Any = None) -> None:
        parent = parent if parent is not None else self.get_parent(channel)
        header = parent.get("header", parent)
        self.statuses.append((status, header["msg_id"]))


def test_while_a_cell_awaits_each_message_gets_its_status_and_the_cell_stays_busy() -> None:
    kernel = AwaitingKernel()
    status = comm_status.install(Shell(kernel))
    assert status is not None
    try:
        with comm_status.awaiting():
            # ipykernel 7.4's concurrent path on the main shell: no status of its own.
            asyncio.run(kernel.dispatch_shell([{"msg_id": "update-1"}], concurrent=True))
            # A comm subshell's thread: the kernel's own busy/idle, then the cell's busy.
            asyncio.run(kernel.dispatch_shell([{"msg_id": "update-2"}], subshell_id="comms"))
            # The control channel's request (JupyterLab creates the comm subshell so).
            kernel._publish_status("busy", "control", parent={"header": {"msg_id": "ctl"}})
            kernel._publish_status("idle", "control", parent={"header": {"msg_id": "ctl"}})
            # The cell's own idle is never followed by a busy.
            kernel._publish_status("idle", "shell")
        asyncio.run(kernel.dispatch_shell([{"msg_id": "after"}], subshell_id="comms"))
    finally:
        comm_status.uninstall()
    assert kernel.statuses == [
        ("busy", "update-1"),
        ("idle", "update-1"),
        ("busy", "cell"),
        ("busy", "update-2"),
        ("idle", "update-2"),
        ("busy", "cell"),
        ("busy", "ctl"),
        ("idle", "ctl"),
        ("busy", "cell"),
        ("idle", "cell"),
        # The cell no longer awaits: its own idle is the kernel's last word.
        ("busy", "after"),
        ("idle", "after"),
    ]
