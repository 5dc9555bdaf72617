"""What an auth method says about itself, whatever its ``type``: one accessor for the login
panel, ``--login``, the CLI's ``--auth`` and error hints.

The models know ``agent`` and ``terminal`` methods; others (codex-acp's ``env_var``:
``{"type": "env_var", "id": …, "name": …, "vars": [{"name": "OPENAI_API_KEY"}]}``) parse
as an unknown variant holding only ``raw``, so their ``id`` must be read from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..protocol import models as m

__all__ = ["AuthMethodFacts", "auth_method_facts"]


@dataclass(frozen=True)
class AuthMethodFacts:
    #: ``agent``, ``terminal``, ``env_var`` or whatever type the agent named.
    kind: str
    id: str
    name: str
    description: str | None = None
    #: The environment variables the method needs (``env_var`` methods).
    env_vars: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


def auth_method_facts(method: Any) -> AuthMethodFacts:
    """The facts of an auth method model (known variant or not)."""
    if isinstance(method, m.AuthMethodAgent | m.AuthMethodTerminal):
        kind = "agent" if isinstance(method, m.AuthMethodAgent) else "terminal"
        return AuthMethodFacts(kind, method.id, method.name, method.description)
    raw = getattr(method, "raw", None)
    raw = raw if isinstance(raw, dict) else {}
    env_vars = []
    for var in raw.get("vars") or []:
        if isinstance(var, dict) and isinstance(var.get("name"), str):
            env_vars.append(var["name"])
        elif isinstance(var, str):
            env_vars.append(var)
    method_id = str(raw.get("id", getattr(method, "id", "?")))
    description = raw.get("description")
    return AuthMethodFacts(
        str(raw.get("type", "?")),
        method_id,
        str(raw.get("name") or method_id),
        description if isinstance(description, str) else None,
        env_vars,
        raw,
    )
