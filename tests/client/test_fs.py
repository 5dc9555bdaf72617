"""FileSystem: confinement to the session roots, line windows, atomic byte-exact writes."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.client import fs as fs_module
from acp_notebook.client.fs import FileChange, FileSystem, is_inside
from acp_notebook.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
)

pytestmark = pytest.mark.anyio

SECRET = b"top secret\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the root (not inside it) holding a secret file."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_bytes(SECRET)
    return path


@pytest.fixture
def files(root: Path) -> FileSystem:
    return FileSystem([root])


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Every path passed to ``os.open`` / ``open`` during the test (to prove nothing
    outside the roots was opened, not even for reading)."""
    paths: list[str] = []
    real_os_open = os.open
    real_open = open

    def spy_os_open(path: Any, *args: Any, **kwargs: Any) -> int:
        paths.append(os.fsdecode(path))
        return real_os_open(path, *args, **kwargs)

    def spy_open(file: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(file, int):
            paths.append(os.fsdecode(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr("builtins.open", spy_open)
    yield paths


def fingerprint(directory: Path) -> dict[str, tuple[bytes | str, int]]:
    """Contents and mtimes of everything below ``directory`` (links as their target)."""
    result: dict[str, tuple[bytes | str, int]] = {}
    for dirpath, dirnames, filenames in os.walk(directory):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            info = path.lstat()
            if path.is_symlink():
                result[str(path)] = (os.readlink(path), info.st_mtime_ns)
            elif path.is_file():
                result[str(path)] = (path.read_bytes(), info.st_mtime_ns)
            else:
                result[str(path)] = ("dir", info.st_mtime_ns)
    result[str(directory)] = ("dir", directory.stat().st_mtime_ns)
    return result


def assert_nothing_outside_opened(paths: list[str], root: Path) -> None:
    real_root = os.path.realpath(root)
    for path in paths:
        assert is_inside(os.path.realpath(path), real_root), f"opened {path} outside the root"


async def read(files: FileSystem, path: str | Path, **extra: Any) -> str:
    """``fs/read_text_file`` as the agent sends it (wire params), checked on the way back."""
    result = await files.read_text_file({"sessionId": "s", "path": str(path), **extra})
    assert result.to_wire() == {"content": result.content}
    return result.content


async def write(files: FileSystem, path: str | Path, content: str) -> None:
    result = await files.write_text_file({"sessionId": "s", "path": str(path), "content": content})
    assert result.to_wire() == {}  # spec: {} for fs/write_text_file, not null


# -- confinement --------------------------------------------------------------------------


def _escapes(root: Path, outside: Path) -> dict[str, Path]:
    """Paths that name (or resolve to) something outside the root."""
    (root / "link-to-secret").symlink_to(outside / "secret.txt")
    (root / "dir-link").symlink_to(outside, target_is_directory=True)
    (root / "dangling").symlink_to(outside / "new-via-dangling.txt")
    sibling = root.parent / (root.name + "2")  # "root2": starts with the root's name
    sibling.mkdir()
    return {
        "traversal": root / ".." / "outside" / "secret.txt",
        "absolute elsewhere": outside / "secret.txt",
        "symlink to a file outside": root / "link-to-secret",
        "new file under a directory link": root / "dir-link" / "new.txt",
        "new nested dirs under a directory link": root / "dir-link" / "sub" / "deeper" / "new.txt",
        "dangling symlink pointing outside": root / "dangling",
        "sibling sharing the root's name prefix": sibling / "file.txt",
        "the root's parent": root.parent,
    }


@pytest.mark.parametrize(
    "case",
    [
        "traversal",
        "absolute elsewhere",
        "symlink to a file outside",
        "new file under a directory link",
        "new nested dirs under a directory link",
        "dangling symlink pointing outside",
        "sibling sharing the root's name prefix",
        "the root's parent",
    ],
)
async def test_paths_outside_the_root_are_refused_for_read_and_write(
    case: str, root: Path, outside: Path, files: FileSystem, opened: list[str]
) -> None:
    path = _escapes(root, outside)[case]
    before_outside = fingerprint(outside)
    sibling = root.parent / (root.name + "2")
    before_sibling = fingerprint(sibling)
    links_before = {p: os.readlink(p) for p in root.iterdir() if p.is_symlink()}

    with pytest.raises(RpcError) as read_error:
        await read(files, path)
    with pytest.raises(RpcError) as write_error:
        await write(files, path, "pwned\n")

    for error in (read_error.value, write_error.value):
        assert error.code == INVALID_PARAMS
        assert "outside the session's directories" in error.message
        assert str(os.path.realpath(root)) in error.message  # names the roots
    assert fingerprint(outside) == before_outside
    assert fingerprint(sibling) == before_sibling
    assert not (outside / "new-via-dangling.txt").exists()
    assert not (outside / "sub").exists()
    # Links were not "fixed" by replacing them with regular files.
    assert {p: os.readlink(p) for p in root.iterdir() if p.is_symlink()} == links_before
    assert_nothing_outside_opened(opened, root)
    assert files.changes == []


async def test_etc_passwd_is_refused(files: FileSystem, opened: list[str]) -> None:
    with pytest.raises(RpcError) as error:
        await read(files, "/etc/passwd")
    assert error.value.code == INVALID_PARAMS
    assert "/etc/passwd" in error.value.message
    assert error.value.data["roots"] == files.roots
    assert opened == []


async def test_a_second_root_is_allowed(tmp_path: Path, root: Path, outside: Path) -> None:
    files = FileSystem([root])
    with pytest.raises(RpcError):
        await read(files, outside / "secret.txt")
    files.add_root(outside)
    assert await read(files, outside / "secret.txt") == SECRET.decode()


@pytest.mark.parametrize("path", ["relative/file.txt", "file.txt", "./x", ""])
async def test_relative_paths_are_refused(files: FileSystem, path: str) -> None:
    for call in (lambda: read(files, path), lambda: write(files, path, "x")):
        with pytest.raises(RpcError) as error:
            await call()
        assert error.value.code == INVALID_PARAMS
        assert "absolute" in error.value.message


async def test_nul_bytes_are_refused(files: FileSystem, root: Path) -> None:
    path = f"{root}/a\x00b.txt"
    for call in (lambda: read(files, path), lambda: write(files, path, "x")):
        with pytest.raises(RpcError) as error:
            await call()
        assert error.value.code == INVALID_PARAMS
        assert "NUL" in error.value.message
    assert list(root.iterdir()) == []


@pytest.mark.parametrize("bad", [None, 42, ["/x"]])
async def test_a_path_that_is_not_a_string_is_refused(files: FileSystem, bad: Any) -> None:
    with pytest.raises(RpcError) as error:
        await files.read_text_file({"sessionId": "s", "path": bad})
    assert error.value.code == INVALID_PARAMS


async def test_missing_file_is_resource_not_found(files: FileSystem, root: Path) -> None:
    path = str(root / "nope.txt")
    with pytest.raises(RpcError) as error:
        await read(files, path)
    assert error.value.code == RESOURCE_NOT_FOUND
    assert error.value.data == {"path": path}
    with pytest.raises(RpcError) as error:
        await read(files, root / "missing-dir" / "nope.txt")
    assert error.value.code == RESOURCE_NOT_FOUND


async def test_symlinks_inside_the_root_are_followed(files: FileSystem, root: Path) -> None:
    (root / "real.txt").write_text("real\n")
    (root / "link.txt").symlink_to(root / "real.txt")
    assert await read(files, root / "link.txt") == "real\n"
    await write(files, root / "link.txt", "updated\n")
    # The write went to the target; the link is still a link.
    assert (root / "link.txt").is_symlink()
    assert (root / "real.txt").read_text() == "updated\n"
    # Traversal that stays inside the root is fine.
    (root / "sub").mkdir()
    assert await read(files, root / "sub" / ".." / "real.txt") == "updated\n"


async def test_directories_and_fifos_are_refused(files: FileSystem, root: Path) -> None:
    (root / "dir").mkdir()
    for call in (
        lambda: read(files, root / "dir"),
        lambda: write(files, root / "dir", "x"),
        lambda: read(files, root),
    ):
        with pytest.raises(RpcError) as error:
            await call()
        assert error.value.code == INVALID_PARAMS
        assert "directory" in error.value.message
    os.mkfifo(root / "pipe")
    with pytest.raises(RpcError) as error:  # must not hang waiting for a writer
        await read(files, root / "pipe")
    assert "not a regular file" in error.value.message


# -- reading windows ----------------------------------------------------------------------

MIXED = "one\r\ntwo\nthree\r\nfour\n\nsix has a lone \r inside\nseven no newline"


@pytest.mark.parametrize(
    ("line", "limit", "expected"),
    [
        (None, None, MIXED),
        (1, None, MIXED),
        (1, 1, "one\r\n"),
        (2, 2, "two\nthree\r\n"),
        (3, 1, "three\r\n"),
        (4, 2, "four\n\n"),
        (5, 1, "\n"),
        (6, 1, "six has a lone \r inside\n"),  # a lone \r does not end a line
        (7, 5, "seven no newline"),
        (6, None, "six has a lone \r inside\nseven no newline"),
        (None, 2, "one\r\ntwo\n"),
        (8, None, ""),  # past the end
        (100, 3, ""),
        (2, 0, ""),  # limit 0 = zero lines
    ],
)
async def test_line_windows_are_exact_slices(
    files: FileSystem, root: Path, line: int | None, limit: int | None, expected: str
) -> None:
    path = root / "mixed.txt"
    path.write_bytes(MIXED.encode())
    params: dict[str, Any] = {}
    if line is not None:
        params["line"] = line
    if limit is not None:
        params["limit"] = limit
    assert await read(files, path, **params) == expected


async def test_null_line_and_limit_mean_absent(files: FileSystem, root: Path) -> None:
    (root / "f.txt").write_bytes(MIXED.encode())
    assert await read(files, root / "f.txt", line=None, limit=None) == MIXED


@pytest.mark.parametrize(
    "params",
    [
        {"line": 0},
        {"line": -1},
        {"line": "3"},
        {"line": True},
        {"line": 1.5},
        {"limit": -1},
        {"limit": "2"},
    ],
)
async def test_bad_line_or_limit_is_invalid_params(
    files: FileSystem, root: Path, params: dict[str, Any]
) -> None:
    (root / "f.txt").write_text("x\n")
    with pytest.raises(RpcError) as error:
        await read(files, root / "f.txt", **params)
    assert error.value.code == INVALID_PARAMS
    assert next(iter(params)) in error.value.message


async def test_window_of_a_large_file(files: FileSystem, root: Path) -> None:
    path = root / "big.txt"
    line = ("x" * 90 + "\n").encode()
    with path.open("wb") as f:
        for start in range(0, 550_000, 10_000):  # 550k lines of 91 bytes ≈ 50 MB
            f.write(b"".join(b"%07d " % n + line for n in range(start, start + 10_000)))
    assert path.stat().st_size > 50_000_000
    content = await read(files, path, line=1000, limit=3)
    assert content == "".join(f"{n:07d} " + "x" * 90 + "\n" for n in (999, 1000, 1001))
    # Deep into the file too (the window starts many chunks in).
    assert await read(files, path, line=500_000, limit=1) == f"{499_999:07d} " + "x" * 90 + "\n"
    # The whole file is over the 16 MiB default: a clear error, not a MemoryError.
    with pytest.raises(RpcError) as error:
        await read(files, path)
    assert error.value.code == INVALID_PARAMS
    assert "`line` and `limit`" in error.value.message


async def test_read_size_limit_is_configurable(root: Path) -> None:
    files = FileSystem([root], max_read_bytes=10)
    (root / "f.txt").write_text("0123456789\nabc\n")
    with pytest.raises(RpcError) as error:
        await read(files, root / "f.txt")
    assert "`line` and `limit`" in error.value.message
    assert await read(files, root / "f.txt", line=2) == "abc\n"
    with pytest.raises(RpcError) as error:
        await read(files, root / "f.txt", line=1, limit=2)
    assert "`limit`" in error.value.message
    # A single endless line is refused without being held whole.
    (root / "one-line.txt").write_text("y" * 1000)
    with pytest.raises(RpcError):
        await read(files, root / "one-line.txt", line=1, limit=1)


async def test_non_utf8_file_is_a_clear_error(files: FileSystem, root: Path) -> None:
    path = root / "latin1.txt"
    path.write_bytes("first line\ncafé\n".encode("latin-1"))
    with pytest.raises(RpcError) as error:
        await read(files, path)
    assert error.value.code == INTERNAL_ERROR
    assert "not UTF-8 text" in error.value.message
    # Lines that are valid UTF-8 can still be read on their own.
    assert await read(files, path, line=1, limit=1) == "first line\n"


async def test_utf8_text_round_trips(files: FileSystem, root: Path) -> None:
    text = "\ufeffBOM kept, é, €, 🎉\r\n"
    (root / "u.txt").write_bytes(text.encode())
    assert await read(files, root / "u.txt") == text


# -- writing ------------------------------------------------------------------------------


async def test_write_creates_parent_directories(files: FileSystem, root: Path) -> None:
    path = root / "a" / "b" / "c" / "new.txt"
    await write(files, path, "hello\n")
    assert path.read_bytes() == b"hello\n"


async def test_write_is_byte_exact(files: FileSystem, root: Path) -> None:
    content = "windows\r\nunix\nold mac\rno trailing newline é€"
    path = root / "exact.txt"
    await write(files, path, content)
    assert path.read_bytes() == content.encode("utf-8")
    assert await read(files, path) == content


async def test_write_keeps_permission_bits_and_new_files_follow_umask(
    files: FileSystem, root: Path
) -> None:
    path = root / "script.sh"
    path.write_text("#!/bin/sh\n")
    path.chmod(0o751)
    await write(files, path, "#!/bin/sh\necho hi\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    umask = os.umask(0o022)
    os.umask(umask)
    await write(files, root / "fresh.txt", "x")
    assert stat.S_IMODE((root / "fresh.txt").stat().st_mode) == 0o666 & ~umask


@pytest.mark.parametrize("failing", ["replace", "fsync", "write"])
async def test_failed_write_leaves_the_original_and_no_temp_file(
    files: FileSystem, root: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    path = root / "keep.txt"
    path.write_bytes(b"original\r\n")
    before = sorted(p.name for p in root.iterdir())

    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(fs_module.os, failing, boom)
    with pytest.raises(RpcError) as error:
        await write(files, path, "new content that never lands\n")
    monkeypatch.undo()

    assert error.value.code == INTERNAL_ERROR
    assert "No space left on device" in error.value.message
    assert path.read_bytes() == b"original\r\n"
    assert sorted(p.name for p in root.iterdir()) == before
    assert files.changes == []


async def test_write_to_a_new_file_fails_cleanly_too(
    files: FileSystem, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(fs_module.os, "replace", boom)
    with pytest.raises(RpcError):
        await write(files, root / "new.txt", "x")
    monkeypatch.undo()
    assert list(root.iterdir()) == []


async def test_changes_record_old_and_new_text(root: Path) -> None:
    seen: list[FileChange] = []
    files = FileSystem([root], on_change=seen.append)
    path = root / "notes.md"
    await write(files, path, "v1\n")
    await write(files, path, "v2\r\n")
    (root / "binary.dat").write_bytes(b"\xff\xfe\x00")
    await write(files, root / "binary.dat", "now text")

    assert [(c.path, c.old_text, c.new_text, c.old_text_unavailable) for c in files.changes] == [
        (str(path), None, "v1\n", False),
        (str(path), "v1\n", "v2\r\n", False),
        (str(root / "binary.dat"), None, "now text", True),
    ]
    assert seen == files.changes
    assert files.changes[0].resolved_path == os.path.realpath(path)


async def test_old_text_over_the_size_limit_is_not_kept(root: Path) -> None:
    files = FileSystem([root], max_read_bytes=4)
    (root / "f.txt").write_text("0123456789")
    await write(files, root / "f.txt", "short")
    assert files.changes[-1].old_text is None
    assert files.changes[-1].old_text_unavailable


async def test_failing_on_change_does_not_fail_the_write(root: Path) -> None:
    def broken(change: FileChange) -> None:
        raise RuntimeError("ui bug")

    files = FileSystem([root], on_change=broken)
    await write(files, root / "f.txt", "ok")
    assert (root / "f.txt").read_text() == "ok"


@pytest.mark.parametrize("content", [None, 3, ["x"], "lone surrogate \ud800"])
async def test_bad_content_is_invalid_params(files: FileSystem, root: Path, content: Any) -> None:
    with pytest.raises(RpcError) as error:
        await files.write_text_file(
            {"sessionId": "s", "path": str(root / "f.txt"), "content": content}
        )
    assert error.value.code == INVALID_PARAMS
    assert not (root / "f.txt").exists()


async def test_write_below_a_file_is_refused(files: FileSystem, root: Path) -> None:
    (root / "file.txt").write_text("x")
    with pytest.raises(RpcError) as error:
        await write(files, root / "file.txt" / "sub" / "new.txt", "y")
    assert error.value.code == INVALID_PARAMS
    assert "not a directory" in error.value.message


def test_roots_must_be_absolute() -> None:
    with pytest.raises(ValueError):
        FileSystem(["relative/dir"])


# -- races, hard links, read-only files ----------------------------------------------------


@pytest.fixture
def swap_after_check(monkeypatch: pytest.MonkeyPatch, root: Path, outside: Path) -> Iterator[Path]:
    """Right after a path is checked, ``root/sub`` becomes a symlink to ``outside`` — the
    worst moment a swapping terminal can hit (check, then use)."""
    sub = root / "sub"
    sub.mkdir()
    (sub / "secret.txt").write_text("inside\n")
    checked = fs_module.resolve_inside

    def check_then_swap(value: str, roots: Any, **kwargs: Any) -> str:
        resolved = checked(value, roots, **kwargs)
        if sub.is_dir() and not sub.is_symlink():
            sub.rename(root / "sub.old")
            sub.symlink_to(outside)
        return resolved

    monkeypatch.setattr(fs_module, "resolve_inside", check_then_swap)
    yield sub


async def test_a_directory_swapped_for_a_symlink_after_the_check_is_not_followed(
    files: FileSystem, swap_after_check: Path, outside: Path
) -> None:
    with pytest.raises(RpcError) as error:
        await read(files, swap_after_check / "secret.txt")
    assert error.value.code == INVALID_PARAMS
    assert "changed into a symbolic link" in error.value.message
    assert SECRET.decode() not in error.value.message


async def test_a_write_through_a_swapped_directory_changes_nothing_outside(
    files: FileSystem, swap_after_check: Path, outside: Path
) -> None:
    with pytest.raises(RpcError) as error:
        await write(files, swap_after_check / "secret.txt", "pwned")
    assert "changed into a symbolic link" in error.value.message
    assert (outside / "secret.txt").read_bytes() == SECRET
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_a_hard_link_is_not_read(files: FileSystem, root: Path, outside: Path) -> None:
    os.link(outside / "secret.txt", root / "linked.txt")
    with pytest.raises(RpcError) as error:
        await read(files, root / "linked.txt")
    assert error.value.code == INVALID_PARAMS and "hard links" in error.value.message
    await write(files, root / "linked.txt", "mine")  # replaces the entry, not the file
    assert (outside / "secret.txt").read_bytes() == SECRET


async def test_a_read_only_file_is_not_replaced(files: FileSystem, root: Path) -> None:
    path = root / "frozen.txt"
    path.write_text("keep\n")
    path.chmod(0o444)
    with pytest.raises(RpcError) as error:
        await write(files, path, "changed")
    assert error.value.code == INVALID_PARAMS and "read-only" in error.value.message
    assert path.read_text() == "keep\n"
