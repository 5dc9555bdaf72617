"""What to do next, on a terminal: how to log in to an agent from the command line."""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping, Sequence

from ..client.auth import AuthMethodInfo

__all__ = ["auth_hint", "missing_vars"]


def missing_vars(method: AuthMethodInfo, env: Mapping[str, str]) -> list[str]:
    """The variables ``method`` reads that neither ``env`` nor this process's environment set."""
    return [var for var in method.vars if not (env.get(var) or os.environ.get(var))]


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
    """What to type to log in, one way per auth method the agent offers (lower case, no
    final stop: "authenticate with method `x` (e.g. `acp-notebook run … --auth x ...`)")."""
    if not methods:
        return "log in the way the agent's documentation says (it offers no auth method)"
    return "; or ".join(_how(agent, command_line, method) for method in methods)
