"""Servers the deploy tier starts beside JupyterLab: a Jupyter Kernel Gateway (its own
process group, a random token, a working directory of its own that is not the server's
notebook folder), stopped with ``killpg`` like the browser tier's servers."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from acp_notebook.notebook.launch import free_port

from ..conftest import skip_or_fail
from ..servers import own_session

SERVER_START_S = 60.0

#: What the gateway's kernels inherit from the gateway's own environment (a gateway passes
#: only PATH otherwise): the checkout under test, and the test run's state directory.
INHERITED = ("PYTHONPATH", "XDG_STATE_HOME", "HOME", "CI")


@dataclass
class Gateway:
    """A running Jupyter Kernel Gateway."""

    url: str
    token: str
    cwd: Path
    log: Path
    process: subprocess.Popen[bytes]

    def lab_args(self, *extra: str) -> list[str]:
        """JupyterLab options that run every kernel on this gateway."""
        # A kernel's start through the gateway may take longer than Jupyter Server's default
        # 42 s request limit on a loaded machine: the lab's kernel then stays "Unknown".
        return [
            f"--gateway-url={self.url}",
            f"--GatewayClient.auth_token={self.token}",
            "--GatewayClient.request_timeout=120",
            "--GatewayClient.connect_timeout=120",
            *extra,
        ]

    def api(self, method: str, path: str) -> None:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=60):
            pass

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


def start_gateway(base: Path, *options: str) -> Gateway:
    """A Kernel Gateway working in ``base/gateway`` (outside any notebook folder),
    answering ``/api/kernelspecs``; skipped (failed under CI) when it is not installed."""
    try:
        import kernel_gateway  # noqa: F401
    except ImportError as exc:
        skip_or_fail(f"jupyter_kernel_gateway is not installed ({exc})")
    cwd = base / "gateway"
    runtime = base / "gateway-runtime"
    for d in (cwd, runtime):
        d.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JUPYTER", "JPY_", "KG_"))}
    env.update(JUPYTER_RUNTIME_DIR=str(runtime), PYTHONUNBUFFERED="1")
    port = free_port()
    token = secrets.token_hex(16)
    cmd = [
        sys.executable,
        "-m",
        "kernel_gateway",
        "--KernelGatewayApp.ip=127.0.0.1",
        f"--KernelGatewayApp.port={port}",
        "--KernelGatewayApp.port_retries=0",
        f"--KernelGatewayApp.auth_token={token}",
        "--JupyterWebsocketPersonality.list_kernels=True",
        *(f"--KernelGatewayApp.env_process_whitelist={name}" for name in INHERITED),
        *options,
    ]
    log = base / "gateway.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            **own_session(),
        )
    gateway = Gateway(f"http://127.0.0.1:{port}", token, cwd, log, process)
    deadline = time.monotonic() + SERVER_START_S
    request = urllib.request.Request(
        f"{gateway.url}/api/kernelspecs", headers={"Authorization": f"token {token}"}
    )
    while True:
        if process.poll() is not None:
            pytest.fail(
                f"the kernel gateway exited with {process.returncode}:\n{gateway.log_tail()}"
            )
        try:
            with urllib.request.urlopen(request, timeout=5):
                return gateway
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline:
                stop(process)
                pytest.fail(f"the kernel gateway did not answer:\n{gateway.log_tail()}")
            time.sleep(0.2)


def stop(process: subprocess.Popen[bytes]) -> None:
    from ..browser.conftest import _stop

    _stop(process)
