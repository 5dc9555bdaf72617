"""A small state file next to the notebook: its last session per agent, and its MCP servers.

``.acp-notebook.json`` in the notebook's directory::

    {"notebooks": {"analysis.ipynb": {"claude": {"default": {"sessionId": "…", "title": "…"}}}},
     "mcpServers": {"files": {"command": "/usr/bin/mcp-files", "args": [], "env": {}}}}

The notebook is named by ``JPY_SESSION_NAME``, which Jupyter Server sets in the kernel's
environment; without it (a console, nbclient) the key is ``"default"``. Writes are
atomic: a crash never leaves half a file.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from typing import Any

log = logging.getLogger(__name__)

STATE_FILE = ".acp-notebook.json"


def notebook_key(cwd: str) -> str:
    """This kernel's notebook, relative to ``cwd`` when inside it."""
    name = os.environ.get("JPY_SESSION_NAME")
    if not name:
        return "default"
    if os.path.isabs(name):
        with contextlib.suppress(ValueError):
            rel = os.path.relpath(name, cwd)
            if not rel.startswith(".."):
                return rel
    return os.path.basename(name)


class NotebookState:
    def __init__(self, cwd: str) -> None:
        self.path = os.path.join(cwd, STATE_FILE)
        self.notebook = notebook_key(cwd)

    def load(self) -> dict[str, Any]:
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning("ignoring unreadable %s: %s", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}

    def save(self, data: dict[str, Any]) -> None:
        folder = os.path.dirname(self.path)
        fd, tmp = tempfile.mkstemp(prefix=".acp-notebook.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, ensure_ascii=False)
                handle.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # ------------------------------------------------------------------ sessions

    def last_session(self, agent: str, name: str) -> dict[str, Any] | None:
        entry = self.load().get("notebooks", {}).get(self.notebook, {}).get(agent, {}).get(name)
        return (
            entry if isinstance(entry, dict) and isinstance(entry.get("sessionId"), str) else None
        )

    def remember_session(self, agent: str, name: str, session_id: str, title: str | None) -> None:
        try:
            data = self.load()
            agents = data.setdefault("notebooks", {}).setdefault(self.notebook, {})
            entry = {"sessionId": session_id}
            if title:
                entry["title"] = title
            if agents.setdefault(agent, {}).get(name) == entry:
                return
            agents[agent][name] = entry
            self.save(data)
        except OSError as exc:  # a read-only folder must not break the turn
            log.warning("could not remember the session in %s: %s", self.path, exc)

    # ------------------------------------------------------------------ MCP servers

    def mcp_servers(self) -> dict[str, Any]:
        servers = self.load().get("mcpServers")
        return servers if isinstance(servers, dict) else {}
