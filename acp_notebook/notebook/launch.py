"""The main job: JupyterLab on the quickstart notebook, with the demo agent.

    python -m acp_notebook.notebook.launch              # JupyterLab on 127.0.0.1, prints the URL
    python -m acp_notebook.notebook.launch --headless   # executes the quickstart, writes the result

The headless form runs every cell of ``notebooks/quickstart.ipynb`` through
nbclient (as ``nbconvert --execute`` would) and writes the executed notebook to
``build/quickstart.executed.ipynb``, so the whole experience can be checked
without a browser.
"""

from __future__ import annotations

import argparse
import os
import secrets
import shutil
import socket
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def free_port(preferred: int = 0) -> int:
    """``preferred`` if it is free on 127.0.0.1, else any free port."""
    for port in (preferred, 0):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return int(sock.getsockname()[1])
    raise RuntimeError("no free port on 127.0.0.1")


def lab_command(root: Path | str, port: int, token: str) -> list[str]:
    """JupyterLab serving ``root`` on 127.0.0.1 only, with a token, never checking for updates."""
    argv = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={token}",
        "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
    ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        argv.append("--allow-root")  # JupyterLab refuses to run as root otherwise
    return argv


#: Real-time collaboration (jupyter-collaboration, when installed) is off unless asked:
#: one person at a notebook needs none of it, and its shared document model fights the
#: live widgets' own updates. Harmless when the package is absent.
NO_RTC = "--YDocExtension.disable_rtc=True"


def run_lab(notebooks: Path, notebook: str, port: int, *, collaborative: bool = False) -> int:
    token = secrets.token_hex(16)
    port = free_port(port)
    url = f"http://127.0.0.1:{port}/lab/tree/{notebook}?token={token}"
    argv = lab_command(notebooks, port, token) + ([] if collaborative else [NO_RTC])
    print(
        f"\n  acp_notebook: open {url}\n  (Ctrl-C stops JupyterLab and every agent it started)\n",
        flush=True,
    )
    os.execv(sys.executable, argv)
    return 0  # not reached


#: nbclient's tag for cells it does not run.
SKIP_TAG = "skip-execution"
#: Cells that need a real agent (and an account): `# NBVAL_SKIP` first, or these tags.
AGENT_TAGS = frozenset({"needs-agent", "nbval-skip"})


def skip_agent_cells(nb: Any) -> int:
    """Tag the cells that need a real agent so the headless run does not run them (it
    would download the agent with `npx` and fail without an account); how many."""
    count = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if AGENT_TAGS & set(tags) or cell.source.lstrip().startswith("# NBVAL_SKIP"):
            if SKIP_TAG not in tags:
                tags.append(SKIP_TAG)
            count += 1
    return count


def run_headless(notebooks: Path, notebook: str, output: Path, timeout: int) -> int:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    source = notebooks / notebook
    nb = nbformat.read(source, as_version=4)
    skipped = skip_agent_cells(nb)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(notebooks)}},
        skip_cells_with_tag=SKIP_TAG,
    )
    print(
        f"acp_notebook: executing {_shown(source)} headless (the demo agent answers every prompt)…",
        flush=True,
    )
    failed = None
    try:
        client.execute()
    except CellExecutionError as exc:
        failed = str(exc).strip().splitlines()[-1] if str(exc).strip() else "a cell failed"
    output.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, output)
    code_cells = [c for c in nb.cells if c.cell_type == "code"]
    ran = [c for c in code_cells if SKIP_TAG not in c.metadata.get("tags", [])]
    prompts = sum("%acp" in c.source for c in ran)
    print(
        f"acp_notebook: {len(ran)} code cells ran, {prompts} of them prompts; "
        f"wrote {output}" + (f" ({skipped} skipped: they need a real agent)" if skipped else ""),
        flush=True,
    )
    if failed:
        print(f"acp_notebook: a cell failed: {failed}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="./dev lab", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--headless", action="store_true", help="execute the notebook instead of opening JupyterLab"
    )
    parser.add_argument("--port", type=int, default=8888)
    parser.add_argument(
        "--collaborative",
        action="store_true",
        help="turn JupyterLab's real-time collaboration on (off by default)",
    )
    parser.add_argument("--notebook", default="quickstart.ipynb", help="a notebook in notebooks/")
    parser.add_argument(
        "--output", type=Path, default=None, help="where --headless writes the executed notebook"
    )
    parser.add_argument("--timeout", type=int, default=300, help="seconds per cell in --headless")
    args = parser.parse_args(argv)
    notebooks = ROOT / "notebooks"
    if not (notebooks / args.notebook).is_file():
        print(f"acp_notebook: no notebook {args.notebook} in {notebooks}", file=sys.stderr)
        return 2
    if args.headless:
        output = args.output or ROOT / "build" / args.notebook.replace(".ipynb", ".executed.ipynb")
        return run_headless(notebooks, args.notebook, output, args.timeout)
    if shutil.which("jupyter-lab") is None and not _has_module("jupyterlab"):
        print("acp_notebook: JupyterLab is not installed; run ./dev setup", file=sys.stderr)
        return 2
    return run_lab(notebooks, args.notebook, args.port, collaborative=args.collaborative)


def _shown(path: Path) -> str:
    """``path`` relative to the checkout when inside it."""
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def _has_module(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


if __name__ == "__main__":
    sys.exit(main())
