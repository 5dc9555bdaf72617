"""MCP servers to pass in `session/new`, from configuration.

Accepted shapes (the common ``mcpServers`` file format, or ACP's own list)::

    {"mcpServers": {"files": {"command": "mcp-files", "args": ["--root", "."], "env": {"K": "V"}},
                    "docs":  {"type": "http", "url": "https://…/mcp", "headers": {"X": "y"}}}}
    [{"name": "files", "command": "/abs/mcp-files", "args": [], "env": [{"name": "K", "value": "V"}]}]

spec: stdio servers are always allowed (their ``command`` must be an absolute path, so a
bare name is resolved on PATH here); http and sse servers only when the agent advertises
``mcpCapabilities.http`` / ``.sse``.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..protocol import models as m

__all__ = ["McpChoice", "McpConfigError", "choose_for_agent", "normalise"]


class McpConfigError(ValueError):
    """A server entry that cannot be passed; the message names it and says why."""


@dataclass(frozen=True)
class McpChoice:
    passed: list[dict[str, Any]]
    #: One sentence per server left out (unsupported transport, command not found).
    skipped: list[str]


def _pairs(value: Any) -> list[dict[str, str]]:
    if isinstance(value, Mapping):
        return [{"name": str(k), "value": str(v)} for k, v in value.items()]
    if isinstance(value, list):
        return [
            {"name": str(i["name"]), "value": str(i["value"])}
            for i in value
            if isinstance(i, Mapping)
        ]
    return []


def normalise(config: Any) -> list[dict[str, Any]]:
    """Server entries in ACP's wire shape (``McpServer``), without checks."""
    if isinstance(config, Mapping) and "mcpServers" in config:
        config = config["mcpServers"]
    entries: list[dict[str, Any]] = []
    if isinstance(config, Mapping):
        items = [
            {"name": name, **spec} for name, spec in config.items() if isinstance(spec, Mapping)
        ]
    elif isinstance(config, Sequence) and not isinstance(config, str):
        items = [dict(item) for item in config if isinstance(item, Mapping)]
    else:
        raise McpConfigError(
            "MCP servers must be a mapping of name to server, or a list of servers."
        )
    for item in items:
        name = str(item.get("name", ""))
        kind = item.get("type") or (
            "stdio" if "command" in item else "http" if "url" in item else None
        )
        if kind == "stdio":
            entries.append(
                {
                    "name": name,
                    "command": str(item["command"]),
                    "args": [str(a) for a in item.get("args", [])],
                    "env": _pairs(item.get("env")),
                }
            )
        elif kind in ("http", "sse"):
            entries.append(
                {
                    "type": kind,
                    "name": name,
                    "url": str(item["url"]),
                    "headers": _pairs(item.get("headers")),
                }
            )
        else:
            raise McpConfigError(f"The MCP server `{name}` has neither a command nor a url.")
    return entries


def choose_for_agent(entries: Sequence[Mapping[str, Any]], caps: m.McpCapabilities) -> McpChoice:
    """The entries this agent can take; the others with a reason each."""
    # The models are loaded when a session opens, not by the configuration that only
    # normalises (`%load_ext`, `%config`): they are most of the client's import time.
    from ..protocol import models as m

    passed: list[dict[str, Any]] = []
    skipped: list[str] = []
    for entry in entries:
        name = entry.get("name", "?")
        kind = entry.get("type", "stdio")
        if kind in ("http", "sse") and not getattr(caps, kind):
            skipped.append(
                f"MCP server `{name}` ({kind}) was not passed: the agent does not support {kind} MCP servers."
            )
            continue
        if kind == "stdio":
            command = str(entry["command"])
            resolved = command if command.startswith("/") else shutil.which(command)
            if resolved is None:
                skipped.append(
                    f"MCP server `{name}` was not passed: its command `{command}` is not on PATH."
                )
                continue
            entry = {**entry, "command": resolved}
        # Exact on output: what we send validates against the schema.
        passed.append(m.parse(m.McpServer, dict(entry)).to_wire())
    return McpChoice(passed, skipped)
