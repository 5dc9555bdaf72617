"""`fs/read_text_file` and `fs/write_text_file` for one session, confined to its roots.

The roots are the session ``cwd`` plus its ``additionalDirectories`` (spec: effective
roots SHOULD bound tool file access). Every path is resolved with ``os.path.realpath``
(symlinks and ``..`` followed) and must land inside a root; nothing outside the roots is
opened, created, or replaced. All disk work runs in a worker thread so that a huge file
or a slow disk never stalls the kernel's event loop.

Requests arrive typed (:mod:`~acp_notebook.client.handlers` read them: a value of the
wrong type never gets here); wire params given directly are read the same way first.

Error codes (one-sentence messages, ``data`` names the path):

* ``-32602`` invalid params: ``path`` relative or holding a NUL byte; the resolved path
  outside the roots (``data.roots`` lists them); ``line`` below 1, ``limit`` below 0,
  ``content`` not valid Unicode; the path is a directory or not a regular file; a parent of a
  path to write is not a directory; the read would return more than ``max_read_bytes``
  (the message suggests ``line`` / ``limit``). Outside-the-roots is "invalid params"
  rather than a custom code because agents only show the message to the model, and
  -32602 is the code every peer already understands as "this request can't be served
  as asked".
* ``-32002`` resource not found: the file to read does not exist (spec: use -32002
  for missing files).
* ``-32603`` internal error: the file is not UTF-8 text, or the OS refused the
  operation (permission denied, disk full, ...); the message carries the OS reason.

Confinement holds under races: a path is resolved once, then walked from its root through
directory descriptors without following links (``beneath.py``), and the file is opened,
created and replaced relative to its directory's descriptor, so a symlink swapped in
between the check and the use (``-32602``, "changed into a symbolic link") never leads
outside. Two more refusals (``-32602``): a file with more than one hard link is not read
(the other link may be a file outside the roots, which no check of this path can see), and
a read-only file is not replaced (the agent is told to ask for it to be made writable).
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import logging
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import anyio
import anyio.to_thread

from ..protocol import models as m
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError
from .beneath import open_parent, root_of
from .handlers import Params, read_params
from .lines import read_window

__all__ = [
    "DEFAULT_MAX_READ_BYTES",
    "FileChange",
    "FileSystem",
    "is_inside",
    "resolve_inside",
    "resolve_root",
]

log = logging.getLogger(__name__)

#: Largest text one ``fs/read_text_file`` answer may carry (and largest old text kept
#: for a diff). 16 MiB is far above any source file a model can use, and well below what
#: would strain the kernel or the JSON-RPC pipe.
DEFAULT_MAX_READ_BYTES = 16 * 1024 * 1024

_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_temp_counter = itertools.count(1)


@dataclass(frozen=True)
class FileChange:
    """One successful ``fs/write_text_file``, for a UI to show as a diff."""

    #: The path as the agent sent it (what its tool calls show).
    path: str
    #: The text before the write; None when the file did not exist, or when it existed
    #: but its old text could not be kept (see ``old_text_unavailable``).
    old_text: str | None
    new_text: str
    #: True when the file existed but was not UTF-8 text or was larger than the read
    #: limit, so ``old_text`` is None although the file was not new.
    old_text_unavailable: bool = False
    #: The real path that was written (symlinks resolved).
    resolved_path: str = ""


def resolve_root(path: str | os.PathLike[str]) -> str:
    """An absolute root directory, resolved (programmer error if relative)."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        raise ValueError(f"Session directories must be absolute paths, got {text!r}.")
    return os.path.realpath(text)


def is_inside(path: str, root: str) -> bool:
    """Whether resolved ``path`` is ``root`` or below it.

    ``commonpath`` compares whole components, so ``/root2`` is not inside ``/root``
    (a string-prefix test would say it is).
    """
    try:
        return os.path.commonpath([path, root]) == root
    except ValueError:  # different drives, or mixing absolute and relative
        return False


def _roots_text(roots: Sequence[str]) -> str:
    return ", ".join(roots) if roots else "none"


