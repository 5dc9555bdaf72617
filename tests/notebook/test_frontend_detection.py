"""Which view a turn gets: headless (no stdin), widgets, or plain text (a frontend that
allows stdin but has no widget manager: ``jupyter console``, qtconsole)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from acp_notebook.notebook.load import headless
from acp_notebook.notebook.load.headless import detect_frontend


class Kernel:
    """What detection reads of ipykernel's kernel: the request's content, the handlers."""

    def __init__(self, allow_stdin: bool) -> None:
        self.parent = {"content": {"allow_stdin": allow_stdin}}
        self.calls: list[str] = []
        self.shell_handlers: dict[str, Any] = {
            name: (lambda *args, name=name: self.calls.append(name))
            for name in ("comm_info_request", "comm_open", "comm_msg", "execute_request")
        }

    def get_parent(self) -> dict[str, Any]:
        return self.parent


class Shell:
    def __init__(self, kernel: Kernel) -> None:
        self.kernel = kernel
        self.user_ns: dict[str, Any] = {}


@pytest.fixture(autouse=True)
def clean(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("ACP_NOTEBOOK_HEADLESS", "ACP_NOTEBOOK_WIDGETS", "JPY_SESSION_NAME"):
        monkeypatch.delenv(name, raising=False)
    headless._comms_seen.clear()
    yield
    headless._comms_seen.clear()


def test_a_console_that_never_sent_a_comm_message_gets_plain_text() -> None:
    shell = Shell(Kernel(allow_stdin=True))
    headless.install(shell)  # type: ignore[arg-type]
    shell.kernel.shell_handlers["execute_request"]()
    assert detect_frontend(shell) == "plain"  # type: ignore[arg-type]


def test_a_widget_manager_talking_to_the_kernel_means_widgets() -> None:
    shell = Shell(Kernel(allow_stdin=True))
    headless.install(shell)  # type: ignore[arg-type]
    shell.kernel.shell_handlers["comm_info_request"]("stream", [], {})
    assert shell.kernel.calls == ["comm_info_request"]  # the kernel's own handler still ran
    assert detect_frontend(shell) == "widgets"  # type: ignore[arg-type]
    headless.uninstall(shell)  # type: ignore[arg-type]
    assert not hasattr(shell.kernel.shell_handlers["comm_info_request"], "__acp_watched__")


def test_a_notebook_served_by_jupyter_server_or_vs_code_means_widgets(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shell = Shell(Kernel(allow_stdin=True))
    shell.user_ns["__vsc_ipynb_file__"] = "/x/a.ipynb"
    assert detect_frontend(shell) == "widgets"  # type: ignore[arg-type]
    shell.user_ns.clear()
    monkeypatch.setenv("JPY_SESSION_NAME", "a.ipynb")
    assert detect_frontend(shell) == "widgets"  # type: ignore[arg-type]


def test_no_stdin_is_headless_and_the_variable_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    assert detect_frontend(Shell(Kernel(allow_stdin=False))) == "headless"  # type: ignore[arg-type]
    monkeypatch.setenv("ACP_NOTEBOOK_WIDGETS", "1")
    assert detect_frontend(Shell(Kernel(allow_stdin=True))) == "widgets"  # type: ignore[arg-type]
    monkeypatch.setenv("ACP_NOTEBOOK_WIDGETS", "0")
    monkeypatch.setenv("JPY_SESSION_NAME", "a.ipynb")
    assert detect_frontend(Shell(Kernel(allow_stdin=True))) == "plain"  # type: ignore[arg-type]
