"""Real agents from npm for the integration tests, installed once into ``.cache``."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..conftest import skip_or_fail

ROOT = Path(__file__).resolve().parents[2]


def npm_agents(cache: str, packages: list[str], binaries: list[str]) -> Path:
    """The ``node_modules/.bin`` of ``.cache/CACHE`` holding ``binaries``, installing
    ``packages`` there first when one is missing; skipped (failed under CI) when npm is
    missing or cannot install them."""
    npm = shutil.which("npm")
    if npm is None:
        skip_or_fail("npm is not installed, so no real agent can be installed here")
    prefix = ROOT / ".cache" / cache
    bin_dir = prefix / "node_modules" / ".bin"
    if not all((bin_dir / name).exists() for name in binaries):
        prefix.mkdir(parents=True, exist_ok=True)
        result = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
                str(prefix),
                *packages,
            ],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if result.returncode != 0 or not all((bin_dir / name).exists() for name in binaries):
            skip_or_fail(
                f"npm could not install {', '.join(packages)}: {result.stderr.strip()[-300:]}"
            )
    return bin_dir
