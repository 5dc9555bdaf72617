"""A benchmark's code in a fresh Python process of this checkout (its imports, memory and
start are its own); its last line of output is the figure.

The child has this checkout first on its path and its bytecode compiled (in a cache of the
benchmark run, outside the checkout), as an installed package has, so no figure counts
compiling the sources (the environment may set ``PYTHONDONTWRITEBYTECODE``)."""

from __future__ import annotations

import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_pycache: list[str] = []


def _pycache_dir() -> str:
    if not _pycache:
        _pycache.append(tempfile.mkdtemp(prefix="bench-pycache-"))
        atexit.register(shutil.rmtree, _pycache[0], True)
    return _pycache[0]


def child_env() -> dict[str, str]:
    """The environment of a measured child process."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path, "PYTHONPYCACHEPREFIX": _pycache_dir()}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def last_line(code: str, *args: str, timeout: float = 1200) -> str:
    """Run ``python -c code args…`` with this checkout importable; its last stdout line."""
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env=child_env(),
        timeout=timeout,
    )
    return out.stdout.strip().splitlines()[-1]
