"""A prompt turn of the demo agent: the API its demonstrations are written in.

A :class:`Turn` is what a scene (:mod:`.scenes`) works with: it sends
``session/update`` notifications, starts and updates tool calls, asks for permission and
calls the client's ``fs/*`` and ``terminal/*`` methods, and remembers what a later
``session/load`` must replay. The server runs each scene inside :attr:`Turn.scope`, so
``session/cancel`` interrupts it at its next ``await`` (anyio cancellation; a request
being awaited gets a ``$/cancel_request``), and :meth:`Turn.finish` then cleans up:
unfinished tool calls are reported ``failed`` (v1 has no ``cancelled`` tool call status)
and running terminals are killed and released (spec: the agent MUST release every
terminal it creates).

Everything here is deterministic: usage numbers are computed from the characters
exchanged.
"""

from __future__ import annotations

import math
import os
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import anyio

from ...protocol import models as m
from ...protocol.errors import REQUEST_CANCELLED, ConnectionClosed, RpcError
from ...protocol.jsonrpc import Peer
from ...protocol.modelbase import AcpModel
from .content import text_content
from .history import compact
from .session import ClientCaps, DemoSession

__all__ = [
    "PERMISSION_OPTIONS",
    "Permission",
    "ToolCallHandle",
    "Turn",
    "TurnHost",
]

Wire = dict[str, Any]
PermissionKind = Literal["edit", "execute"]

#: Options of every permission request (spec: the answer is the chosen optionId; ``kind``
#: is a hint for the client's UI). Names a person understands.
PERMISSION_OPTIONS = [
    m.PermissionOption(option_id="allow-once", name="Allow once", kind="allow_once"),
    m.PermissionOption(option_id="allow-always", name="Allow always", kind="allow_always"),
    m.PermissionOption(option_id="reject-once", name="Reject", kind="reject_once"),
]


class TurnHost(Protocol):
    """What a turn needs from the server (:class:`~.server.DemoAgent`): the connection,
    what the client can do, and a way to change the session's mode."""

    peer: Peer
    caps: ClientCaps

    async def change_mode(self, session: DemoSession, mode_id: str) -> None: ...


class ToolCallHandle:
    """A tool call of the current turn; :meth:`update` sends ``tool_call_update``."""

    def __init__(self, turn: Turn, call_id: str, state: Wire) -> None:
        self.turn = turn
        self.id = call_id
        #: The merged state the client has seen (what a permission request repeats).
        self.state = state
        #: What cancelling at this point means for the user; said in the final update.
        self.cancel_note = "Cancelled before it finished."

    @property
    def finished(self) -> bool:
        return self.state.get("status") in ("completed", "failed")

    async def update(self, **fields: Any) -> None:
        update = m.ToolCallProgress(tool_call_id=self.id, **fields)
        wire = update.to_wire()
        for key, value in wire.items():
            if key != "sessionUpdate":
                self.state[key] = value
        await self.turn.send(wire, interrupts_message=True)

    async def fail(self, note: str, **fields: Any) -> None:
        """Report ``failed`` with ``note`` added to the content shown so far."""
        content = [*self.state.get("content", []), text_content(note)]
        await self.update(status="failed", content=content, **fields)


@dataclass
class Permission:
    """The user's answer to ``session/request_permission`` (or why none was needed)."""

    how: Literal["once", "always", "remembered", "rejected", "cancelled"]
    #: Why it is not allowed, as the start of a sentence (for the reply).
    why: str = "You chose Reject"

    @property
    def allowed(self) -> bool:
        return self.how in ("once", "always", "remembered")