def resolve_inside(value: str, roots: Sequence[str], *, what: str = "path") -> str:
    """Validate an absolute path from the agent and resolve it inside ``roots``.

    Returns the real path (symlinks and ``..`` resolved); raises ``RpcError`` -32602 when
    ``value`` is not absolute or resolves outside every root. This touches the disk
    (``realpath`` reads links), so call it from a worker thread.
    """
    if "\x00" in value:
        # No file name can hold NUL; refusing beats letting the OS truncate the name.
        raise RpcError(
            INVALID_PARAMS, f"The {what} {value!r} contains a NUL byte.", {"path": value}
        )
    if not os.path.isabs(value):
        # spec: all file paths are absolute.
        raise RpcError(
            INVALID_PARAMS,
            f"The {what} {value!r} is relative, but it must be absolute.",
            {"path": value},
        )
    try:
        resolved = os.path.realpath(value)
    except OSError:  # a link swapped for a directory while it was read (EINVAL), a loop
        raise RpcError(
            INVALID_PARAMS,
            f"The {what} {value} changed while it was resolved (a symbolic link on it was "
            "swapped), so it was not used.",
            {"path": value},
        ) from None
    if not any(is_inside(resolved, root) for root in roots):
        raise _outside(value, resolved, roots, what)
    return resolved


def _outside(value: str, resolved: str, roots: Sequence[str], what: str = "path") -> RpcError:
    via = "" if resolved == os.path.normpath(value) else f" (it resolves to {resolved})"
    return RpcError(
        INVALID_PARAMS,
        f"The {what} {value}{via} is outside the session's directories ({_roots_text(roots)}).",
        {"path": value, "resolved": resolved, "roots": list(roots)},
    )


def _os_error(action: str, path: str, exc: OSError) -> RpcError:
    reason = exc.strerror or str(exc)
    return RpcError(INTERNAL_ERROR, f"Could not {action} {path}: {reason}.", {"path": path})


def _not_a_file(path: str, mode: int) -> RpcError:
    if stat.S_ISDIR(mode):
        return RpcError(
            INVALID_PARAMS, f"The path {path} is a directory, not a file.", {"path": path}
        )
    return RpcError(
        INVALID_PARAMS,
        f"The path {path} is not a regular file (a device, socket or pipe).",
        {"path": path},
    )


def _at_least(key: str, value: int | None, minimum: int) -> int | None:
    if value is not None and value < minimum:
        raise RpcError(
            INVALID_PARAMS,
            f"The `{key}` parameter must be an integer of at least {minimum}, not {value!r}.",
            {key: value},
        )
    return value


def _open_no_follow(parent: int, name: str, flags: int, mode: int = 0o777) -> int:
    # O_NOFOLLOW: the final component was resolved already, so a symlink here means
    # someone swapped it in after the check; refuse instead of following it.
    return os.open(name, flags | _O_NOFOLLOW | _O_CLOEXEC, mode, dir_fd=parent)


def _swapped(path: str) -> RpcError:
    return RpcError(
        INVALID_PARAMS,
        f"The path {path} changed into a symbolic link while it was used, so nothing was "
        "read or written; use the path it points to.",
        {"path": path},
    )


