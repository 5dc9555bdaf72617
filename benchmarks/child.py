"""A benchmark's code in a fresh Python process of this checkout (its imports, memory and
start are its own); its last line of output is the figure."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def last_line(code: str, *args: str, timeout: float = 1200) -> str:
    """Run ``python -c code args…`` with this checkout importable; its last stdout line."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    out = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        timeout=timeout,
    )
    return out.stdout.strip().splitlines()[-1]
