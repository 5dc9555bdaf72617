"""Logging in during a turn.

When the agent answers `auth_required`, a live cell shows the agent's own message and
one way in per auth method (``ui.auth.AuthPrompt``), and the turn goes on once the
person logged in; headless, the turn fails with the control that logs in.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio

from ...client.auth import env_methods_first, ready_env_method
from ...client.errors import AcpClientError, AuthRequired
from ...client.session import Session
from ...protocol.errors import RpcError
from ..runtime.agent import AgentFailed, AgentRuntime

if TYPE_CHECKING:
    from ...ui.auth import AuthPrompt
    from ..view.live_cell import LiveCell
    from .handle import TurnSettings

WAITING = "Waiting for you to log in"


class LoginFailed(Exception):
    """The agent needs a login that did not happen; the message is one sentence."""


@dataclass(frozen=True)
class UseMethod:
    """Log in with an auth method; ``env``: the variables it needs (the agent restarts
    with them; kept in memory only, never shown, never traced)."""

    method_id: str
    env: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Retry:
    """Try again without logging in here (the person logged in elsewhere)."""


@dataclass(frozen=True)
class Cancel:
    """Give up: the turn fails with the agent's message."""


LoginChoice = UseMethod | Retry | Cancel

# ui.auth.AuthPrompt reports its Retry button as no method and Cancel as this key.
_PROMPT_CANCEL = "__cancel__"


def _choice(method_id: str | None, env: dict[str, str]) -> LoginChoice:
    """What a click on the login prompt chose."""
    if method_id is None:
        return Retry()
    if method_id == _PROMPT_CANCEL:
        return Cancel()
    return UseMethod(method_id, env)


async def open_session(
    runtime: AgentRuntime, settings: TurnSettings, cell: LiveCell | None
) -> Session:
    """The turn's session; when the agent wants a login and someone can click, ask for
    it in the cell and try again."""
    while True:
        try:
            return await runtime.session(
                settings.session,
                policy=settings.permissions,
                interactive=cell is not None,
                tools=settings.tools,
                timeout=settings.timeout,
            )
        except AuthRequired as exc:
            if cell is None:
                raise LoginFailed(f"{exc}{login_hint(exc, runtime.env)}") from None
            if not await log_in(runtime, cell, exc):
                raise LoginFailed(str(exc)) from None


def login_hint(exc: AuthRequired, env: Mapping[str, str]) -> str:
    """How to log in from code, when no one can click: a method that reads a key before
    one the agent handles itself (which may open a browser), the one whose key is set
    first; ``env``: what the agent is given besides this process's environment."""
    ready = ready_env_method(exc.auth_methods, env)
    if ready is not None:
        return f" Log in with `%acp --login {ready.id}` (its key is set), then run the cell again."
    for method in env_methods_first(exc.auth_methods):
        if method.vars:
            names = " and ".join(f"`{var}`" for var in method.vars)
            return (
                f" Set {names} in the kernel's environment, then `%acp --login {method.id}` "
                "and run the cell again."
            )
        if method.type != "terminal":
            return f" Log in with `%acp --login {method.id}`, then run the cell again."
    return ""


async def log_in(runtime: AgentRuntime, cell: LiveCell, exc: AuthRequired) -> bool:
    """Show the agent's message and its auth methods in ``cell``; True once logged in
    (or Retry), False when the person cancels, with the panel's Cancel or the turn's
    own (the header's), which also ends a login the agent is still waiting on (codex's
    browser login waits minutes for a callback)."""
    from ...ui.auth import AuthPrompt

    sender, choices = anyio.create_memory_object_stream[LoginChoice](math.inf)
    in_flight: list[anyio.CancelScope] = []

    def choose(method_id: str | None, env: dict[str, str]) -> None:  # agent loop thread
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            sender.send_nowait(_choice(method_id, env))

    def cancel() -> None:  # the turn's Cancel, on the agent loop thread
        choose(_PROMPT_CANCEL, {})
        for scope in in_flight:
            scope.cancel()

    prompt = AuthPrompt(
        runtime.name,
        exc.said,
        exc.auth_methods,
        post=cell.post,
        choose=choose,
        command_line=runtime.spec.command_line,
    )
    cell.show_login(prompt)
    cell.view.set_status(WAITING)
    before, cell.view.on_cancel = cell.view.on_cancel, cancel
    # The page's sidebar shows the session as waiting for a login meanwhile.
    runtime.login_waiting = True
    runtime.on_change()
    try:
        async with sender, choices:
            return await _follow_choices(runtime, cell, prompt, choices, in_flight)
    finally:
        cell.view.on_cancel = before
        runtime.login_waiting = False
        runtime.on_change()


async def _follow_choices(
    runtime: AgentRuntime,
    cell: LiveCell,
    prompt: AuthPrompt,
    choices: anyio.abc.ObjectReceiveStream[LoginChoice],
    in_flight: list[anyio.CancelScope],
) -> bool:
    """Carry out the person's choices until one logs in, retries or cancels."""
    from ...ui.style import ERROR, esc

    async for choice in choices:
        if isinstance(choice, Cancel):
            prompt.close("Cancelled.")
            return False
        if isinstance(choice, Retry):
            prompt.close("Retrying…")
            return True
        with anyio.CancelScope() as scope:
            in_flight.append(scope)
            try:
                if choice.env:
                    # The agent reads its credentials at start: restart it with them.
                    runtime.env.update(choice.env)
                    await runtime.stop()
                cell.view.set_status("Logging in…")
                await runtime.authenticate(choice.method_id)
            except (RpcError, AgentFailed, AcpClientError) as error:
                # The agent's message, as text: it is untrusted and this is HTML.
                prompt.status.value = f"<span style='color: {ERROR}'>{esc(error)}</span>"
                cell.view.set_status(WAITING)
                continue
            finally:
                in_flight.remove(scope)
            prompt.close(f"Logged in with {choice.method_id}.")
            cell.view.set_status("Starting…")
            return True
        prompt.close("Cancelled.")  # the turn's Cancel ended the login it waited on
        return False
    return False
