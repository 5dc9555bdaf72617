"""A hostile agent starts a terminal that swaps a directory of the project with a symlink
to the outside in a loop (``renameat2`` exchange), and reads and writes through that
directory meanwhile: nothing outside the session's directories is read or changed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import anyio
import pytest

from acp_notebook.client import connect

from .test_binding_permissions import AGENT, SAFETY

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux"),
]

SECRET = "outside secret"
SWAPPER = """
import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
while libc.renameat2(-100, a, -100, b, 2) == 0:  # RENAME_EXCHANGE
    pass
"""


async def test_a_swapping_terminal_never_leads_reads_or_writes_outside(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "swap").mkdir(parents=True)
    outside.mkdir()
    (project / "swap" / "secret.txt").write_text("inside\n")
    (outside / "secret.txt").write_text(SECRET + "\n")
    (project / "swapped").symlink_to(outside)
    swap, swapped = str(project / "swap"), str(project / "swapped")
    actions: list[list[object]] = [["spawn", sys.executable, ["-c", SWAPPER, swap, swapped]]]
    for _ in range(150):
        actions += [
            ["read", "{cwd}/swap/secret.txt"],
            ["write", "{cwd}/swap/secret.txt", "written\n"],
        ]
    argv = [sys.executable, str(AGENT), json.dumps(actions)]
    async with connect(argv) as conn:
        session = await conn.new_session(project, policy="allow")
        with anyio.fail_after(SAFETY):
            turn = await session.prompt("go")
    assert turn.stop_reason == "end_turn"
    report = turn.bundle()["text/plain"]
    assert sum(line.startswith("read ") for line in report.splitlines()) == 150
    assert SECRET not in report
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
