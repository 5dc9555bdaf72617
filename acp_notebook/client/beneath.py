"""Opening a path beneath a root directory through directory descriptors.

A path checked with ``realpath`` and then used again as a string can lead elsewhere: a
directory on the way may be swapped for a symlink in between (``renameat2`` exchange from
a terminal the agent started). Here the checked path is walked from its root one
component at a time, each opened with ``O_NOFOLLOW`` relative to the previous one's
descriptor: since the checked path has no symlink left in it, a symlink found now was
swapped in, and the walk fails (``ELOOP``/``ENOTDIR``) instead of following it. The caller
then works on the final name relative to the last descriptor (``dir_fd=``), so a later
swap of any component cannot move what it opens, creates or replaces.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat

__all__ = ["open_parent", "root_of"]

_DIRECTORY = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)


def root_of(resolved: str, roots: list[str]) -> str:
    """The deepest of ``roots`` (resolved directories) that holds ``resolved``."""
    holding = [r for r in roots if resolved == r or resolved.startswith(r.rstrip(os.sep) + os.sep)]
    if not holding:
        raise ValueError(f"{resolved} lies in none of the roots")
    return max(holding, key=len)


def open_parent(root: str, resolved: str, *, create: bool = False) -> tuple[int, str]:
    """A descriptor of the directory holding ``resolved`` (a path below ``root``, both
    resolved), reached from ``root`` without following any link, and the final name.
    Missing directories are created on the way when ``create``. The caller closes the
    descriptor. Raises ``OSError``: ``ELOOP`` or ``ENOTDIR`` when a component is (now) a
    link or not a directory, ``ENOENT`` when one is missing, ``EISDIR`` for the root."""
    relative = os.path.relpath(resolved, root)
    parts = [] if relative == "." else relative.split(os.sep)
    if not parts or ".." in parts:
        raise IsADirectoryError(errno.EISDIR, "is a directory", resolved)
    fd = os.open(root, _DIRECTORY)
    try:
        for part in parts[:-1]:
            try:
                inner = os.open(part, _DIRECTORY, dir_fd=fd)
            except NotADirectoryError:
                # O_DIRECTORY | O_NOFOLLOW on a link says ENOTDIR: tell the swap apart.
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "a symbolic link was swapped in", part) from None
                raise
            except FileNotFoundError:
                if not create:
                    raise
                # Created meanwhile: opened (and checked) below like any other.
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                inner = os.open(part, _DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = inner
    except BaseException:
        os.close(fd)
        raise
    return fd, parts[-1]
