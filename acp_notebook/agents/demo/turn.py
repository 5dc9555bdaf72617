"""Sessions and prompt turns of the demo agent: the API its demonstrations are written in.

A :class:`Turn` is what a scene (:mod:`.demo_scenes`) works with: it sends
``session/update`` notifications, starts and updates tool calls, asks for permission and
calls the client's ``fs/*`` and ``terminal/*`` methods, and remembers what a later
``session/load`` must replay. The server runs each scene inside :attr:`Turn.scope`, so
``session/cancel`` interrupts it at its next ``await`` (anyio cancellation; a request
being awaited gets a ``$/cancel_request``), and :meth:`Turn.finish` then cleans up:
unfinished tool calls are reported ``failed`` (v1 has no ``cancelled`` tool call status)
and running terminals are killed and released (spec: the agent MUST release every
terminal it creates).

Everything here is deterministic: tool call and message ids are counters of the
session, and usage numbers are computed from the characters exchanged.
"""

from __future__ import annotations

import copy
import math
import os
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio

from ..protocol import models as m
from ..protocol.errors import REQUEST_CANCELLED, ConnectionClosed, RpcError
from ..protocol.modelbase import AcpModel
from . import demo_edits as edits

if TYPE_CHECKING:
    from ..protocol.jsonrpc import Peer

