"""The kernel end of the relay: a private socket, its secret, and the relay's hello.

One endpoint per server: a fresh directory (``mkdtemp``: mode 0700, owned by
the user) holding the listening socket and a 0600 token file with a fresh secret. The
agent's relay reads the secret from the file and says it first; a connection that does
not, within a few seconds, is refused and closed. The directory is removed on
:meth:`RelayEndpoint.close` and, failing that, when the kernel's interpreter exits; a
kernel killed outright leaves it behind, so each new endpoint removes the ones whose
kernel is gone (a ``pid`` file in the directory names the kernel).
"""

from __future__ import annotations

import hmac
import os
import re
import secrets
import shutil
import socket
import struct
import sys
import tempfile
import weakref
from pathlib import Path
from typing import TypedDict

import anyio
import anyio.abc

from ...mcp_relay import ACCEPTED, HELLO, REFUSED

#: The private directory of each endpoint: ``<temp dir>/acp-nb-<random>`` (a name of fixed
#: length: it reaches the agent in ``session/new``, whose size the demo agent reports).
DIRECTORY_PREFIX = "acp-nb-"
#: An endpoint's directory inside a string (a ``session/new`` shown by the inspector).
DIRECTORY = re.compile(
    re.escape(os.path.join(tempfile.gettempdir(), DIRECTORY_PREFIX)) + r"[\w.-]+"
)

#: A relay that has not said its hello by then is refused.
HELLO_SECONDS = 10.0
_MAX_HELLO = len(HELLO) + 256


class EnvVariable(TypedDict):
    name: str
    value: str


class McpServerSpec(TypedDict):
    """An ACP ``McpServerStdio`` entry for ``session/new``'s ``mcpServers``."""

    name: str
    command: str
    args: list[str]
    env: list[EnvVariable]


def _is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _has_listener(socket_path: Path) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.connect(str(socket_path))
    except OSError:
        return False
    finally:
        probe.close()
    return True


def remove_left_behind() -> list[Path]:
    """Remove the endpoint directories of kernels that died without cleaning up (killed
    outright: no exit handler ran), with the secret in them; the ones removed. Only the
    user's own, only when the pid in its ``pid`` file is gone and nothing listens on its
    socket (a kernel in another pid namespace sharing the temp directory keeps its own)."""
    removed: list[Path] = []
    with os.scandir(tempfile.gettempdir()) as entries:
        for entry in entries:
            if not entry.name.startswith(DIRECTORY_PREFIX):
                continue
            path = Path(entry.path)
            try:
                if path.lstat().st_uid != os.getuid() or not entry.is_dir(follow_symlinks=False):
                    continue
                pid = int((path / "pid").read_text())
            except (OSError, ValueError):
                continue
            if not _is_gone(pid):
                continue
            if _has_listener(path / "mcp.sock"):
                continue
            shutil.rmtree(path, ignore_errors=True)
            removed.append(path)
    return removed


class RelayEndpoint:
    """A listening Unix socket in a private directory, with the secret relays must say."""

    def __init__(self) -> None:
        if not hasattr(socket, "AF_UNIX"):
            raise RuntimeError("The notebook tools need Unix sockets, which this platform lacks.")
        remove_left_behind()
        self.directory = Path(tempfile.mkdtemp(prefix=DIRECTORY_PREFIX))  # mode 0700
        (self.directory / "pid").write_text(str(os.getpid()))
        self._finalizer = weakref.finalize(self, shutil.rmtree, self.directory, True)
        self.socket_path = self.directory / "mcp.sock"
        self.token_path = self.directory / "token"
        self._token = secrets.token_urlsafe(32).encode("ascii")
        descriptor = os.open(self.token_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(self._token)
        self.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.socket.bind(str(self.socket_path))
        os.chmod(self.socket_path, 0o600)
        self.socket.listen()
        self.socket.setblocking(False)

    def spec(self, name: str) -> McpServerSpec:
        """How an agent starts the relay: this interpreter, the relay module, two paths."""
        args = ["-m", "acp_notebook.mcp_relay", "--socket", str(self.socket_path)]
        args += ["--token-file", str(self.token_path)]
        return {"name": name, "command": sys.executable, "args": args, "env": []}

    async def hello(self, stream: anyio.abc.ByteStream) -> bytes | None:
        """Read the relay's hello; answer it. The bytes that followed it when accepted,
        None when refused (a wrong or missing secret)."""
        buffer = bytearray()
        with anyio.move_on_after(HELLO_SECONDS):
            while b"\n" not in buffer and len(buffer) <= _MAX_HELLO:
                try:
                    buffer += await stream.receive()
                except (anyio.EndOfStream, anyio.BrokenResourceError):
                    break
        line, newline, rest = bytes(buffer).partition(b"\n")
        accepted = bool(newline) and line.startswith(HELLO)
        # Compared in constant time: the secret is not guessable byte by byte.
        accepted = hmac.compare_digest(line[len(HELLO) :], self._token) and accepted
        try:
            await stream.send(ACCEPTED if accepted else REFUSED)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            return None
        return rest if accepted else None

    def close(self) -> None:
        """Remove the directory (socket and token): no new relay can connect."""
        self._finalizer()


def peer_pid(stream: anyio.abc.SocketStream) -> int | None:
    """The process at the other end of a Unix socket (Linux ``SO_PEERCRED``; None where
    the platform does not say)."""
    raw = stream.extra(anyio.abc.SocketAttribute.raw_socket, None)
    option = getattr(socket, "SO_PEERCRED", None)
    if raw is None or option is None:
        return None
    try:
        pid, _uid, _gid = struct.unpack("3i", raw.getsockopt(socket.SOL_SOCKET, option, 12))
    except OSError:
        return None
    return pid or None
