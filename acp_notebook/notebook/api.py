"""The notebook's Python API: every control of the magics, callable from code.

import acp_notebook as acp
turn = acp.ask("/read data.csv", permissions="allow")   # starts at once
await turn                                              # or turn.wait()
acp.status(); acp.cancel(); acp.restart()
"""

from __future__ import annotations

import threading

from ..client.permissions import PermissionRequest
from ..client.session import Session
from .extension import current
from .inspector import MessageTable
from .manager import TurnHandle, TurnSettings


def ask(
    prompt: str,
    *,
    agent: str | None = None,
    session: str = "default",
    permissions: str | None = None,
    timeout: float | None = None,
) -> TurnHandle:
    """Start a prompt turn without widgets; ``await`` or ``.wait()`` the handle,
    then ``handle.bundle()`` holds the transcript (Markdown and plain text)."""
    magics = current()
    settings = TurnSettings(
        prompt=prompt,
        agent=agent or magics.agent,
        session=session,
        permissions=(permissions or magics.permissions),  # type: ignore[arg-type]
        timeout=timeout if timeout is not None else magics.timeout,
        headless=True,
        wait=True,
    )
    return magics.agents.start_turn(settings)


def status() -> str:
    return "\n".join(current().agents.status_lines())


def cancel(session: str | None = None, agent: str | None = None) -> int:
    """Cancel running turns; the number cancelled."""
    return current().agents.cancel(session=session, agent=agent)


def restart(agent: str | None = None) -> str:
    magics = current()
    return magics.agents.restart(agent or magics.agent)


def stop(agent: str | None = None) -> None:
    current().agents.stop(agent)


def sessions() -> list[tuple[str, str, Session]]:
    return current().agents.sessions()


def session(name: str = "default", agent: str | None = None) -> Session | None:
    """A session object (its ``transcript``, ``permissions``, ``fs.changes`` ...)."""
    magics = current()
    runtime = magics.agents.runtimes.get(agent or magics.agent)
    return runtime.sessions.get(name) if runtime else None


def messages(
    *,
    agent: str | None = None,
    method: str | None = None,
    direction: str | None = None,
    last: int | None = None,
) -> MessageTable:
    """The JSON-RPC messages of this notebook's agents, numbered, oldest first.

    ``method`` may end with ``*`` (``"session/*"``); ``direction`` is ``send``
    (client → agent) or ``recv``. ``.step(n)`` shows one message in full,
    ``.save(path)`` writes them in the ``--trace`` JSON Lines format.
    """
    table = current().agents.message_table()
    return table.filter(agent=agent, method=method, direction=direction, last=last)


def pending() -> list[tuple[str, str, PermissionRequest]]:
    """Permission requests waiting for an answer, as (session name, key, request) —
    answer one with :func:`answer` (for frontends that cannot show the buttons)."""
    return [
        (name, request.key, request)
        for _agent, name, session in current().agents.sessions()
        for request in session.permissions.pending
    ]


def answer(key: str, option: str) -> str:
    """Answer the pending permission request ``key`` with the option named (or with the
    id) ``option``, as a click on its button would; returns what was chosen."""
    magics = current()
    found = next(
        (
            (session.permissions, session.permissions.requests[key])
            for _agent, _name, session in magics.agents.sessions()
            if key in session.permissions.requests
        ),
        None,
    )
    if found is None:
        raise ValueError(f"No permission request {key}; acp_notebook.pending() lists them.")
    broker, request = found
    wanted = option.strip().lower()
    chosen = next(
        (o for o in request.options if o.option_id == option or o.name.strip().lower() == wanted),
        None,
    )
    if chosen is None:
        names = ", ".join(repr(o.name) for o in request.options)
        raise ValueError(f"The request {key} has no option {option!r} (it offers {names}).")
    decided: list[bool] = []
    done = threading.Event()

    def choose() -> None:  # on the agent loop, like a button click
        decided.append(broker.choose(key, chosen.option_id, by="user"))
        done.set()

    magics.agents.loop.post(choose)
    done.wait(10)
    if not decided or not decided[0]:
        raise ValueError(f"The request {key} was already decided.")
    return chosen.name
