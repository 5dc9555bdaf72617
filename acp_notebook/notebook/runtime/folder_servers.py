"""The MCP servers of ``.acp-notebook.json`` beside a notebook: shown exactly, trusted only
as shown, with a trust the agent cannot write for itself.

A folder's file names commands the agent would start (a cloned repository brings its own),
so they run only once the person confirmed them (``%acp --mcp trust``):

1. **Shown exactly.** Each server as ACP will pass it: its name, its command line quoted
   as a shell reads it (:func:`quote`), every ``env`` entry or header, and what the entry
   holds that is not passed (``cwd``). A character that is not printable is written as an
   escape (``$'a\\nb'``), so a name holding a newline cannot forge a line of the listing.
2. **Trusted as shown.** ``trust`` confirms the text ``%acp --mcp`` last showed in this
   kernel. If the file reads otherwise by then (changed after the person read it), nothing
   is trusted and the answer says so.
3. **A trust the agent cannot plant.** The per-user state file keeps an HMAC of the text
   that was confirmed, keyed by a per-user secret (``trust-key``, 0600, in the state
   directory), not a hash anyone can compute. The agent reaches files through the client
   only inside the notebook's folder; when the state directory lies inside it (a notebook
   kept in the home directory), the key could be read there, so it is kept in memory and
   the trust lasts for this kernel only.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import shlex
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...client.mcp import McpConfigError, normalise

__all__ = ["TrustKey", "quote", "shown", "trust_record"]

_KEY_BYTES = 32
_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\", "'": "\\'"}


def _escaped(ch: str) -> str:
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    if ch.isprintable():
        return ch
    code = ord(ch)
    return (
        f"\\x{code:02x}"
        if code < 0x100
        else f"\\u{code:04x}"
        if code < 0x10000
        else f"\\U{code:08x}"
    )


def quote(text: str) -> str:
    """``text`` as one shell word on one line: ``shlex.quote`` when every character is
    printable, else ANSI-C quoting (``$'…'``) with each other character escaped."""
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join(_escaped(ch) for ch in text) + "'"


def _pairs(pairs: list[dict[str, str]], label: str) -> list[str]:
    return [f"    {label} {quote(p['name'])}={quote(p['value'])}" for p in pairs]


def shown(servers: Mapping[str, Any]) -> str:
    """The servers of the folder's file (name → entry), as ``%acp --mcp`` lists them."""
    lines: list[str] = []
    for raw_name, raw in servers.items():
        try:
            (entry,) = normalise({raw_name: raw})
        except (McpConfigError, KeyError, TypeError, ValueError):
            lines.append(f"  {quote(str(raw_name))}: not usable (neither a command nor a url)")
            continue
        if "command" in entry:
            argv = shlex.join([entry["command"], *entry["args"]])
            if not all(part.isprintable() for part in [entry["command"], *entry["args"]]):
                argv = " ".join(quote(part) for part in [entry["command"], *entry["args"]])
            lines.append(f"  {quote(entry['name'])}: stdio {argv}")
            lines += _pairs(entry["env"], "env")
        else:
            lines.append(f"  {quote(entry['name'])}: {entry['type']} {quote(entry['url'])}")
            lines += _pairs(entry["headers"], "header")
        if isinstance(raw, Mapping) and "cwd" in raw:
            lines.append(f"    cwd {quote(str(raw['cwd']))} (not passed: ACP gives none)")
    return "\n".join(lines)


def trust_record(text: str, key: bytes) -> str:
    """What the state file keeps for confirmed ``text``: its HMAC under ``key``."""
    return hmac.new(key, text.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()


def _inside(path: Path, folder: str) -> bool:
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([real, root]) == root


class TrustKey:
    """The per-user secret trust records are keyed by (see the module's docstring)."""

    def __init__(self, directory: Path, folder: str) -> None:
        self.path = directory / "trust-key"
        #: The key is kept in memory only: the state directory is inside ``folder``.
        self.in_memory = _inside(directory, folder)
        self._memory = secrets.token_bytes(_KEY_BYTES) if self.in_memory else None

    def get(self, *, create: bool) -> bytes | None:
        """The key; None when there is none yet and ``create`` is false (nothing was
        ever trusted), or when it cannot be read safely."""
        if self._memory is not None:
            return self._memory
        try:
            return self._read()
        except FileNotFoundError:
            pass
        except OSError:  # a symbolic link, not readable: not a key of ours
            return None
        if not create:
            return None
        # The state directory: its user's only (``protected.make_state_dir``).
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        key = secrets.token_bytes(_KEY_BYTES)
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:  # another kernel made it meanwhile
            return self._read()
        with os.fdopen(fd, "wb") as handle:
            handle.write(key)
        return key

    def _read(self) -> bytes | None:
        fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            # Only the user's own private regular file: another's would let them plant trust.
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
                return None
            if info.st_mode & 0o077:
                return None
            key = handle.read(_KEY_BYTES + 1)
        return key if len(key) == _KEY_BYTES else None
