"""Real agents for the integration tests, installed once per machine (pinned versions)
into :data:`AGENT_CACHE`, which every clone and every CI run on the machine reuses."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from ..conftest import skip_or_fail

#: ``ACP_NOTEBOOK_AGENT_CACHE``, or ``acp-notebook/test-agents`` in the user's cache
#: directory: outside the clone, so a fresh clone does not download the agents again.
AGENT_CACHE = Path(
    os.environ.get("ACP_NOTEBOOK_AGENT_CACHE")
    or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    / "acp-notebook"
    / "test-agents"
)


def npm_agents(cache: str, packages: list[str], binaries: list[str]) -> Path:
    """The ``node_modules/.bin`` of ``AGENT_CACHE/CACHE`` holding ``binaries``, installing
    ``packages`` there first when one is missing; skipped (failed under CI) when npm is
    missing or cannot install them."""
    npm = shutil.which("npm")
    if npm is None:
        skip_or_fail("npm is not installed, so no real agent can be installed here")
    # One prefix per set of pinned versions: a new pin installs beside the old one.
    prefix = AGENT_CACHE / cache / re.sub(r"[^A-Za-z0-9.]+", "_", "+".join(sorted(packages)))
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
