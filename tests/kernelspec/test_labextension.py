"""The wheel carries the prebuilt JupyterLab extension, so `pip install acp-notebook`
needs no Node.js, and JupyterLab in the installed environment lists it enabled."""

from __future__ import annotations

import json
import os
import re
import subprocess
import zipfile
from pathlib import Path

import pytest

from ..conftest import skip_or_fail
from .conftest import labextension_missing

pytestmark = [pytest.mark.kernel, pytest.mark.slow]

SHARE = "acp_notebook-0.1.0.data/data/share/jupyter/labextensions/acp-notebook/"


@pytest.fixture(autouse=True)
def _needs_the_extension() -> None:
    reason = labextension_missing()
    if reason:
        skip_or_fail(reason)  # under CI=true the wheel must carry the extension


def test_the_wheel_contains_the_prebuilt_extension(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        package = json.loads(archive.read(SHARE + "package.json"))
        install = json.loads(archive.read(SHARE + "install.json"))
    assert package["name"] == "acp-notebook" and package["version"] == "0.1.0"
    # The federated entry point the package.json names is there, with the styles.
    entry = package["jupyterlab"]["_build"]["load"]
    assert SHARE + entry in names, entry
    assert SHARE + "static/style.js" in names
    assert install["packageName"] == "acp-notebook"
    # Only as shared data, not a second copy inside the Python package.
    assert not [n for n in names if n.startswith("acp_notebook/labextension/")]


def test_jupyter_lists_the_extension_enabled_in_a_fresh_environment(fresh_env: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    # `jupyter labextension list`: the fresh environment has no console scripts of its
    # dependencies (they come from the test environment), so the app runs as a module.
    result = subprocess.run(
        [str(fresh_env / "bin" / "python"), "-m", "jupyterlab.labextensions", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "JUPYTER_PREFER_ENV_PATH": "1", "NO_COLOR": "1"},
        cwd=fresh_env,
    )
    assert result.returncode == 0, result.stderr
    listing = re.sub(r"\x1b\[[0-9;]*m", "", result.stdout + result.stderr)
    # The section of the fresh environment's own labextensions directory lists it,
    # installed by pip (install.json): the copy from the wheel, not a development link.
    ours = str(fresh_env / "share" / "jupyter" / "labextensions")
    section = listing.split(ours, 1)[1].split("\n\n", 1)[0] if ours in listing else ""
    assert re.search(r"acp-notebook v0\.1\.0 enabled\s+OK \(python, acp-notebook\)", section), (
        listing
    )


def test_jupyter_lists_the_kernelspecs_of_the_fresh_environment(fresh_env: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("JUPYTER")}
    # `jupyter kernelspec list`, run as a module for the reason above.
    result = subprocess.run(
        [str(fresh_env / "bin" / "python"), "-m", "jupyter_client.kernelspecapp", "list", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "JUPYTER_PREFER_ENV_PATH": "1"},
        cwd=fresh_env,
    )
    assert result.returncode == 0, result.stderr
    specs = json.loads(result.stdout)["kernelspecs"]
    ours = fresh_env / "share" / "jupyter" / "kernels"
    assert Path(specs["acp"]["resource_dir"]) == ours / "acp", specs
    assert Path(specs["acp-agent"]["resource_dir"]) == ours / "acp-agent", specs
