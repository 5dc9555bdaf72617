"""fs confinement over generated trees with symlinks, while a thread swaps a directory of
the root with a symlink to the outside in a loop (``renameat2`` exchange, as a terminal the
agent started could): nothing outside the roots is ever read or written."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import pytest
from hypothesis import given, note
from hypothesis import strategies as st

from acp_notebook.client.fs import FileSystem
from acp_notebook.protocol.errors import RpcError

SECRET = "outside secret\n"
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 is Linux")

#: The swapper: a process of its own (as a terminal the agent started would be), so it
#: swaps in parallel with the checks instead of waiting for the GIL.
SWAPPER = """
import ctypes, ctypes.util, sys
libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
a, b = sys.argv[1].encode(), sys.argv[2].encode()
print("swapping", flush=True)
while libc.renameat2(-100, a, -100, b, 2) == 0:  # RENAME_EXCHANGE
    pass
"""


@contextmanager
def swapping(directory: Path, link: Path) -> Iterator[None]:
    swapper = subprocess.Popen(
        [sys.executable, "-c", SWAPPER, str(directory), str(link)], stdout=subprocess.PIPE
    )
    try:
        assert swapper.stdout is not None and swapper.stdout.readline() == b"swapping\n"
        yield
    finally:
        swapper.kill()
        swapper.wait()


def fingerprint(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): (p.read_text() if p.is_file() else "<dir>")
        for p in sorted(directory.rglob("*"))
        if not p.is_symlink()
    }


names = st.sampled_from(["a", "b", "swap", "link", "up", "x.txt", "secret.txt", "new"])
relative_paths = st.lists(names, min_size=1, max_size=4).map(lambda parts: "/".join(parts))
operations = st.lists(
    st.tuples(st.sampled_from(["read", "write"]), relative_paths), min_size=1, max_size=12
)


def build(base: Path) -> tuple[Path, Path]:
    shutil.rmtree(base, ignore_errors=True)
    root, outside = base / "root", base / "outside"
    for directory in (root / "swap" / "a", root / "b", outside / "a"):
        directory.mkdir(parents=True)
    for directory in (root / "swap", root / "swap" / "a", outside, outside / "a", root / "b"):
        (directory / "x.txt").write_text("inside\n" if root in directory.parents else SECRET)
        (directory / "secret.txt").write_text(
            SECRET if outside in [directory, *directory.parents] else "in\n"
        )
    (root / "link").symlink_to(outside)  # a static link out: refused by the check
    (root / "up").symlink_to("..")
    (root / "b" / "link").symlink_to(root / "swap")  # a link inside: followed
    (root / "swapped").symlink_to(outside)  # swapped with root/swap in a loop
    return root, outside


@given(ops=operations)
def test_nothing_outside_the_roots_is_read_or_written_while_a_link_is_swapped(
    ops: list[tuple[str, str]], tmp_path_factory: pytest.TempPathFactory
) -> None:
    root, outside = build(tmp_path_factory.mktemp("tree"))
    before = fingerprint(outside)
    files = FileSystem([root])

    async def apply() -> None:
        for verb, relative in ops:
            path = str(root / relative)
            try:
                if verb == "read":
                    text = (await files.read_text_file({"sessionId": "s", "path": path})).content
                    assert SECRET not in text, f"read {relative} gave the outside secret"
                else:
                    await files.write_text_file(
                        {"sessionId": "s", "path": path, "content": "written\n"}
                    )
            except RpcError as exc:
                assert SECRET not in exc.message
                note(f"{verb} {relative}: {exc.message}")

    with swapping(root / "swap", root / "swapped"):
        anyio.run(apply)
    assert fingerprint(outside) == before
