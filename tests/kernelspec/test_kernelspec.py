"""The kernelspecs install and start from a fresh virtual environment (``fresh_env`` in
conftest.py: the package installed from a freshly built wheel, so the wheel's shared data
is what puts the kernelspecs in place)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import time
from pathlib import Path

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def _python(prefix: Path) -> Path:
    return prefix / "bin" / "python"


def test_the_wheel_installs_both_kernelspecs_into_the_environment(fresh_env: Path) -> None:
    kernels = fresh_env / "share" / "jupyter" / "kernels"
    acp = json.loads((kernels / "acp" / "kernel.json").read_text())
    agent = json.loads((kernels / "acp-agent" / "kernel.json").read_text())
    assert acp["display_name"] == "Python 3 (ACP)" and "--ext=acp_notebook" in acp["argv"]
    assert (
        agent["display_name"] == "ACP agent" and "--ext=acp_notebook.agent_kernel" in agent["argv"]
    )
    # The package imports from the wheel, not from the source tree.
    where = subprocess.run(
        [str(_python(fresh_env)), "-c", "import acp_notebook; print(acp_notebook.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=fresh_env,
    ).stdout
    assert str(fresh_env) in where


def test_install_kernel_writes_this_interpreters_absolute_path(
    fresh_env: Path, tmp_path: Path
) -> None:
    target = tmp_path / "prefix"
    result = subprocess.run(
        [str(_python(fresh_env)), "-m", "acp_notebook", "install-kernel", "--prefix", str(target)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert (
        "Installed kernelspec acp" in result.stdout
        and "Installed kernelspec acp-agent" in result.stdout
    )
    spec = json.loads(
        (target / "share" / "jupyter" / "kernels" / "acp" / "kernel.json").read_text()
    )
    assert spec["argv"][0] == str(_python(fresh_env))
    assert os.path.isabs(spec["argv"][0])


def _start(kernel_name: str, data_dir: Path, cwd: Path) -> tuple[KernelManager, object]:
    ksm = KernelSpecManager(kernel_dirs=[str(data_dir / "share" / "jupyter" / "kernels")])
    km = KernelManager(kernel_name=kernel_name, kernel_spec_manager=ksm)
    km.start_kernel(cwd=str(cwd), env={**os.environ, "ACP_NOTEBOOK_HEADLESS": "1"})
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=60)
    return km, kc


def _run(kc: object, code: str, timeout: float = 120) -> list[dict]:
    msg_id = kc.execute(code)  # type: ignore[attr-defined]
    outputs: list[dict] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)  # type: ignore[attr-defined]
        except queue.Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind = msg["msg_type"]
        if kind in ("stream", "display_data", "execute_result", "error"):
            outputs.append({"type": kind, **msg["content"]})
        if kind == "status" and msg["content"]["execution_state"] == "idle":
            return outputs
    raise AssertionError(f"no idle within {timeout} s for {code!r}")


@pytest.fixture
def installed(fresh_env: Path, tmp_path: Path) -> Path:
    """A prefix holding both kernelspecs, installed by the fresh environment's CLI."""
    target = tmp_path / "prefix"
    subprocess.run(
        [str(_python(fresh_env)), "-m", "acp_notebook", "install-kernel", "--prefix", str(target)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return target


def test_the_acp_kernel_starts_with_the_extension_loaded(
    fresh_env: Path, installed: Path, tmp_path: Path
) -> None:
    km, kc = _start("acp", installed, tmp_path)
    try:
        outputs = _run(kc, "import sys; print(sys.executable)")
        assert outputs[0]["text"].strip() == str(_python(fresh_env))
        outputs = _run(kc, "%acp /plan")  # no %load_ext: the kernel loaded it
        markdown = [o["data"]["text/markdown"] for o in outputs if o["type"] == "display_data"]
        assert markdown and "**Plan**" in markdown[0] and "Stop reason: end_turn" in markdown[0]
        assert not [o for o in outputs if o["type"] == "error"]
    finally:
        kc.stop_channels()  # type: ignore[attr-defined]
        km.shutdown_kernel(now=False)


def test_in_the_agent_kernel_a_cell_is_a_prompt_and_py_cells_are_python(
    installed: Path, tmp_path: Path
) -> None:
    km, kc = _start("acp-agent", installed, tmp_path)
    try:
        outputs = _run(kc, "What can you do?")
        markdown = [o["data"]["text/markdown"] for o in outputs if o["type"] == "display_data"]
        assert markdown and "**You:** What can you do?" in markdown[0]
        outputs = _run(kc, "%%py\nanswer = 6 * 7\nanswer")
        assert outputs and outputs[0]["type"] == "execute_result"
        assert outputs[0]["data"]["text/plain"] == "42"
    finally:
        kc.stop_channels()  # type: ignore[attr-defined]
        km.shutdown_kernel(now=False)
