"""What to do next, on a terminal: how to log in to an agent from the command line."""

from __future__ import annotations

import shlex
from collections.abc import Sequence

from ..client.auth import AuthMethodInfo, env_methods_first, missing_vars

__all__ = ["auth_hint", "missing_vars"]


def _how(agent: str, command_line: str, method: AuthMethodInfo) -> str:
    if method.type == "terminal":
        return f"run `{' '.join([command_line, *method.args])}` in a terminal"
    run = f"acp-notebook run --agent {shlex.quote(agent)} --auth {method.id} ..."
    how = f"authenticate with method `{method.id}` (e.g. `{run}`)"
    if method.vars:
        names = " and ".join(method.vars)
        how = f"set {names} (export it, or `--env {method.vars[0]}=…`) and " + how
    return how


def auth_hint(agent: str, command_line: str, methods: Sequence[AuthMethodInfo]) -> str:
    """What to type to log in, one way per auth method the agent offers, those that read a
    key first (lower case, no final stop: "authenticate with method `x` (e.g.
    `acp-notebook run … --auth x ...`)")."""
    if not methods:
        return "log in the way the agent's documentation says (it offers no auth method)"
    return "; or ".join(_how(agent, command_line, mm) for mm in env_methods_first(methods))
