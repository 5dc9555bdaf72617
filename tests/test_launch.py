"""The README's main job: `./dev lab` opens JupyterLab on the quickstart (on 127.0.0.1,
printing the URL), and `./dev lab --headless` executes the quickstart and writes it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest

from acp_notebook.notebook.launch import free_port

from .servers import own_session

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_headless_main_job_executes_the_quickstart(tmp_path: Path) -> None:
    output = tmp_path / "quickstart.executed.ipynb"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_notebook.notebook.launch",
            "--headless",
            "--output",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "of them prompts; wrote" in result.stdout
    nb = nbformat.read(output, as_version=4)
    prompts = [
        c
        for c in nb.cells
        if c.cell_type == "code" and "%acp" in c.source and "NBVAL_SKIP" not in c.source
    ]
    assert len(prompts) >= 6
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not [o for o in cell.outputs if o.output_type == "error"], cell.source
    transcripts = [o for c in prompts for o in c.outputs if "text/markdown" in o.get("data", {})]
    assert any("Stop reason: end_turn" in o["data"]["text/markdown"] for o in transcripts)


def test_main_job_opens_jupyterlab_on_the_quickstart(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "acp_notebook.notebook.launch", "--port", str(free_port())],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
        env=env,
        **own_session(),
    )
    try:
        url = None
        deadline = time.monotonic() + 120
        assert process.stdout is not None
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            found = re.search(
                r"open (http://127\.0\.0\.1:\d+/lab/tree/quickstart\.ipynb\?token=\w+)", line
            )
            if found:
                url = found.group(1)
        assert url, "the launcher printed no URL"
        base, token = url.split("/lab/")[0], url.rsplit("token=", 1)[1]
        contents = None
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(
                    f"{base}/api/contents/quickstart.ipynb?token={token}", timeout=5
                ) as reply:
                    contents = json.load(reply)
                    break
            except OSError:
                time.sleep(0.3)
        assert contents is not None and contents["name"] == "quickstart.ipynb"
        with urllib.request.urlopen(f"{base}/lab?token={token}", timeout=10) as page:
            assert page.status == 200
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_headless_skips_cells_that_need_a_real_agent_and_fails_on_a_failing_cell(
    tmp_path: Path,
) -> None:
    from acp_notebook.notebook.launch import run_headless

    def notebook(*cells: nbformat.NotebookNode) -> str:
        name = f"nb{len(list(tmp_path.glob('*.ipynb')))}.ipynb"
        nbformat.write(nbformat.v4.new_notebook(cells=list(cells)), tmp_path / name)
        return name

    needs_agent = nbformat.v4.new_code_cell("raise RuntimeError('a real agent was started')")
    needs_agent.metadata["tags"] = ["needs-agent"]
    good = notebook(
        nbformat.v4.new_code_cell("# NBVAL_SKIP\nraise RuntimeError('npx claude was started')"),
        needs_agent,
        nbformat.v4.new_code_cell("print('ran')"),
    )
    output = tmp_path / "out.ipynb"
    assert run_headless(tmp_path, good, output, timeout=120) == 0
    ran = nbformat.read(output, as_version=4)
    assert [len(c.outputs) for c in ran.cells] == [0, 0, 1]
    bad = notebook(nbformat.v4.new_code_cell("1 / 0"), nbformat.v4.new_code_cell("print('after')"))
    assert run_headless(tmp_path, bad, output, timeout=120) == 1


def test_lab_starts_with_real_time_collaboration_off_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from acp_notebook.notebook import launch

    started: list[list[str]] = []
    monkeypatch.setattr(launch.os, "execv", lambda _exe, argv: started.append(list(argv)))
    launch.run_lab(tmp_path, "x.ipynb", 0)
    launch.run_lab(tmp_path, "x.ipynb", 0, collaborative=True)
    assert "--YDocExtension.disable_rtc=True" in started[0]
    assert "--YDocExtension.disable_rtc=True" not in started[1]