__all__ = [
    "MODELS",
    "MODEL_GROUPS",
    "PERMISSION_OPTIONS",
    "ClientCaps",
    "DemoModel",
    "DemoSession",
    "Permission",
    "ToolCallHandle",
    "Turn",
    "TurnHost",
    "compact",
    "text_content",
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


@dataclass(frozen=True)
class DemoModel:
    """One value of the ``model`` config option; drives the ``usage_update`` numbers."""

    value: str
    name: str
    description: str
    group: str
    context_window: int
    usd_per_input_token: float
    usd_per_output_token: float


MODELS = [
    DemoModel("demo-small", "Demo small", "Pretend-fast model: 32k token context.", "fast",
              32_000, 0.5e-6, 1.5e-6),
    DemoModel("demo-large", "Demo large", "Pretend-capable model: 200k token context.",
              "capable", 200_000, 3e-6, 15e-6),
]  # fmt: skip
MODEL_GROUPS = {"fast": "Fast", "capable": "Capable"}


@dataclass(frozen=True)
class ClientCaps:
    """What the client advertised in ``initialize`` (spec: omitted means unsupported)."""

    read: bool = False
    write: bool = False
    terminal: bool = False
    boolean_options: bool = False
    #: ``elicitation.form`` / ``elicitation.url`` (``{}`` advertises a mode).
    elicitation_form: bool = False
    elicitation_url: bool = False


@dataclass
class DemoSession:
    """A session kept in memory (and in the state file, see :meth:`to_state`)."""

    id: str
    cwd: str
    additional_directories: list[str] = field(default_factory=list)
    title: str | None = None
    updated_at: str = ""
    #: Global activity counter at the last change: ``session/list`` orders by it.
    activity: int = 0
    mode: str = "ask"
    model: str = "demo-small"
    verbose: bool = False
    #: Kinds of action the user chose "Allow always" for in this session.
    allow_always: set[str] = field(default_factory=set)
    #: The updates ``session/load`` replays (compacted, see :func:`compact`).
    history: list[Wire] = field(default_factory=list)
    next_call: int = 1
    next_message: int = 1
    next_user_message: int = 1
    prompts: int = 0
    input_chars: int = 0
    output_chars: int = 0
    cost: float = 0.0
    # -- runtime only (not saved) --
    active: bool = False
    mcp_servers: list[str] = field(default_factory=list)
    turn: Turn | None = None

    def new_call_id(self) -> str:
        # Counted per session, never random: the same prompts give the same transcript.
        call_id = f"call-{self.next_call}"
        self.next_call += 1
        return call_id

    def new_message_id(self) -> str:
        message_id = f"msg-{self.next_message}"
        self.next_message += 1
        return message_id

    def new_user_message_id(self) -> str:
        message_id = f"user-{self.next_user_message}"
        self.next_user_message += 1
        return message_id

    @property
    def model_info(self) -> DemoModel:
        return next((x for x in MODELS if x.value == self.model), MODELS[0])

    _SAVED = (
        "id", "cwd", "additional_directories", "title", "updated_at", "activity", "mode",
        "model", "verbose", "history", "next_call", "next_message", "next_user_message",
        "prompts", "input_chars", "output_chars", "cost",
    )  # fmt: skip

    def to_state(self) -> Wire:
        state = {name: getattr(self, name) for name in self._SAVED}
        state["allow_always"] = sorted(self.allow_always)
        return state

    @classmethod
    def from_state(cls, state: Wire) -> DemoSession:
        known = {name: state[name] for name in cls._SAVED if name in state}
        session = cls(**known)
        session.allow_always = set(state.get("allow_always") or [])
        return session


class TurnHost(Protocol):
    """What a turn needs from the server (:class:`~.demo.DemoAgent`)."""

    @property
    def peer(self) -> Peer: ...

    @property
    def caps(self) -> ClientCaps: ...

    @property
    def input_closed(self) -> bool: ...

    async def request(self, method: str, params: Any) -> Any: ...

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


def text_content(text: str) -> Wire:
    """A tool call ``content`` item holding Markdown text."""
    return m.ContentToolCallContent(content=m.TextContentBlock(text=text)).to_wire()


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
    def caps(self) -> ClientCaps:
        return self.host.caps

    @property
    def cwd(self) -> str:
        return self.session.cwd

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
    ) -> ToolCallHandle:
        """Send ``tool_call`` (``pending``: the input is known, nothing ran yet)."""
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
        start = m.ToolCallStart(tool_call_id=call_id, title=title, **fields)
        wire = start.to_wire()
        handle = ToolCallHandle(
            self, call_id, {k: v for k, v in wire.items() if k != "sessionUpdate"}
        )
        self.calls[call_id] = handle
        await self.send(wire, interrupts_message=True)
        return handle

    async def permit(self, call: ToolCallHandle, kind: PermissionKind) -> Permission:
        """Ask the user before an edit or a command (spec: ``session/request_permission``).

        Ask mode asks every time. Code mode asks too, unless the user chose "Allow always"
        for this kind earlier in this session; that choice is what ``allow_always`` means.
        """
        if self.session.mode == "code" and kind in self.session.allow_always:
            return Permission("remembered")
        request = m.RequestPermissionRequest(
            session_id=self.session.id,
            tool_call=m.ToolCallUpdate.parse(dict(call.state)),
            options=PERMISSION_OPTIONS,
        )
        try:
            result = await self.host.request("session/request_permission", request)
        except RpcError as exc:
            if exc.code == REQUEST_CANCELLED:
                # spec (cancellation cascade): -32800 ends a permission request too.
                return Permission("cancelled")
            why = f"The client answered the permission request with an error ({exc.message})"
            return Permission("rejected", why)
        outcome = m.RequestPermissionResponse.parse(result).outcome
        if isinstance(outcome, m.SelectedPermissionOutcome):
            chosen = next((o for o in PERMISSION_OPTIONS if o.option_id == outcome.option_id), None)
            if chosen is None:
                why = f"The client chose `{outcome.option_id}`, an option I did not offer"
                return Permission("rejected", why)
            if chosen.kind == "allow_always":
                self.session.allow_always.add(kind)
                return Permission("always")
            if chosen.kind == "allow_once":
                return Permission("once")
            return Permission("rejected")
        if isinstance(outcome, m.CancelledPermissionOutcome):
            # spec: "cancelled" means the turn was cancelled before the user answered.
            return Permission("cancelled")
        return Permission("rejected", "The client sent a permission outcome I do not know")

    # -- client methods ------------------------------------------------------------------

    async def read_text(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        params: dict[str, Any] = {"session_id": self.session.id, "path": path}
        if line is not None:
            params["line"] = line
        if limit is not None:
            params["limit"] = limit
        result = await self.host.request("fs/read_text_file", m.ReadTextFileRequest(**params))
        return m.ReadTextFileResponse.parse(result).content

    async def write_text(self, path: str, content: str) -> None:
        request = m.WriteTextFileRequest(session_id=self.session.id, path=path, content=content)
        await self.host.request("fs/write_text_file", request)

    async def terminal(self, method: str, terminal_id: str) -> Any:
        """``terminal/<method>`` for one of our terminals."""
        params = {"sessionId": self.session.id, "terminalId": terminal_id}
        return await self.host.request(f"terminal/{method}", params)

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
        result = await self.host.request("elicitation/create", request)
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
            if self.host.input_closed:
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
            if not call.finished and not self.host.input_closed:
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
        return m.UsageUpdate(
            used=min(used, model.context_window),
            size=model.context_window,
            cost=m.Cost(amount=round(session.cost, 6), currency="USD"),
        )

    def account(self, input_chars: int) -> None:
        """Add this turn's characters and their price to the session's totals."""
        session, model = self.session, self.session.model_info
        session.input_chars += input_chars
        session.output_chars += self.output_chars
        session.cost += (
            math.ceil(input_chars / 4) * model.usd_per_input_token
            + math.ceil(self.output_chars / 4) * model.usd_per_output_token
        )


def compact(records: Sequence[Wire], terminal_outputs: dict[str, str] | None = None) -> list[Wire]:
    """The updates of a turn as ``session/load`` replays them.

    Consecutive text chunks of one message become one chunk, each tool call becomes one
    ``tool_call`` in its final state (embedded terminals replaced by their captured
    output), and only the last plan of the turn is kept. Mode, config, usage and title
    updates are not history.
    """
    outputs = terminal_outputs or {}
    out: list[Wire] = []
    texts: dict[int, list[str]] = {}  # index in out -> text pieces of a merged chunk
    calls: dict[str, Wire] = {}
    plan: Wire | None = None
    open_text: int | None = None  # index of the text chunk the next one may extend
    for record in records:
        kind = record.get("sessionUpdate")
        if kind == "plan":
            # Plans live beside the conversation: a message interleaved with plan updates
            # (like /plan's) is still one message.
            if plan is None:
                plan = copy.deepcopy(record)
                out.append(plan)
            else:
                plan["entries"] = copy.deepcopy(record["entries"])
            continue
        content = record.get("content") or {}
        is_text = (
            kind in ("agent_message_chunk", "agent_thought_chunk") and content.get("type") == "text"
        )
        if (
            is_text
            and open_text is not None
            and out[open_text]["sessionUpdate"] == kind
            and out[open_text].get("messageId") == record.get("messageId")
        ):
            texts[open_text].append(content["text"])
            continue
        open_text = None
        if kind in ("agent_message_chunk", "agent_thought_chunk", "user_message_chunk"):
            out.append(copy.deepcopy(record))
            if is_text:
                open_text = len(out) - 1
                texts[open_text] = [content["text"]]
        elif kind == "tool_call":
            call = copy.deepcopy(record)
            calls[call["toolCallId"]] = call
            out.append(call)
        elif kind == "tool_call_update":
            target = calls.get(record["toolCallId"])
            if target is None:  # an update of a call we never started: keep it as a call
                target = calls[record["toolCallId"]] = {
                    "sessionUpdate": "tool_call",
                    "title": "Tool call",
                }
                out.append(target)
            for key, value in record.items():
                # spec: present non-null fields replace, absent or null ones stay unchanged
                if key != "sessionUpdate" and value is not None:
                    target[key] = copy.deepcopy(value)
    for index, pieces in texts.items():
        out[index]["content"]["text"] = "".join(pieces)
    for call in calls.values():
        content = call.get("content")
        if content:
            call["content"] = [
                text_content(edits.fence(outputs.get(item["terminalId"]) or "(no output)"))
                if item.get("type") == "terminal"
                else item
                for item in content
            ]
    return out
