"""A fresh virtual environment holding our package installed from a freshly built wheel.

Its dependencies come from the test environment through a .pth file, which keeps the
tests offline and fast; acp_notebook itself (and its shared data: kernelspecs, the
JupyterLab extension) comes only from the wheel. Built once per test session.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The JupyterLab extension as `./dev setup` (or the wheel's build hook) builds it.
LABEXTENSION = ROOT / "acp_notebook" / "labextension"


def labextension_missing() -> str | None:
    """Why the wheel cannot carry the extension here (None when it can)."""
    if (LABEXTENSION / "static" / "style.js").is_file() or shutil.which("node"):
        return None
    return "Node.js is not installed and the JupyterLab extension is not built (./dev setup)"


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels = tmp_path_factory.mktemp("wheels")
    env = dict(os.environ)
    if labextension_missing():
        env["SKIP_JUPYTER_BUILDER"] = "1"  # the rest of the wheel still builds
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-w",
            str(wheels),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
        timeout=600,
        env=env,
    )
    return next(wheels.glob("acp_notebook-*.whl"))


@pytest.fixture(scope="session")
def fresh_env(tmp_path_factory: pytest.TempPathFactory, wheel: Path) -> Path:
    prefix = tmp_path_factory.mktemp("fresh") / "venv"
    venv.EnvBuilder(with_pip=False).create(prefix)
    python = prefix / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    # Dependencies from the test environment; acp_notebook itself only from the wheel.
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    # The new environment's own python runs pip (borrowed through the .pth file), with
    # --ignore-installed: pip must not touch the test environment's own acp-notebook.
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--ignore-installed", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    return prefix
