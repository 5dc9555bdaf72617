"""The controls that act on one session: its mode and config options, its slash commands,
and the agent's saved sessions (list, load, resume, close, delete).

An agent that does not support one says so: the client checks its capabilities before
sending anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .answers import Column, Table, Text
from .base import ControlContext, ControlFailed

if TYPE_CHECKING:
    import ipywidgets as w

    from ...client.session import Session
    from ...protocol import models as m

_TRUE = ("true", "on", "yes", "1")
_FALSE = ("false", "off", "no", "0")


async def settings(ctx: ControlContext) -> Text | w.Widget:
    """The session's mode and config options: live controls where someone can click,
    else as text."""
    session = await ctx.open_session()
    if not ctx.interactive:
        return Text("\n".join(settings_lines(session)))
    from ...ui.session_panel import SessionPanel

    loop = ctx.agents.loop  # built here, on the loop: only it writes the panel's widgets
    return SessionPanel(session, submit=loop.submit, schedule_later=loop.call_later).widget


def settings_lines(session: Session) -> list[str]:
    """The session's mode and options as text (``--settings`` without widgets)."""
    from ...ui.session_panel import choices_text

    transcript = session.transcript
    lines = [
        f"Session {session.session_id}" + (f" ({transcript.title})" if transcript.title else "")
    ]
    if transcript.modes:
        lines.append(
            f"Mode: {transcript.mode_name(transcript.current_mode_id)} "
            f"(modes: {', '.join(mm.id for mm in transcript.modes)}; change with --mode ID)"
        )
    for option in transcript.known_config_options:
        lines.append(
            f"{option.name} [{option.id}]: {transcript.config_value_name(option)} "
            f"(values: {choices_text(option)}; change with --set {option.id}=VALUE)"
        )
    return lines


async def mode(ctx: ControlContext, mode_id: str) -> Text:
    """Switch the session's mode (through its `mode` config option when it has one)."""
    session = await ctx.open_session()
    transcript = session.transcript
    mode_option = next((o for o in transcript.known_config_options if o.category == "mode"), None)
    if mode_option is not None:  # spec: prefer config options when both exist
        await session.set_config_option(mode_option.id, mode_id)
        return Text(f"{mode_option.name}: {mode_id}.")
    await session.set_mode(mode_id)
    return Text(f"Mode: {transcript.mode_name(transcript.current_mode_id)}.")


def split_assignment(value: str) -> tuple[str, str]:
    """``ID=VALUE`` of ``--set`` as (id, value)."""
    key, sep, raw = value.partition("=")
    if not sep:
        raise ControlFailed("--set takes ID=VALUE, e.g. --set model=demo-large.")
    return key, raw


async def set_option(ctx: ControlContext, option_id: str, value: str | bool) -> Text:
    """Set a config option of the session (model, …); a boolean takes true or false."""
    session = await ctx.open_session()
    transcript = session.transcript
    option = _config_option(transcript.config_options, option_id)
    if option is None:
        known = ", ".join(str(getattr(o, "id", "?")) for o in transcript.config_options) or "none"
        raise ControlFailed(f"The session has no config option `{option_id}` (it has: {known}).")
    from ...protocol import models as m

    if isinstance(option, m.SessionConfigOptionBoolean) and isinstance(value, str):
        lowered = value.strip().lower()
        if lowered not in (*_TRUE, *_FALSE):
            raise ControlFailed(f"`{option_id}` is on or off; give true or false, not {value!r}.")
        value = lowered in _TRUE
    await session.set_config_option(option_id, value)
    changed = _config_option(transcript.config_options, option_id) or option
    name = getattr(changed, "name", option_id)
    return Text(f"{name}: {transcript.config_value_name(changed)}.")


def _config_option(
    options: list[m.SessionConfigOption], option_id: str
) -> m.SessionConfigOption | None:
    return next((o for o in options if getattr(o, "id", None) == option_id), None)


