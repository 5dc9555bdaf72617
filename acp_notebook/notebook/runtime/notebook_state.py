"""What acp_notebook remembers per notebook (its last session per agent and name), kept in
a per-user state directory so nothing litters the folders notebooks run in.

``$XDG_STATE_HOME/acp-notebook/notebooks/<hash>.json`` (``~/.local/state`` when the variable
is unset), one file per notebook, keyed by the notebook's absolute path::

    {"notebook": "/home/me/work/analysis.ipynb",
     "sessions": {"claude": {"default": {"sessionId": "…", "title": "…"}}}}

The notebook is named by ``JPY_SESSION_NAME``, which Jupyter Server sets in the kernel's
environment; without it (a console, nbclient) it is ``default`` in the kernel's directory.

``.acp-notebook.json`` beside the notebook, where earlier versions wrote, is still read
(never written): its sessions when this notebook has none here yet, and its MCP servers
(``{"mcpServers": {name: {"command": …}}}``), which the user may keep writing there — used
only once confirmed as shown (:meth:`NotebookState.trust_mcp_servers`, ``folder_servers.py``),
since they name commands.

Every file is opened safely — a regular file only (no symlink, no FIFO: opened
non-blocking, checked with ``fstat`` before reading), at most :data:`MAX_BYTES` — and read
leniently: anything unreadable or of the wrong shape is skipped with a warning, so a bad
file never breaks ``%acp``. Writes are atomic: a crash never leaves half a file.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import stat
import tempfile
import warnings
from typing import Any

from ...client.protected import make_state_dir, state_dir
from ..located import locate, notebook_folder
from .folder_servers import TrustKey, shown, trust_record

__all__ = [
    "LEGACY_FILE",
    "MAX_BYTES",
    "FolderServersChanged",
    "NotebookState",
    "StateFileWarning",
    "read_json_object",
]

LEGACY_FILE = ".acp-notebook.json"
#: A state file larger than this is not read (ours stay a few kilobytes).
MAX_BYTES = 1_000_000


class StateFileWarning(UserWarning):
    """A state file, or an entry of it, could not be used; it was skipped."""


class FolderServersChanged(RuntimeError):
    """What ``trust`` would confirm is not what was shown; nothing was trusted."""


def _warn(message: str) -> None:
    warnings.warn(message, StateFileWarning, stacklevel=3)


def read_json_object(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in ``path``, read safely; ``{}`` when it is missing, and (with a
    warning) when it is not a regular file, too large, not JSON, or not an object."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return {}
    except OSError as exc:  # a symlink (ELOOP with O_NOFOLLOW), no permission, …
        _warn(
            f"acp_notebook ignored {path}: it cannot be opened as a regular file ({exc.strerror})."
        )
        return {}
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            _warn(f"acp_notebook ignored {path}: it is not a regular file.")
            return {}
        if info.st_size > MAX_BYTES:
            _warn(f"acp_notebook ignored {path}: it is larger than {MAX_BYTES:,} bytes.")
            return {}
        raw = handle.read(MAX_BYTES + 1)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        _warn(f"acp_notebook ignored {path}: it is not valid JSON ({type(exc).__name__}).")
        return {}
    if not isinstance(data, dict):
        _warn(f"acp_notebook ignored {path}: it holds a JSON {type(data).__name__}, not an object.")
        return {}
    return data


def _session_entry(value: Any, where: str) -> dict[str, str] | None:
    """A remembered session (``{"sessionId": str, "title"?: str}``), or None (warned)."""
    if value is None:
        return None
    if isinstance(value, dict) and isinstance(value.get("sessionId"), str):
        entry = {"sessionId": value["sessionId"]}
        if isinstance(value.get("title"), str):
            entry["title"] = value["title"]
        return entry
    _warn(f"acp_notebook skipped the session remembered in {where}: it has no string sessionId.")
    return None


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def notebook_path(cwd: str) -> str:
    """This kernel's notebook as an absolute path, as the server named it whether or not
    the kernel can see the file (``located.py``); without a name, ``default`` in the
    notebook's folder (the server's word for it, else ``cwd``)."""
    return locate(cwd).name or os.path.join(os.path.normpath(notebook_folder(cwd)), "default")


class NotebookState:
    """The state of the notebook a kernel runs, in the per-user state directory."""

    def __init__(self, cwd: str) -> None:
        self.notebook = notebook_path(cwd)
        digest = hashlib.sha256(self.notebook.encode("utf-8", "surrogatepass")).hexdigest()[:24]
        self.path = state_dir() / "notebooks" / f"{digest}.json"
        #: The built-in demo agent's sessions of this notebook (its ``--state-file``), so
        #: ``--history``, ``--load`` and ``--resume`` work after a kernel restart.
        self.demo_sessions = state_dir() / "demo" / f"{digest}.json"
        #: Where earlier versions kept it (read only), and the notebook's key there.
        self.legacy_path = os.path.join(cwd, LEGACY_FILE)
        self.legacy_key = os.path.relpath(self.notebook, cwd)
        #: The secret trust records are keyed by, and (when it is kept in memory) what this
        #: kernel trusted.
        self.trust_key = TrustKey(state_dir(), cwd)
        self._trusted_here: set[str] = set()
        #: The folder's servers as ``%acp --mcp`` last showed them in this kernel: what
        #: ``trust`` may confirm (None: not shown yet).
        self.mcp_servers_read: str | None = None

    def load(self) -> dict[str, Any]:
        data = read_json_object(self.path)
        # Two notebooks cannot share a file, but a file copied by hand could name another.
        return data if data.get("notebook") in (None, self.notebook) else {}

    def save(self, data: dict[str, Any]) -> None:
        make_state_dir()
        self.path.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".state.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump({**data, "notebook": self.notebook}, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # ------------------------------------------------------------------ sessions

    def last_session(self, agent: str, name: str) -> dict[str, str] | None:
        """This notebook's last session of ``agent`` under ``name``, if remembered."""
        mine = _mapping(_mapping(self.load().get("sessions")).get(agent)).get(name)
        if mine is not None:
            return _session_entry(mine, str(self.path))
        legacy = read_json_object(self.legacy_path)
        notebooks = _mapping(legacy.get("notebooks"))
        entry = _mapping(_mapping(notebooks.get(self.legacy_key)).get(agent)).get(name)
        return _session_entry(entry, self.legacy_path)

    def remember_session(self, agent: str, name: str, session_id: str, title: str | None) -> None:
        try:
            data = self.load()
            sessions = _mapping(data.get("sessions"))
            agents = {k: v for k, v in sessions.items() if isinstance(v, dict)}
            entry = {"sessionId": session_id, **({"title": title} if title else {})}
            if agents.get(agent, {}).get(name) == entry:
                return
            agents[agent] = {**agents.get(agent, {}), name: entry}
            self.save({**data, "sessions": agents})
        except OSError as exc:  # a read-only home must not break the turn
            _warn(f"acp_notebook could not remember the session in {self.path}: {exc}")

    # ------------------------------------------------------------------ MCP servers

    def mcp_servers_shown(self) -> str | None:
        """The folder's MCP servers exactly as ``%acp --mcp`` shows them (None: there are
        none); what ``trust`` confirms (``folder_servers.py``)."""
        servers = self.mcp_servers()
        return shown(servers) if servers else None

    def mcp_servers_trusted(self) -> bool:
        """Whether the person confirmed the folder's MCP servers as they read now: a file
        beside a notebook (a cloned repository's) names commands the agent would start,
        so they are used only once confirmed (``%acp --mcp trust``), and again after any
        change to them. The record is keyed by a secret the agent cannot read."""
        text = self.mcp_servers_shown()
        key = self.trust_key.get(create=False)
        if text is None or key is None:
            return False
        record = trust_record(text, key)
        if self.trust_key.in_memory:
            return record in self._trusted_here
        trusted = self.load().get("trustedMcpServers")
        return isinstance(trusted, list) and any(
            isinstance(kept, str) and hmac.compare_digest(kept, record) for kept in trusted
        )

    def trust_mcp_servers(self, text: str) -> None:
        """Confirm the folder's MCP servers as ``text`` showed them (the listing the person
        read); :class:`FolderServersChanged` when the file reads otherwise now."""
        if self.mcp_servers_shown() != text:
            raise FolderServersChanged(
                f"The MCP servers in {self.legacy_path} changed after they were shown, so "
                "nothing was trusted; run `%acp --mcp` and read them again before trusting."
            )
        key = self.trust_key.get(create=True)
        if key is None:
            raise FolderServersChanged(
                f"The trust key {self.trust_key.path} is not a private file of yours, so "
                "nothing was trusted; remove it and trust again."
            )
        if self.mcp_servers_trusted():
            return
        record = trust_record(text, key)
        if self.trust_key.in_memory:
            self._trusted_here.add(record)
            return
        self.save({**self.load(), "trustedMcpServers": [record]})

    def mcp_servers(self) -> dict[str, dict[str, Any]]:
        """The MCP servers in ``.acp-notebook.json`` beside the notebook, by name; an entry
        that is not an object is skipped with a warning."""
        servers = read_json_object(self.legacy_path).get("mcpServers")
        if servers is None:
            return {}
        if not isinstance(servers, dict):
            _warn(f"acp_notebook ignored mcpServers in {self.legacy_path}: it is not an object.")
            return {}
        kept = {}
        for name, entry in servers.items():
            if isinstance(entry, dict):
                kept[name] = entry
            else:
                _warn(
                    f"acp_notebook skipped the MCP server {name!r} in {self.legacy_path}: not an object."
                )
        return kept
