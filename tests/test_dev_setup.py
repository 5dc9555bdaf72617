"""What ``./dev setup`` says about the JupyterLab extension it builds with Node.js: the
first build says what it does, roughly how long it takes and where its log is, then each
step with its time; without Node.js it says what works without the extension.

The script runs on a copy of itself in a scratch checkout whose environment is already
installed (its stamps are newer than pyproject.toml), with ``node`` and ``jlpm`` played by
small scripts: what is tested is what the script says, not npm."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SAFETY = 60  # seconds; a safety net, never a performance bound
BASH = shutil.which("bash") or "/bin/bash"


def executable(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout with ``dev``, the extension's sources and an installed ``.venv``."""
    root = tmp_path / "checkout"
    root.mkdir()
    shutil.copy(ROOT / "dev", root / "dev")
    (root / "pyproject.toml").write_text("")
    for name in ("src", "style"):
        (root / "labextension" / name).mkdir(parents=True)
    for name in ("package.json", "yarn.lock", "tsconfig.json", ".yarnrc.yml"):
        (root / "labextension" / name).write_text("")
    venv = root / ".venv"
    executable(venv / "bin" / "python", "exit 0\n")  # install-kernel
    built = root / "acp_notebook" / "labextension" / "static" / "style.js"
    executable(
        venv / "bin" / "jlpm",
        f'echo "jlpm $1 ran"\n[ "$1" = build ] && mkdir -p {built.parent} && touch {built}\n'
        "mkdir -p node_modules\nexit 0\n",
    )
    for level in ("lab", "test", "dev"):
        (venv / f".acp-notebook-{level}").touch()
    return root


def setup(root: Path, path: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path}
    return subprocess.run(
        [BASH, str(root / "dev"), "setup"],
        cwd=root,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=SAFETY,
    )


def test_the_first_build_says_what_it_does_how_long_it_takes_and_where_its_log_is(
    checkout: Path, tmp_path: Path
) -> None:
    # The first ./dev lab spent about a minute building the extension with npm in
    # silence, after a README that said it installs nothing more than the package.
    node_bin = tmp_path / "node-bin"
    executable(node_bin / "node", 'case "$1" in --version) echo v22.1.0;; esac\nexit 0\n')

    result = setup(checkout, f"{node_bin}:{os.environ['PATH']}")

    assert result.returncode == 0, result.stderr
    said = result.stderr
    log = checkout / ".venv" / "labextension-build.log"
    assert "building the JupyterLab extension" in said and "with Node.js v22.1.0" in said
    assert "about 450 MB" in said and "about a minute" in said
    assert f"log: {log}" in said
    assert "1/2 jlpm install (its npm packages): done in" in said
    assert "2/2 jlpm build (TypeScript, then the JupyterLab bundle): done in" in said
    assert "the JupyterLab extension is built (" in said
    assert "jlpm install ran" in log.read_text() and "jlpm build ran" in log.read_text()
    # Built once: the next setup says nothing of it.
    again = setup(checkout, f"{node_bin}:{os.environ['PATH']}")
    assert again.returncode == 0 and "JupyterLab extension" not in again.stderr


def test_without_node_setup_says_what_works_without_the_extension(
    checkout: Path, tmp_path: Path
) -> None:
    # A PATH with what the script needs but no node.
    tools = tmp_path / "tools"
    tools.mkdir()
    for tool in ("bash", "env", "find", "dirname", "touch", "rm", "mkdir", "ln", "tail", "cat"):
        found = shutil.which(tool)
        assert found is not None, tool
        (tools / tool).symlink_to(found)
    (tools / "python3").symlink_to(os.path.realpath(sys.executable))

    result = setup(checkout, str(tools))

    assert result.returncode == 0, result.stderr
    said = result.stderr
    assert "Node.js 20 or newer is not installed, so the JupyterLab extension is not built" in said
    assert "%acp in any" in said and "acp-notebook run" in said
    assert "What needs it: edits reviewed" in said and "the Fix button" in said
