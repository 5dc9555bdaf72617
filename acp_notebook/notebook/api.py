"""The notebook's Python API: every ``%acp`` control as a function, plus :func:`ask`,
:func:`messages` and :func:`session`.

    import acp_notebook as acp
    turn = acp.ask("/read data.csv", permissions="allow")   # starts at once
    await turn                                              # or turn.wait()
    acp.status(); acp.mode("code", session="review"); acp.set_option("model", "demo-large")

Each control function is derived from the control's registry entry (``controls/``):
``acp.<name>(*arguments, agent=None, session=None)`` — ``agent``/``session`` where
``-a``/``-s`` apply to it — and ``help(acp.<name>)`` says what it does.

Thread-safe: any thread may call them. A control runs on the agent loop and returns a
value that is safe to keep: a :class:`~.controls.answers.Text` (a ``str``), a
:class:`~.controls.answers.Table` of snapshots, a message table, or a widget it built there.
Failures a user can act on raise :class:`~.controls.ControlFailed` with one sentence.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import cast

from ..client.presets import DEMO
from ..lab.report import ReportCards, run_report_cards
from .controls import REGISTRY, Control, ControlFailed, run
from .controls.answers import Table
from .inspector import MessageTable
from .load.extension import current
from .runtime.snapshots import SessionSnapshot
from .turn.handle import TurnHandle, TurnSettings

__all__ = [
    "ControlFailed",
    "ask",
    "messages",
    "report",
    "session",
    *(c.name for c in REGISTRY),
]


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
        permissions=magics.policy(permissions),
        timeout=timeout if timeout is not None else magics.timeout,
        headless=True,
        wait=True,
    )
    return magics.agents.start_turn(settings)


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


def report(*agents: str, timeout: float = 60.0) -> ReportCards:
    """The report card of each agent (preset names or command lines; none: the demo agent),
    shown side by side: protocol checks run against a fresh agent in a scratch directory
    (``acp-notebook doctor --report`` in a terminal). Blocks until every card is done."""
    return run_report_cards(agents or (DEMO,), timeout=timeout)


def session(name: str = "default", agent: str | None = None) -> SessionSnapshot | None:
    """The named session as it is now (a read-only snapshot: its id, title, mode,
    options, commands, pending requests), or None when the notebook has none."""
    magics = current()
    rows = cast(
        "Table[SessionSnapshot]",
        run(REGISTRY["sessions"], magics.runner.control_context(None, None)),
    )
    wanted = agent or magics.agent
    return next((s for s in rows if s.name == name and s.agent == wanted), None)


def _function(control: Control) -> Callable[..., object]:
    """``acp.<name>()`` for ``control``: its handler's arguments, then ``agent=`` and
    ``session=`` as far as ``-a``/``-s`` apply to it."""
    handler = inspect.signature(control.handler)
    selectors = {"agent": ("agent", "session"), "session": ("session",)}
    accepted = [name for name, scopes in selectors.items() if control.scope in scopes]
    keywords = [
        inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation="str | None"
        )
        for name in accepted
    ]

    def call(
        *args: object, agent: str | None = None, session: str | None = None, **kwargs: object
    ) -> object:
        given = {"agent": agent, "session": session}
        for name in selectors:
            if given[name] is not None and name not in accepted:
                raise TypeError(f"acp.{control.name}() takes no {name}=.")
        handler.bind(None, *args, **kwargs)  # a wrong call fails here, as for any function
        ctx = current().runner.control_context(agent, session)
        return run(control, ctx, *args, **kwargs)

    call.__name__ = call.__qualname__ = control.name
    call.__doc__ = (
        f"{control.help} (`%acp {control.usage}`).\n\n{inspect.getdoc(control.handler) or ''}"
    )
    call.__signature__ = handler.replace(  # type: ignore[attr-defined]
        parameters=[*list(handler.parameters.values())[1:], *keywords]
    )
    return call


_FUNCTIONS = {control.name: _function(control) for control in REGISTRY}


def __getattr__(name: str) -> Callable[..., object]:
    try:
        return _FUNCTIONS[name]
    except KeyError:
        raise AttributeError(f"acp_notebook has no function {name!r}.") from None


def __dir__() -> list[str]:
    return sorted(__all__)
