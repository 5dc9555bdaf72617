"""Auth methods as the client shows and chooses them, whatever their ``type``.

The schema knows two variants (``agent``, ``terminal``); agents also send others —
codex-acp 0.16.0 offers ``{"type": "env_var", "id": "openai-api-key", "vars": [...]}``.
A method of unknown type still has the ``id``, ``name`` and ``description`` every
method carries, so it is listed by its id and can be chosen (`authenticate` takes
any advertised id). This module reads those fields once, for every consumer.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol import models as m

__all__ = [
    "AuthMethodInfo",
    "auth_method_info",
    "env_methods_first",
    "missing_vars",
    "ready_env_method",
]


@dataclass(frozen=True)
class AuthMethodInfo:
    """What the client needs of one advertised auth method."""

    id: str
    name: str
    description: str | None
    #: The wire ``type``: ``agent`` (also when absent), ``terminal``, or what the agent sent.
    type: str
    #: Environment variables the method reads (``env_var`` methods' ``vars``), by name.
    vars: tuple[str, ...] = ()
    #: Terminal methods: the arguments to add to the agent's command line.
    args: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``Name (`id`)``, or just ``id`` when the name is the id."""
        return self.id if self.name == self.id else f"{self.name} (`{self.id}`)"


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _var_names(raw_vars: Any) -> tuple[str, ...]:
    """``vars`` as names: each entry is ``{"name": …}`` or a bare string."""
    names: list[str] = []
    for var in raw_vars if isinstance(raw_vars, list) else []:
        name = var.get("name") if isinstance(var, dict) else var
        if isinstance(name, str) and name:
            names.append(name)
    return tuple(names)


def auth_method_info(method: m.AuthMethod) -> AuthMethodInfo:
    """The fields of ``method``, a known variant or an :class:`~m.UnknownAuthMethod`."""
    if isinstance(method, m.AuthMethodTerminal):
        return AuthMethodInfo(
            method.id,
            method.name,
            method.description,
            "terminal",
            args=tuple(method.args or ()),
        )
    if isinstance(method, m.AuthMethodAgent):
        return AuthMethodInfo(method.id, method.name, method.description, "agent")
    raw = method.raw
    method_id = _text(raw.get("id")) or "?"
    return AuthMethodInfo(
        method_id,
        _text(raw.get("name")) or method_id,
        _text(raw.get("description")),
        method.type or "?",
        vars=_var_names(raw.get("vars")),
    )


def missing_vars(method: AuthMethodInfo, env: Mapping[str, str]) -> list[str]:
    """The variables ``method`` reads that neither ``env`` (what the agent is given) nor
    this process's environment set."""
    return [var for var in method.vars if not (env.get(var) or os.environ.get(var))]


def ready_env_method(
    methods: Sequence[AuthMethodInfo], env: Mapping[str, str]
) -> AuthMethodInfo | None:
    """The first method that reads variables, all of them set: the login that needs no
    one (codex offers its browser login ``chatgpt`` first, and its key methods after)."""
    return next((mm for mm in methods if mm.vars and not missing_vars(mm, env)), None)


def env_methods_first(methods: Sequence[AuthMethodInfo]) -> list[AuthMethodInfo]:
    """``methods`` with those that read variables first (a key is a step anyone can take
    from code; an agent-handled login may open a browser), each group in its order."""
    return [mm for mm in methods if mm.vars] + [mm for mm in methods if not mm.vars]