class FileSystem:
    """Serves ``fs/read_text_file`` / ``fs/write_text_file`` for one session.

    ``roots`` are absolute directories (session ``cwd`` first, then additional
    directories). ``on_change`` is called on the event loop with every
    :class:`FileChange`, after it was appended to :attr:`changes`.
    """

    def __init__(
        self,
        roots: Sequence[str | os.PathLike[str]],
        *,
        max_read_bytes: int = DEFAULT_MAX_READ_BYTES,
        on_change: Callable[[FileChange], None] | None = None,
    ) -> None:
        self._roots: list[str] = []
        for root in roots:
            self.add_root(root)
        self.max_read_bytes = max_read_bytes
        self.on_change = on_change
        self.changes: list[FileChange] = []
        # One write at a time, so each recorded old_text is the previous new_text.
        self._write_lock = anyio.Lock()

    @property
    def roots(self) -> list[str]:
        """The resolved root directories."""
        return list(self._roots)

    def add_root(self, path: str | os.PathLike[str] | Path) -> None:
        """Allow access below another absolute directory (stored resolved)."""
        root = resolve_root(path)
        if root not in self._roots:
            self._roots.append(root)

    # -- fs/read_text_file -------------------------------------------------------------

    async def read_text_file(
        self, request: m.ReadTextFileRequest | Params
    ) -> m.ReadTextFileResponse:
        """``fs/read_text_file``: the whole file's text, or a window of its lines."""
        request = read_params(m.ReadTextFileRequest, request)
        line = _at_least("line", request.line, 1)  # spec: line numbers are 1-based
        # limit 0 means zero lines (the literal reading of "maximum number of lines").
        limit = _at_least("limit", request.limit, 0)
        content = await anyio.to_thread.run_sync(self._read_sync, request.path, line, limit)
        return m.ReadTextFileResponse(content=content)

    def _parent(self, path: str, resolved: str, *, create: bool = False) -> tuple[int, str]:
        """The directory of ``resolved`` (``path`` resolved inside the roots, once) opened
        through descriptors from its root (``beneath.py``): the descriptor (closed by the
        caller) and the final name."""
        try:
            return open_parent(root_of(resolved, self._roots), resolved, create=create)
        except IsADirectoryError:
            raise _not_a_file(path, stat.S_IFDIR) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _swapped(path) from None
            if create and exc.errno == errno.ENOTDIR:
                raise RpcError(
                    INVALID_PARAMS,
                    f"Cannot write {path} because a directory on its way is not a directory.",
                    {"path": path},
                ) from None
            raise

    def _read_sync(self, path: str, line: int | None, limit: int | None) -> str:
        resolved = resolve_inside(path, self._roots)
        try:
            parent, name = self._parent(path, resolved)
            try:
                # O_NONBLOCK: opening a FIFO must not hang the worker thread waiting for
                # a writer; the type check below then refuses it.
                fd = _open_no_follow(parent, name, os.O_RDONLY | _O_NONBLOCK)
            finally:
                os.close(parent)
        except (FileNotFoundError, NotADirectoryError):
            # spec: -32002 for missing files.
            raise RpcError(
                RESOURCE_NOT_FOUND, f"The file {path} does not exist.", {"path": path}
            ) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise _swapped(path) from None
            raise _os_error("read", path, exc) from None
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise _not_a_file(path, info.st_mode)
            if info.st_nlink > 1:
                raise RpcError(
                    INVALID_PARAMS,
                    f"The file {path} has {info.st_nlink} hard links, and another one may lie "
                    "outside the session's directories, so it is not read here.",
                    {"path": path, "links": info.st_nlink},
                )
            f = open(fd, "rb", closefd=True)  # noqa: SIM115 (closed by the with below)
        except BaseException:
            os.close(fd)
            raise
        with f:
            try:
                if line is None and limit is None:
                    data = self._read_whole(f, info.st_size, path)
                else:
                    data = read_window(f, line or 1, limit, self.max_read_bytes, path)
            except OSError as exc:
                raise _os_error("read", path, exc) from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise RpcError(
                INTERNAL_ERROR,
                f"The file {path} is not UTF-8 text, so it cannot be read as a text file.",
                {"path": path},
            ) from None

    def _read_whole(self, f: BinaryIO, size: int, path: str) -> bytes:
        limit = self.max_read_bytes
        too_large = RpcError(
            INVALID_PARAMS,
            f"The file {path} is larger than {limit} bytes; read it in parts with `line` and `limit`.",
            {"path": path, "size": size, "maxBytes": limit},
        )
        if size > limit:
            raise too_large
        data = f.read(limit + 1)  # + 1: the file may have grown since fstat
        if len(data) > limit:
            raise too_large
        return data

    # -- fs/write_text_file ------------------------------------------------------------

    async def write_text_file(
        self, request: m.WriteTextFileRequest | Params
    ) -> m.WriteTextFileResponse:
        """``fs/write_text_file``: atomically replace (or create) the file."""
        request = read_params(m.WriteTextFileRequest, request)
        path, content = request.path, request.content
        try:
            data = content.encode("utf-8")
        except UnicodeEncodeError:  # lone surrogates from a JSON "\ud800" escape
            raise RpcError(
                INVALID_PARAMS, "The `content` parameter is not valid Unicode text."
            ) from None
        async with self._write_lock:
            change = await anyio.to_thread.run_sync(self._write_sync, path, content, data)
            self.changes.append(change)
        if self.on_change is not None:
            try:
                self.on_change(change)
            except Exception:  # a UI observer must not turn a done write into an error
                log.exception("on_change callback failed for %s", change.path)
        # spec (§12): send {} for fs/write_text_file, not null.
        return m.WriteTextFileResponse()

    def _write_sync(self, path: str, content: str, data: bytes) -> FileChange:
        resolved = resolve_inside(path, self._roots)
        try:
            # spec: fs/write_text_file MUST create the file if it does not exist; we also
            # create its missing parents, each inside the one checked before it.
            parent, name = self._parent(path, resolved, create=True)
        except OSError as exc:
            raise _os_error("create the directories for", path, exc) from None
        try:
            try:
                old_info: os.stat_result | None = os.stat(
                    name, dir_fd=parent, follow_symlinks=False
                )
            except FileNotFoundError:
                old_info = None
            except OSError as exc:
                raise _os_error("write", path, exc) from None
            if old_info is not None:
                if stat.S_ISLNK(old_info.st_mode):
                    raise _swapped(path)  # resolved already: a link here was swapped in
                if not stat.S_ISREG(old_info.st_mode):
                    raise _not_a_file(path, old_info.st_mode)
                if not old_info.st_mode & stat.S_IWUSR:
                    raise RpcError(
                        INVALID_PARAMS,
                        f"The file {path} is read-only, so it was not replaced; ask the user "
                        "to make it writable if it should change.",
                        {"path": path},
                    )
            old_text, unavailable = self._old_text(parent, name, old_info)
            self._replace_atomically(path, parent, name, data, old_info)
        finally:
            os.close(parent)
        return FileChange(
            path=path,
            old_text=old_text,
            new_text=content,
            old_text_unavailable=unavailable,
            resolved_path=resolved,
        )

    def _old_text(
        self, parent: int, name: str, info: os.stat_result | None
    ) -> tuple[str | None, bool]:
        """The file's current text for the diff, or (None, True) if it can't be kept."""
        if info is None:
            return None, False
        if info.st_size > self.max_read_bytes:
            return None, True
        try:
            fd = _open_no_follow(parent, name, os.O_RDONLY | _O_NONBLOCK)
            with open(fd, "rb", closefd=True) as f:
                raw = f.read(self.max_read_bytes + 1)
        except OSError:
            return None, True
        if len(raw) > self.max_read_bytes:
            return None, True
        try:
            return raw.decode("utf-8"), False
        except UnicodeDecodeError:
            return None, True

    def _replace_atomically(
        self,
        path: str,
        parent: int,
        name: str,
        data: bytes,
        old_info: os.stat_result | None,
    ) -> None:
        """Write a temp file next to the target, then rename it over the target, both
        relative to the directory's descriptor ``parent``.

        A crash leaves either the old file or the new one, never half of one; and since
        the directory entry is replaced, a hard link to a file elsewhere is not written
        through either.
        """
        # Fresh files get 0o666 minus the umask, like any editor's; an existing file's
        # permission bits are copied below.
        mode = 0o600 if old_info is not None else 0o666
        fd = -1
        temp = ""
        for _ in range(100):
            temp = f".{name[:100]}.{os.getpid()}.{next(_temp_counter)}.acp-tmp"
            try:
                fd = _open_no_follow(parent, temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
                break
            except FileExistsError:
                continue
            except OSError as exc:
                raise _os_error("write", path, exc) from None
        if fd < 0:
            raise RpcError(INTERNAL_ERROR, f"Could not create a temporary file next to {path}.")
        try:
            try:
                if old_info is not None:
                    os.fchmod(fd, stat.S_IMODE(old_info.st_mode))
                    with contextlib.suppress(OSError):  # only root may give files away
                        os.fchown(fd, old_info.st_uid, old_info.st_gid)
                view = memoryview(data)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)  # the data is on disk before the rename makes it visible
            finally:
                os.close(fd)
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            if isinstance(exc, OSError):
                raise _os_error("write", path, exc) from None
            raise
        # Make the rename itself durable; best effort (not every filesystem allows it).
        with contextlib.suppress(OSError):
            os.fsync(parent)