async def commands(ctx: ControlContext) -> Table[m.AvailableCommand]:
    """The slash commands the agent announced in the session."""
    session = ctx.existing_session()
    columns: tuple[Column[m.AvailableCommand], ...] = (
        Column("command", lambda command: f"/{command.name}", code=True),
        Column("description", lambda command: command.description),
        Column("input", _input_hint),
    )
    return Table(
        session.transcript.commands if session is not None else (),
        columns,
        empty="No commands known yet: the agent announces them once a session exists "
        "(send a prompt first).",
    )


def _input_hint(command: m.AvailableCommand) -> str:
    return str(getattr(command.input, "hint", "")) if command.input is not None else ""


async def history(ctx: ControlContext) -> Table[m.SessionInfo]:
    """The sessions the agent saved for this folder, this notebook's last one marked."""
    runtime = ctx.runtime()
    saved = await runtime.list_sessions()
    last = ctx.agents.state.last_session(runtime.key, ctx.session_name)
    last_id = last.get("sessionId") if last else None
    columns: tuple[Column[m.SessionInfo], ...] = (
        Column("session", lambda info: info.session_id, code=True),
        Column("title", lambda info: info.title),
        Column("updated", lambda info: info.updated_at),
        Column("", lambda info: "this notebook's last" if info.session_id == last_id else ""),
    )
    return Table(
        saved,
        columns,
        empty="The agent lists no saved sessions for this folder.",
        note="`%acp --load ID` replays one here; `%acp --resume ID` continues it without replay.",
    )


async def load(ctx: ControlContext, session_id: str) -> Replayed:
    """``session/load``: the session continues here, its history replayed (collapsed)."""
    return Replayed(await ctx.reopen("load", session_id))


async def resume(ctx: ControlContext, session_id: str | None = None) -> Text | Replayed:
    """``session/resume`` (no replay) of a saved session, by default this notebook's last;
    an agent that can only load loads it."""
    runtime = ctx.runtime()
    if session_id is None:
        last = ctx.agents.state.last_session(runtime.key, ctx.session_name)
        if last is None:
            raise ControlFailed(
                "This notebook has no earlier session to resume; `%acp --history` lists the agent's."
            )
        session_id = str(last["sessionId"])
    capabilities = (await runtime.ensure_started()).agent_capabilities
    if capabilities.session_capabilities.resume is None and capabilities.load_session:
        return await load(ctx, session_id)
    session = await ctx.reopen("resume", session_id)
    title = f" ({session.transcript.title})" if session.transcript.title else ""
    return Text(
        f"Resumed session {session.session_id}{title} as {ctx.session_name!r}; "
        "the next %acp continues it."
    )


async def close(ctx: ControlContext) -> Text:
    """``session/close`` of the named session."""
    return Text(await ctx.runtime().close(ctx.session_name))


async def delete(ctx: ControlContext, session_id: str) -> Text:
    """Delete one of the agent's saved sessions."""
    return Text(await ctx.runtime().delete(session_id))


class Replayed:
    """A loaded session's replayed history, collapsed, as a display bundle (made on the
    agent loop: only the text is kept)."""

    def __init__(self, session: Session) -> None:
        entries = [e for e in session.transcript.entries if e.turn is None]
        self.session_id = session.session_id
        title = session.transcript.title or session.session_id
        head = f"Loaded session `{session.session_id}` ({title}): {len(entries)} replayed entries."

        def rendered(markdown: bool) -> str:
            from ...client.render import Renderer

            renderer = Renderer(
                session.transcript, terminals=session.terminal_view, markdown=markdown
            )
            return "\n\n".join(part for part in map(renderer.entry, entries) if part)

        self.markdown = (
            f"{head}\n\n<details><summary>Replayed history</summary>\n\n"
            f"{rendered(True)}\n\n</details>\n"
        )
        self.text = f"{head.replace('`', '')}\n\n{rendered(False)}\n"

    def _repr_mimebundle_(self, **_kwargs: object) -> dict[str, str]:
        return {"text/markdown": self.markdown, "text/plain": self.text}

    def __repr__(self) -> str:
        return self.text