class Turn:
    """One ``session/prompt`` being answered."""

    def __init__(self, host: TurnHost, session: DemoSession, prompt: Sequence[Any]) -> None:
        self.host = host
        self.session = session
        self.prompt = list(prompt)
        #: What the client can do, and the directory the turn works in (relative paths in
        #: the prompt are relative to it), as they were when the prompt came.
        self.caps: ClientCaps = host.caps
        self.cwd = session.cwd
        #: The server runs the scene inside it; ``session/cancel`` cancels it.
        self.scope = anyio.CancelScope()
        self.cancel_requested = False
        #: Set when the prompt has been answered (``session/close`` waits for it).
        self.done = anyio.Event()
        #: Updates to keep for ``session/load`` (compacted at the end of the turn).
        self.records: list[Wire] = []
        self.calls: dict[str, ToolCallHandle] = {}
        #: Terminals created and not yet released.
        self.terminals: list[str] = []
        #: Captured output per terminal id: replayed as text (a replayed terminal id
        #: would name nothing in the client that loads the session).
        self.terminal_outputs: dict[str, str] = {}
        self.output_chars = 0
        self._message: tuple[str, str] | None = None  # (sessionUpdate kind, messageId)

    # -- basics --------------------------------------------------------------------------

    @property
    def first_text(self) -> str:
        """The prompt's first text block: slash commands and the session title come from it."""
        return next((b.text for b in self.prompt if isinstance(b, m.TextContentBlock)), "")

    def cancel(self) -> None:
        """``session/cancel``: stop at the next ``await``; outgoing requests that are
        being awaited get a ``$/cancel_request`` (the Peer sends it)."""
        self.cancel_requested = True
        self.scope.cancel()

    async def send(
        self, update: AcpModel | Wire, *, record: bool = True, interrupts_message: bool = False
    ) -> None:
        """Send one ``session/update``; ``record`` keeps it for ``session/load``."""
        wire = update.to_wire() if isinstance(update, AcpModel) else update
        if interrupts_message:
            self._message = None  # text after a tool call starts a new message
        await self.host.peer.notify(
            "session/update", {"sessionId": self.session.id, "update": wire}
        )
        if record:
            self.records.append(wire)

    def message_id(self, kind: str) -> str:
        """The id of the current message of this kind (``agent`` or ``thought``); a new
        one after a tool call or a message of the other kind."""
        if self._message is None or self._message[0] != kind:
            self._message = (kind, self.session.new_message_id())
        return self._message[1]

    async def say(self, text: str) -> None:
        """One ``agent_message_chunk`` of Markdown (the same ``messageId`` until a tool
        call or a thought interrupts the message)."""
        self.output_chars += len(text)
        chunk = m.AgentMessageChunk(
            content=m.TextContentBlock(text=text), message_id=self.message_id("agent")
        )
        await self.send(chunk)

    async def reply(self, text: str, stop_reason: str = "end_turn") -> str:
        """Say ``text`` as the turn's last words; returns ``stop_reason`` for the scene to
        return (``return await turn.reply(...)``)."""
        await self.say(text)
        return stop_reason

    async def think(self, text: str) -> None:
        """One ``agent_thought_chunk``: reasoning, shown apart from the answer."""
        self.output_chars += len(text)
        chunk = m.AgentThoughtChunk(
            content=m.TextContentBlock(text=text), message_id=self.message_id("thought")
        )
        await self.send(chunk)

    async def plan(self, entries: Sequence[tuple[str, str, str]]) -> None:
        """A ``plan`` update: (content, priority, status) per entry; each one replaces the
        whole plan (spec)."""
        plan = m.AgentPlanUpdate(
            entries=[
                m.PlanEntry(content=content, priority=priority, status=status)
                for content, priority, status in entries
            ]
        )
        await self.send(plan)

    # -- paths ---------------------------------------------------------------------------

    def resolve(self, name: str) -> str:
        """An absolute path for a name from the prompt: relative names are relative to the
        session cwd (spec: the agent always sends absolute paths)."""
        if name.startswith("file://"):
            name = urllib.parse.unquote(urllib.parse.urlparse(name).path)
        name = os.path.expanduser(name) if name.startswith("~/") else name
        return os.path.normpath(name if os.path.isabs(name) else os.path.join(self.cwd, name))

    def display(self, path: str) -> str:
        """``path`` as the user would write it: relative when inside the cwd."""
        relative = os.path.relpath(path, self.cwd)
        return path if relative.startswith("..") else relative.replace(os.sep, "/")

    # -- tool calls ----------------------------------------------------------------------

    async def start_tool_call(
        self,
        title: str,
        kind: str,
        *,
        status: str = "pending",
        locations: Sequence[str | tuple[str, int]] = (),
        content: Sequence[Wire] | None = None,
        raw_input: Any = None,
        name: str | None = None,
    ) -> ToolCallHandle:
        """Send ``tool_call`` (``pending``: the input is known, nothing ran yet); ``name`` is
        the tool's programmatic name."""
        call_id = self.session.new_call_id()
        places = [
            m.ToolCallLocation(path=loc)
            if isinstance(loc, str)
            else m.ToolCallLocation(path=loc[0], line=loc[1])
            for loc in locations
        ]
        fields: dict[str, Any] = {"kind": kind, "status": status}
        if places:
            fields["locations"] = places
        if content is not None:
            fields["content"] = list(content)
        if raw_input is not None:
            fields["raw_input"] = raw_input
        if name is not None:
            fields["name"] = name
        start = m.ToolCallStart(tool_call_id=call_id, title=title, **fields)
        wire = start.to_wire()
        handle = ToolCallHandle(
            self, call_id, {k: v for k, v in wire.items() if k != "sessionUpdate"}
        )
        self.calls[call_id] = handle
        await self.send(wire, interrupts_message=True)
        return handle

    async def permit(
        self, call: ToolCallHandle, kind: PermissionKind, *, always: bool = True, risk: int = 0
    ) -> Permission:
        """Ask the user before an edit or a command (spec: ``session/request_permission``).

        Unless the user chose "Allow always" for this kind, at this ``risk`` or a higher
        one, earlier in this session: that choice is what ``allow_always`` means (spec), so
        it is not asked again; a riskier action is asked. Without ``always`` (a
        destructive command) "Allow always" is neither offered nor enough.
        """
        remembered = self.session.allow_always.get(kind)
        if always and remembered is not None and risk <= remembered:
            return Permission("remembered")
        options = [o for o in PERMISSION_OPTIONS if always or o.kind != "allow_always"]
        request = m.RequestPermissionRequest(
            session_id=self.session.id,
            tool_call=m.ToolCallUpdate.parse(dict(call.state)),
            options=options,
        )
        try:
            result = await self.request("session/request_permission", request)
        except RpcError as exc:
            if exc.code == REQUEST_CANCELLED:
                # spec (cancellation cascade): -32800 ends a permission request too.
                return Permission("cancelled")
            why = f"The client answered the permission request with an error ({exc.message})"
            return Permission("rejected", why)
        outcome = m.RequestPermissionResponse.parse(result).outcome
        if isinstance(outcome, m.SelectedPermissionOutcome):
            chosen = next((o for o in options if o.option_id == outcome.option_id), None)
            if chosen is None:
                why = f"The client chose `{outcome.option_id}`, an option I did not offer"
                return Permission("rejected", why)
            if chosen.kind == "allow_always":
                self.session.allow_always[kind] = max(risk, remembered or 0)
                return Permission("always")
            if chosen.kind == "allow_once":
                return Permission("once")
            return Permission("rejected")
        if isinstance(outcome, m.CancelledPermissionOutcome):
            # spec: "cancelled" means the turn was cancelled before the user answered.
            return Permission("cancelled")
        return Permission("rejected", "The client sent a permission outcome I do not know")

    # -- client methods ------------------------------------------------------------------

    async def request(self, method: str, params: Any) -> Any:
        """A request to the client. Fails with :class:`ConnectionClosed` once the client
        closed our input (nobody would answer); cancelling the turn sends a
        ``$/cancel_request`` for it."""
        return await self.host.peer.request(method, params)

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        params: dict[str, Any] = {"session_id": self.session.id, "path": path}
        if line is not None:
            params["line"] = line
        if limit is not None:
            params["limit"] = limit
        result = await self.request("fs/read_text_file", m.ReadTextFileRequest(**params))
        return m.ReadTextFileResponse.parse(result).content

    async def write_text(self, path: str, content: str) -> None:
        request = m.WriteTextFileRequest(session_id=self.session.id, path=path, content=content)
        await self.request("fs/write_text_file", request)

    async def terminal(self, method: str, terminal_id: str) -> Any:
        """``terminal/<method>`` for one of our terminals."""
        params = {"sessionId": self.session.id, "terminalId": terminal_id}
        return await self.request(f"terminal/{method}", params)

    # -- elicitation ---------------------------------------------------------------------

    async def elicit(
        self,
        message: str,
        *,
        schema: m.ElicitationSchema | None = None,
        url: str | None = None,
        elicitation_id: str | None = None,
        tool_call_id: str | None = None,
    ) -> Any:
        """``elicitation/create`` scoped to this session (and a tool call): a form when
        ``schema`` is given, else a URL. Returns the parsed ``CreateElicitationResponse``."""
        request: AcpModel
        if schema is not None:
            request = m.CreateElicitationFormRequest(
                message=message,
                requested_schema=schema,
                session_id=self.session.id,
                tool_call_id=tool_call_id,
            )
        else:
            request = m.CreateElicitationUrlRequest(
                message=message,
                url=url or "",
                elicitation_id=elicitation_id or "",
                session_id=self.session.id,
                tool_call_id=tool_call_id,
            )
        result = await self.request("elicitation/create", request)
        return m.parse(m.CreateElicitationResponse, result)

    async def complete_elicitation(self, elicitation_id: str) -> None:
        """``elicitation/complete``: the out-of-band flow of a URL elicitation is done."""
        notification = m.CompleteElicitationNotification(elicitation_id=elicitation_id)
        await self.host.peer.notify("elicitation/complete", notification)

    # -- the end of the turn -------------------------------------------------------------

    async def finish(self) -> None:
        """Clean up after the scene; the server calls it shielded, with a deadline.

        Running terminals are killed (their output kept for the replay) and released;
        tool calls left unfinished are reported ``failed`` with their cancel note.
        """
        for terminal_id in list(self.terminals):
            if self.host.peer.closed:
                break  # the client is gone: nobody would answer
            try:
                await self.terminal("kill", terminal_id)
                output = m.TerminalOutputResponse.parse(await self.terminal("output", terminal_id))
                self.terminal_outputs[terminal_id] = output.output
                await self.terminal("release", terminal_id)
            except (RpcError, ConnectionClosed):
                pass
            self.terminals.remove(terminal_id)
        for call in self.calls.values():
            if not call.finished and not self.host.peer.closed:
                try:
                    await call.fail(call.cancel_note)
                except ConnectionClosed:
                    break

    def compacted(self) -> list[Wire]:
        """This turn's records as ``session/load`` replays them: see :func:`compact`."""
        return compact(self.records, self.terminal_outputs)

    def usage_update(self) -> m.UsageUpdate:
        """Deterministic usage: 4 characters a token, prices of the session's model."""
        session, model = self.session, self.session.model_info
        used = math.ceil((session.input_chars + session.output_chars) / 4)
        # No `cost`: a pretend price would teach a wrong sense of what a turn costs.
        return m.UsageUpdate(used=min(used, model.context_window), size=model.context_window)

    def account(self, input_chars: int) -> None:
        """Add this turn's characters to the session's totals."""
        self.session.input_chars += input_chars
        self.session.output_chars += self.output_chars
