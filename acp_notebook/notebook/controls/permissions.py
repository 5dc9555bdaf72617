"""The controls of permission requests: the rules that answer them before the policy,
and answering a waiting request from code (for frontends that cannot show its buttons)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .answers import Column, Table, Text
from .base import ControlContext, ControlFailed

if TYPE_CHECKING:
    from ..runtime.snapshots import PendingPermission


def rules(ctx: ControlContext) -> Text:
    """The permission rules in order, what each does, and what decides otherwise."""
    rules = ctx.agents.permission_rules
    lines = rules.describe(ctx.policy)
    if not rules:
        lines.append(
            'Add some with %config AcpMagics.permission_rules = ["allow read", "allow edit *.py"] '
            "(or ACP_NOTEBOOK_PERMISSION_RULES, separated by ;)."
        )
    return Text("\n".join(lines))


async def pending(ctx: ControlContext) -> Table[PendingPermission]:
    """The permission requests waiting for an answer, each with the key ``answer`` takes."""
    from ..runtime.snapshots import PendingPermission

    columns: tuple[Column[PendingPermission], ...] = (
        Column("key", lambda request: request.key, code=True),
        Column("agent", lambda request: request.agent),
        Column("tool call", lambda request: request.title),
        Column("options", lambda request: ", ".join(request.options)),
    )
    rows = [
        PendingPermission.of(agent, name, request)
        for agent, runtime in ctx.agents.runtimes.items()
        for name, session in runtime.sessions.items()
        for request in session.permissions.pending
    ]
    return Table(rows, columns, empty="No permission request is waiting.")


def split_answer(value: str) -> tuple[str, str]:
    """``KEY=OPTION`` of ``--answer`` as (key, option)."""
    key, sep, option = value.partition("=")
    if not sep:
        raise ControlFailed('--answer takes KEY=OPTION, e.g. --answer "default/perm-1=Allow once".')
    return key, option


async def answer(ctx: ControlContext, key: str, option: str) -> Text:
    """Answer the waiting request ``key`` with the option named (or with the id)
    ``option``, as a click on its button would; what was chosen."""
    session_name, _, request_key = key.rpartition("/")
    found = []
    for agent, runtime in ctx.agents.runtimes.items():
        session = runtime.sessions.get(session_name)
        if session is None or ctx.agent not in (None, agent):
            continue
        if request_key in session.permissions.requests:
            found.append((agent, session.permissions))
    if not found:
        raise ControlFailed(f"No permission request {key}; acp.pending() lists them.")
    if len(found) > 1:
        agents = ", ".join(agent for agent, _broker in found)
        raise ControlFailed(
            f"Several agents ({agents}) have a request {key}; name the agent (-a, or agent=)."
        )
    broker = found[0][1]
    request = broker.requests[request_key]
    wanted = option.strip().lower()
    chosen = next(
        (o for o in request.options if o.option_id == option or o.name.strip().lower() == wanted),
        None,
    )
    if chosen is None:
        names = ", ".join(repr(o.name) for o in request.options)
        raise ControlFailed(f"The request {key} has no option {option!r} (it offers {names}).")
    if not broker.choose(request_key, chosen.option_id, by="user"):
        raise ControlFailed(f"The request {key} was already decided.")
    return Text(chosen.name)
