"""The private endpoint directories: a kernel killed outright leaves its directory (with
the secret in it) behind; the next endpoint removes it, and never one that is in use."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from acp_notebook.notebook.tools.endpoint import DIRECTORY_PREFIX, RelayEndpoint

pytestmark = pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="Unix sockets")


def dead_pid() -> int:
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def left_behind(pid: int, *, listening: bool = False) -> tuple[Path, socket.socket]:
    """A directory as an endpoint of ``pid`` leaves it, socket file and token included."""
    directory = Path(tempfile.mkdtemp(prefix=DIRECTORY_PREFIX))
    (directory / "token").write_text("secret")
    (directory / "pid").write_text(str(pid))
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(directory / "mcp.sock"))
    if listening:
        server.listen()
    else:
        server.close()
    return directory, server


@pytest.fixture
def endpoints() -> Iterator[list[RelayEndpoint]]:
    made: list[RelayEndpoint] = []
    yield made
    for endpoint in made:
        endpoint.close()


def test_a_new_endpoint_removes_the_directory_a_killed_kernel_left(
    endpoints: list[RelayEndpoint],
) -> None:
    stale, _ = left_behind(dead_pid())
    endpoints.append(RelayEndpoint())
    assert not stale.exists()
    assert (endpoints[0].directory / "pid").read_text() == str(os.getpid())


def test_the_directory_of_a_live_kernel_stays(endpoints: list[RelayEndpoint]) -> None:
    endpoints.append(RelayEndpoint())
    endpoints.append(RelayEndpoint())
    assert endpoints[0].directory.exists()
    assert endpoints[0].token_path.exists()


def test_a_directory_whose_socket_still_listens_stays_even_if_its_pid_looks_gone(
    endpoints: list[RelayEndpoint],
) -> None:
    # As a kernel in another pid namespace sharing the temp directory would look.
    directory, server = left_behind(dead_pid(), listening=True)
    try:
        endpoints.append(RelayEndpoint())
        assert (directory / "token").exists()
    finally:
        server.close()
        for path in directory.iterdir():
            path.unlink()
        directory.rmdir()
