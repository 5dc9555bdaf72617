"""A server the tests start ends with the test process that started it, however that
process ends (``tests/servers.py``): killed with SIGKILL, as ``timeout`` or a CI runner's
limit kill a pytest, it leaves no server running."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .hostile.test_orphans import alive

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

#: A stand-in for a test process: starts a "server" as the tests do, says its pid, waits.
TEST_PROCESS = """
import subprocess, sys, time
from tests.servers import own_session
server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], **own_session())
print(server.pid, flush=True)
time.sleep(600)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux parent-death signal")
def test_a_server_ends_with_the_test_process_killed_from_outside() -> None:
    test_process = subprocess.Popen(
        [sys.executable, "-c", TEST_PROCESS],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
    )
    try:
        assert test_process.stdout is not None
        server = int(test_process.stdout.readline())
        assert alive(server)
        assert os.getsid(server) == server  # a session of its own: killpg ends its children
        test_process.kill()
        test_process.wait()
        deadline = time.monotonic() + 30  # a safety net: the signal is sent at once
        while alive(server):
            assert time.monotonic() < deadline, "the server outlived the test process"
            time.sleep(0.05)
    finally:
        test_process.kill()
