"""The acp_notebook demo agent: an ACP agent on stdio that demonstrates the protocol.

It is not a fake AI. It never pretends to understand a prompt: it shows what a real agent
would send and why, and it really reads, writes and runs things through the client
(``fs/*``, ``terminal/*``), always after asking where a real agent would ask. Everything
it sends is deterministic (counters instead of random ids, no timestamps in message
text), so the same prompts give the same transcript.

Run it with ``python -m acp_notebook.agents.demo`` (or ``acp-notebook demo-agent``), or in
the same process with :func:`serve` over any pair of byte streams. This module is the
server (sessions, state, one handler per ACP method, stdio); :mod:`.demo_scenes` holds
the demonstrations, :mod:`.demo_turn` the turn API they are written in, and
:mod:`.demo_edits` the deterministic text helpers.

Slash commands (ACP slash commands are plain prompt text; the list is sent as an
``available_commands_update`` after ``session/new``, ``session/load`` and
``session/resume``):

``/help``
    Lists the commands.
``/read PATH [LINE [LIMIT]]``
    A ``read`` tool call (``pending`` → ``in_progress`` → ``completed``, with
    ``locations``): ``fs/read_text_file`` with a ``line``/``limit`` window (default the
    first 20 lines), then further windows of 500 lines to count the file's lines, the way
    agents page through big files. The tool call's content shows the lines read.
``/edit PATH``
    Reads the file, proposes a change as ``diff`` content (full old and new text), asks
    with ``session/request_permission`` (Allow once / Allow always / Reject) and writes
    with ``fs/write_text_file`` only when allowed; the tool call ends ``completed``, or
    ``failed`` when rejected or cancelled (the file is then unchanged). The change is
    mechanical: placeholder docstrings and ``Any`` type hints for Python functions that
    lack them (found with ``ast``; every other byte kept), one clearly labelled comment
    line for other text files; JSON, notebooks and CSV are refused (an extra line would
    break them).
``/write PATH TEXT``
    The same flow, creating or overwriting PATH with TEXT (everything after PATH, newlines
    included, plus a final newline; quote a PATH with spaces). A new file's diff has
    ``oldText: null``.
``/run COMMAND``
    An ``execute`` tool call: permission, then ``terminal/create`` (``sh -c COMMAND`` in
    the session cwd, 64 KiB output limit), the terminal embedded in the tool call while
    it runs, ``terminal/wait_for_exit``, ``terminal/output``, ``terminal/release``;
    ``completed`` or ``failed`` by exit code.
``/plan``
    A five-step ``plan`` whose entries go ``pending`` → ``in_progress`` → ``completed``
    (each update carries the whole plan), interleaved with message chunks.
``/think``
    ``agent_thought_chunk`` updates, then the answer as a new message.
``/slow``
    Streams one word every 0.1 s for five seconds; ``session/cancel`` stops it at once and
    the prompt is answered with ``stopReason: "cancelled"``.
``/refuse``
    Ends the turn with ``stopReason: "refusal"``.
``/long [N]``
    N message chunks (default 3,000, about 120 KB of Markdown: headings, lists, code
    blocks) as fast as possible, for streaming tests.
``/image``
    An ``image`` content block (a 64×64 PNG generated with zlib and struct).
``/usage``
    Explains the ``usage_update`` that ends every turn (4 characters a token, the prices
    of the selected model, cost in USD).
``/mode ask|code``
    The agent switches the session mode itself (``current_mode_update``).
``/title TEXT``
    Renames the session (``session_info_update``); the first prompt of a session names it.
``/fail``
    A tool call that ends ``failed``.
``/ask``
    A form ``elicitation/create`` (name: required text; age: whole number 0–150;
    language: one of Python, Rust, Julia, Other; newsletter: yes/no, default no; topics:
    any of four), then says what came back: the values (``accept``), ``decline`` or
    ``cancel``. Only when the client advertised ``elicitation.form``.
``/ask-url``
    A URL ``elicitation/create`` inside a tool call (a pretend device sign-in at
    ``https://example.com/device?code=DEMO-1234``); once the user accepted (consented to
    open it), ``elicitation/complete`` and the tool call completes. Only when the client
    advertised ``elicitation.url``. The agent never opens or fetches the URL.
``/unknown``
    Sends a ``session/update`` type and a content block type that no client knows, to
    show that clients must tolerate them (these two messages are outside the schema).
``/error``
    Answers the prompt with a JSON-RPC error instead of a stop reason.
``/stop REASON``
    Ends the turn with the given stop reason.

Any other prompt gets a description of the content blocks received (text with its length,
resource links, embedded resources with size and MIME type, images). A refactoring
request (``refactor utils.py``, or "refactor this" with attached Python code) goes the
``/edit`` way with the mechanical Python change; attached code without a file gets the
proposal in the reply instead (the agent never writes a file the user did not name).

Sessions: ``session/new`` answers with modes ``ask`` (asks before every edit and command)
and ``code`` (asks too, unless the user chose "Allow always" for that kind earlier in the
session), and config options ``mode``, ``model`` (a grouped select: ``demo-small``,
``demo-large``) and the boolean ``verbose`` (adds protocol notes to replies; only offered
to clients that advertise ``session.configOptions.boolean``). ``session/load`` replays
the history before answering; ``session/list`` (``cwd`` filter, opaque cursor),
``session/resume``, ``session/close`` (cancels running work) and ``session/delete`` are
supported. The agent never touches the disk itself, except its own ``--state-file``.

Paths in prompts may be relative to the session cwd; the agent always sends absolute
paths. A capability the client did not advertise (``fs.readTextFile``,
``fs.writeTextFile``, ``terminal``) is never used: the reply says so and skips the step.
Each turn ends with a ``usage_update``; the first prompt of a session sends a
``session_info_update`` with a title taken from the prompt. ``session/cancel`` stops any
demonstration at its next step: a pending ``session/request_permission`` or other request
to the client is withdrawn with ``$/cancel_request``, unfinished tool calls end
``failed``, a running terminal is killed and released, and the prompt is answered
``cancelled``.

Options: ``--require-auth`` (or ``ACP_DEMO_REQUIRE_AUTH=1``): ``session/new``, ``load``
and ``resume`` answer ``-32000`` until ``authenticate`` with ``demo-login`` (which needs no
credentials). ``--state-file PATH`` (or ``ACP_DEMO_STATE_FILE``): keep sessions in a JSON
file (written atomically) so that a later process can list and load them.
``--page-size N``: ``session/list`` page size (default 50). ``--log-level LEVEL``: what
to log to stderr (default ``WARNING``); nothing but protocol messages ever goes to stdout.
When stdin ends the agent still answers the requests it received (within ten seconds),
then exits with code 0.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import binascii
import contextlib
import json
import logging
import os
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from pydantic import ValidationError

from .. import __version__
from ..protocol import models as m
from ..protocol.errors import (
    AUTH_REQUIRED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    ConnectionClosed,
    RpcError,
)
from ..protocol.jsonrpc import Peer, TraceEvent
from ..protocol.modelbase import AcpModel
from . import demo_edits as edits
from .demo_scenes import available_commands, prompt_chars, run_prompt
from .demo_turn import MODEL_GROUPS, MODELS, ClientCaps, DemoSession, Turn

__all__ = ["DemoAgent", "DemoOptions", "main", "serve"]

log = logging.getLogger("acp_notebook.agents.demo")

PROTOCOL_VERSION = 1
AGENT_INFO = m.Implementation(
    name="acp-notebook-demo", title="acp_notebook demo agent", version=__version__
)
AUTH_METHOD = m.AuthMethodAgent(
    id="demo-login",
    name="Demo login",
    description="Logs in to the demo agent at once; it needs no credentials.",
)
MODES = [
    m.SessionMode(id="ask", name="Ask", description="Ask before every edit and command."),
    m.SessionMode(
        id="code",
        name="Code",
        description="Edits and commands ask too, unless you chose “Allow always” for that "
        "kind earlier in this session.",
    ),
]
DEFAULT_PAGE_SIZE = 50
#: How long the shielded clean-up after a turn (kill/release terminals, close tool calls)
#: may take before it is abandoned.
CLEANUP_SECONDS = 5.0
#: Longest wait for a reply to be written before its follow-up update is sent anyway.
FOLLOW_UP_WAIT = 5.0
#: When stdin ends, how long the agent may take to answer what it already received.
DRAIN_SECONDS = 10.0
STATE_VERSION = 1


@dataclass(frozen=True)
class DemoOptions:
    """How the demo agent behaves (see the module docstring for the command line)."""

    require_auth: bool = False
    state_file: Path | None = None
    page_size: int = DEFAULT_PAGE_SIZE


def _now() -> str:
    # ISO 8601 for updatedAt; never part of message text (transcripts stay deterministic).
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Reply(dict[str, Any]):
    """A result that knows when the Peer wrote it: updates that must follow the answer
    (``available_commands_update`` after ``session/new``, ``current_mode_update`` after
    ``session/set_mode``) wait for :attr:`sent`."""

    def __init__(self, data: dict[str, Any]) -> None:
        super().__init__(data)
        self.sent = anyio.Event()


class _EofWatch(anyio.abc.ByteReceiveStream):
    """A receive stream that remembers that it ended, and lets the agent finish its
    answers before the Peer learns about the end (the Peer then cancels every handler
    still running)."""

    def __init__(
        self, inner: anyio.abc.ByteReceiveStream, on_end: Callable[[], Awaitable[None]]
    ) -> None:
        self.inner = inner
        self.ended = False
        self._on_end = on_end

    async def receive(self, max_bytes: int = 65536) -> bytes:
        try:
            return await self.inner.receive(max_bytes)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            if not self.ended:
                self.ended = True
                await self._on_end()
            raise

    async def aclose(self) -> None:
        await self.inner.aclose()


class DemoAgent:
    """The agent side of one connection: sessions, and a handler per ACP method."""

    def __init__(
        self,
        receive: anyio.abc.ByteReceiveStream,
        send: anyio.abc.ByteSendStream,
        options: DemoOptions | None = None,
    ) -> None:
        self.options = options or DemoOptions()
        self._input = _EofWatch(receive, self._drain)
        self._output = _CountingSend(send)
        self._peer = Peer(self._input, self._output, name="demo-agent")
        self._peer.add_observer(self._observe)
        # For _drain: requests received and not answered yet, follow-ups not done yet,
        # messages the Peer started to write.
        self._unanswered = 0
        self._follow_ups = 0
        self._emitted = 0
        self._request_scopes: set[anyio.CancelScope] = set()
        self._caps = ClientCaps()
        self.authenticated = False
        self.sessions: dict[str, DemoSession] = {}
        self._next_session = 1
        self._activity = 0
        self._save_lock = anyio.Lock()
        self._tasks: anyio.abc.TaskGroup | None = None
        self._load_state()
        handlers: dict[str, Callable[[Any], Awaitable[Any]]] = {
            "initialize": self._initialize,
            "authenticate": self._authenticate,
            "logout": self._logout,
            "session/new": self._new_session,
            "session/load": self._load_session,
            "session/resume": self._resume_session,
            "session/list": self._list_sessions,
            "session/close": self._close_session,
            "session/delete": self._delete_session,
            "session/set_mode": self._set_mode,
            "session/set_config_option": self._set_config_option,
            "session/prompt": self._prompt,
        }
        for method, handler in handlers.items():
            self._peer.handle_request(method, handler)
        self._peer.handle_notification("session/cancel", self._cancel)

    # -- what turns use (TurnHost) ---------------------------------------------------------

    @property
    def peer(self) -> Peer:
        return self._peer

    @property
    def caps(self) -> ClientCaps:
        return self._caps

    @property
    def input_closed(self) -> bool:
        return self._input.ended

    async def request(self, method: str, params: Any) -> Any:
        """A request to the client; fails at once with :class:`ConnectionClosed` when the
        client has closed our input (nobody would answer)."""
        if self.input_closed:
            raise ConnectionClosed(f"the client closed the connection before {method}")
        with anyio.CancelScope() as scope:
            self._request_scopes.add(scope)
            try:
                return await self._peer.request(method, params)
            finally:
                self._request_scopes.discard(scope)
        raise ConnectionClosed(f"the client closed the connection during {method}")

    async def change_mode(self, session: DemoSession, mode_id: str) -> None:
        """The agent changes the mode itself (``/mode``): tell the client at once."""
        session.mode = mode_id
        await self._send_mode_updates(session)
        await self._save()

    # -- running -------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve until the client closes the connection (our input ends)."""
        async with anyio.create_task_group() as tasks:
            self._tasks = tasks
            try:
                await self._peer.run()
            finally:
                tasks.cancel_scope.cancel()
                self._tasks = None
                # Like a process whose stdout closes when it exits: the client sees the end.
                await self._peer.aclose()

    async def _drain(self) -> None:
        """stdin ended: answer what was already received (requests to the client now fail
        at once), within :data:`DRAIN_SECONDS`, before the Peer stops everything."""
        for scope in list(self._request_scopes):
            scope.cancel()
        with anyio.move_on_after(DRAIN_SECONDS):
            # Counted from the messages themselves (handler tasks may not have started
            # yet): every request answered, every follow-up sent, every message written.
            while self._unanswered > 0 or self._follow_ups or self._output.sent < self._emitted:
                await anyio.sleep(0.01)

    def _observe(self, event: TraceEvent) -> None:
        message = event.message
        if message is None:
            return
        is_request, is_response = "method" in message and "id" in message, "method" not in message
        if event.direction == "recv" and is_request:
            self._unanswered += 1
        elif event.direction == "send":
            self._emitted += 1
            if is_response:
                self._unanswered -= 1
                if isinstance(message.get("result"), _Reply):
                    message["result"].sent.set()

    def _after_reply(self, reply: _Reply, action: Callable[[], Awaitable[None]]) -> None:
        """Run ``action`` once ``reply`` has been written (the Peer writes it after the
        handler returns; its send lock keeps later messages behind it)."""

        async def follow_up() -> None:
            try:
                with anyio.move_on_after(FOLLOW_UP_WAIT):
                    await reply.sent.wait()
                with contextlib.suppress(ConnectionClosed):
                    await action()
            finally:
                self._follow_ups -= 1

        if self._tasks is not None:
            self._follow_ups += 1
            self._tasks.start_soon(follow_up)

    async def _update(self, session_id: str, update: AcpModel | dict[str, Any]) -> None:
        wire = update.to_wire() if isinstance(update, AcpModel) else update
        await self._peer.notify("session/update", {"sessionId": session_id, "update": wire})

    # -- state ---------------------------------------------------------------------------

    def _load_state(self) -> None:
        path = self.options.state_file
        if path is None or not path.exists():
            return
        try:
            state = json.loads(path.read_text(encoding="utf-8"))
            sessions = [DemoSession.from_state(item) for item in state.get("sessions", [])]
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            log.warning("ignoring the unreadable state file %s: %s", path, exc)
            return
        self.sessions = {session.id: session for session in sessions}
        self._next_session = int(state.get("nextSession", 1))
        self._activity = max([int(state.get("activity", 0))] + [s.activity for s in sessions])
        log.info("loaded %d sessions from %s", len(sessions), path)

    async def _save(self) -> None:
        path = self.options.state_file
        if path is None:
            return
        async with self._save_lock:  # one writer at a time: the newest snapshot wins
            data = json.dumps(
                {
                    "version": STATE_VERSION,
                    "nextSession": self._next_session,
                    "activity": self._activity,
                    "sessions": [s.to_state() for s in self.sessions.values()],
                },
                ensure_ascii=False,
            )
            try:
                await anyio.to_thread.run_sync(_write_atomically, path, data)
            except OSError as exc:
                log.warning("could not save the state file %s: %s", path, exc)

    def _touch(self, session: DemoSession) -> None:
        self._activity += 1
        session.activity = self._activity
        session.updated_at = _now()

    # -- sessions ------------------------------------------------------------------------

    def _known(self, session_id: str) -> DemoSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RpcError(
                INVALID_PARAMS, f"Unknown session {session_id!r}.", {"sessionId": session_id}
            )
        return session

    def _active(self, session_id: str) -> DemoSession:
        session = self._known(session_id)
        if not session.active:
            raise RpcError(
                INVALID_PARAMS,
                f"Session {session_id!r} is not open in this connection: load or resume it first.",
                {"sessionId": session_id},
            )
        return session

    def _require_auth(self) -> None:
        if self.options.require_auth and not self.authenticated:
            # spec: -32000 auth_required; the message is shown to the user verbatim.
            raise RpcError(
                AUTH_REQUIRED,
                "Authentication required: log in with the “Demo login” method "
                "(authenticate with methodId demo-login; it needs no credentials).",
                {"authMethods": [AUTH_METHOD.to_wire()]},
            )

    def _modes(self, session: DemoSession) -> m.SessionModeState:
        return m.SessionModeState(current_mode_id=session.mode, available_modes=MODES)

    def _config_options(self, session: DemoSession) -> list[AcpModel]:
        """The complete config state (spec: every answer and update carries all of it)."""
        options: list[AcpModel] = [
            m.SessionConfigOptionSelect(
                id="mode",
                name="Mode",
                description="When the agent asks before edits and commands.",
                category="mode",
                current_value=session.mode,
                options=[
                    m.SessionConfigSelectOption(
                        value=mode.id, name=mode.name, description=mode.description
                    )
                    for mode in MODES
                ],
            ),
            m.SessionConfigOptionSelect(
                id="model",
                name="Model",
                description="Pretend models: they change the usage numbers, nothing else.",
                category="model",
                current_value=session.model,
                options=[
                    m.SessionConfigSelectGroup(
                        group=group,
                        name=label,
                        options=[
                            m.SessionConfigSelectOption(
                                value=x.value, name=x.name, description=x.description
                            )
                            for x in MODELS
                            if x.group == group
                        ],
                    )
                    for group, label in MODEL_GROUPS.items()
                ],
            ),
        ]
        if self._caps.boolean_options:
            # spec: boolean options only for clients that advertised them.
            options.append(
                m.SessionConfigOptionBoolean(
                    id="verbose",
                    name="Protocol notes",
                    description="End each reply with a note naming the ACP messages it used.",
                    category="_demo",
                    current_value=session.verbose,
                )
            )
        return options

    def _session_state(self, session: DemoSession) -> dict[str, Any]:
        return {
            "modes": self._modes(session).to_wire(),
            "configOptions": [option.to_wire() for option in self._config_options(session)],
        }

    def _open(self, session: DemoSession, cwd: str, directories: Sequence[str] | None) -> None:
        session.cwd = _absolute(cwd, "cwd")
        if directories is not None:
            # spec: the list sent on load/resume is the complete new list.
            session.additional_directories = [
                _absolute(d, "additionalDirectories") for d in directories
            ]
        session.active = True

    def _announce_commands(self, reply: _Reply, session_id: str) -> None:
        # Real agents send the command list right after the answer that opened the session.
        self._after_reply(reply, lambda: self._update(session_id, available_commands()))

    async def _send_mode_updates(self, session: DemoSession) -> None:
        await self._update(session.id, m.CurrentModeUpdate(current_mode_id=session.mode))
        await self._send_config_update(session)

    async def _send_config_update(self, session: DemoSession) -> None:
        await self._update(
            session.id, m.ConfigOptionUpdate(config_options=self._config_options(session))
        )

    # -- handlers: connection ------------------------------------------------------------

    async def _initialize(self, params: Any) -> Any:
        request = m.InitializeRequest.parse(params)
        caps = request.client_capabilities
        session_caps = caps.session
        self._caps = ClientCaps(
            read=caps.fs.read_text_file,
            write=caps.fs.write_text_file,
            terminal=caps.terminal,
            boolean_options=bool(
                session_caps is not None
                and session_caps.config_options is not None
                and session_caps.config_options.boolean is not None
            ),
            # spec: `{}` advertises a mode; omitted, null or an empty elicitation object none.
            elicitation_form=caps.elicitation is not None and caps.elicitation.form is not None,
            elicitation_url=caps.elicitation is not None and caps.elicitation.url is not None,
        )
        if request.protocol_version != PROTOCOL_VERSION:
            # spec: answer with our latest version; the client decides whether to go on.
            log.info("client asked for protocol %s; answering %s", request.protocol_version, 1)
        return m.InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=m.AgentCapabilities(
                load_session=True,
                prompt_capabilities=m.PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=m.McpCapabilities(http=False, sse=False),
                session_capabilities=m.SessionCapabilities(
                    list=m.SessionListCapabilities(),
                    resume=m.SessionResumeCapabilities(),
                    close=m.SessionCloseCapabilities(),
                    delete=m.SessionDeleteCapabilities(),
                    additional_directories=m.SessionAdditionalDirectoriesCapabilities(),
                ),
                auth=m.AgentAuthCapabilities(logout=m.LogoutCapabilities()),
            ),
            auth_methods=[AUTH_METHOD],
            agent_info=AGENT_INFO,
        )

    async def _authenticate(self, params: Any) -> Any:
        request = m.AuthenticateRequest.parse(params)
        if request.method_id != AUTH_METHOD.id:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown authentication method {request.method_id!r}: this agent offers "
                f"{AUTH_METHOD.id!r}.",
                {"authMethods": [AUTH_METHOD.to_wire()]},
            )
        self.authenticated = True
        return {}

    async def _logout(self, params: Any) -> Any:
        self.authenticated = False
        return {}

    # -- handlers: sessions --------------------------------------------------------------

    async def _new_session(self, params: Any) -> Any:
        self._require_auth()
        request = m.NewSessionRequest.parse(params)
        session_id = f"demo-session-{self._next_session}"
        while session_id in self.sessions:  # a state file edited by hand
            self._next_session += 1
            session_id = f"demo-session-{self._next_session}"
        session = DemoSession(id=session_id, cwd="/")
        self._open(session, request.cwd, request.additional_directories)
        self._next_session += 1
        session.mcp_servers = [_server_name(server) for server in request.mcp_servers]
        self.sessions[session_id] = session
        self._touch(session)
        await self._save()
        reply = _Reply({"sessionId": session_id, **self._session_state(session)})
        self._announce_commands(reply, session_id)
        return reply

    async def _load_session(self, params: Any) -> Any:
        self._require_auth()
        request = m.LoadSessionRequest.parse(params)
        session = self._known(request.session_id)
        if session.turn is not None:
            raise RpcError(INVALID_REQUEST, "The session is answering a prompt; cancel it first.")
        self._open(session, request.cwd, request.additional_directories)
        session.mcp_servers = [_server_name(server) for server in request.mcp_servers]
        # spec: the whole history is replayed as session/update before the answer.
        if session.title:
            await self._update(
                session.id, m.SessionInfoUpdate(title=session.title, updated_at=session.updated_at)
            )
        for update in session.history:
            await self._update(session.id, update)
        reply = _Reply(self._session_state(session))
        self._announce_commands(reply, session.id)
        return reply

    async def _resume_session(self, params: Any) -> Any:
        self._require_auth()
        request = m.ResumeSessionRequest.parse(params)
        session = self._known(request.session_id)
        self._open(session, request.cwd, request.additional_directories)
        if request.mcp_servers is not None:
            session.mcp_servers = [_server_name(server) for server in request.mcp_servers]
        reply = _Reply(self._session_state(session))  # spec: no replay
        self._announce_commands(reply, session.id)
        return reply

    async def _list_sessions(self, params: Any) -> Any:
        request = m.ListSessionsRequest.parse(params if params is not None else {})
        sessions = list(self.sessions.values())
        if request.cwd is not None:
            wanted = os.path.normpath(request.cwd)
            sessions = [s for s in sessions if os.path.normpath(s.cwd) == wanted]
        sessions.sort(key=_list_key)
        if request.cursor is not None:
            after = _decode_cursor(request.cursor)
            sessions = [s for s in sessions if _list_key(s) > after]
        page = sessions[: self.options.page_size]
        result: dict[str, Any] = {
            "sessions": [
                m.SessionInfo(
                    session_id=s.id,
                    cwd=s.cwd,
                    additional_directories=s.additional_directories or None,
                    title=s.title,
                    updated_at=s.updated_at or None,
                ).to_wire()
                for s in page
            ]
        }
        if len(sessions) > len(page):
            result["nextCursor"] = _encode_cursor(_list_key(page[-1]))
        return result

    async def _close_session(self, params: Any) -> Any:
        request = m.CloseSessionRequest.parse(params)
        session = self._known(request.session_id)
        await self._stop_turn(session)  # spec: as if session/cancel had been sent
        session.active = False
        return {}

    async def _delete_session(self, params: Any) -> Any:
        request = m.DeleteSessionRequest.parse(params)
        session = self.sessions.get(request.session_id)
        if session is not None:  # spec: deleting an unknown session succeeds
            await self._stop_turn(session)
            self.sessions.pop(session.id, None)
            await self._save()
        return {}

    async def _stop_turn(self, session: DemoSession) -> None:
        turn = session.turn
        if turn is not None:
            turn.cancel()
            # Answer after the prompt's own answer (stopReason cancelled) went out.
            with anyio.move_on_after(CLEANUP_SECONDS + 1):
                await turn.done.wait()

    async def _set_mode(self, params: Any) -> Any:
        request = m.SetSessionModeRequest.parse(params)
        session = self._active(request.session_id)
        if request.mode_id not in {mode.id for mode in MODES}:
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown mode {request.mode_id!r}: the modes are ask and code.",
                {"modeId": request.mode_id},
            )
        session.mode = request.mode_id
        await self._save()
        reply = _Reply({})
        # The mode is also a config option, so both updates follow the answer.
        self._after_reply(reply, lambda: self._send_mode_updates(session))
        return reply

    async def _set_config_option(self, params: Any) -> Any:
        request = m.parse(m.SetSessionConfigOptionRequest, params)
        if isinstance(request, m.UnknownSetSessionConfigOptionRequest):
            raise RpcError(
                INVALID_PARAMS,
                f"Unknown config value type {request.type!r}.",
                {"type": request.type},
            )
        session = self._active(request.session_id)
        config_id, value = request.config_id, request.value
        is_boolean = isinstance(request, m.SetSessionConfigOptionBooleanRequest)
        mode_changed = False
        if config_id == "mode" and not is_boolean and value in {mode.id for mode in MODES}:
            mode_changed = session.mode != value
            session.mode = str(value)
        elif config_id == "model" and not is_boolean and value in {x.value for x in MODELS}:
            session.model = str(value)
        elif config_id == "verbose" and is_boolean and self._caps.boolean_options:
            session.verbose = bool(value)
        else:
            offered = {option.to_wire()["id"] for option in self._config_options(session)}
            problem = (
                "is not one of this session's options"
                if config_id not in offered
                else (f"does not accept {json.dumps(value)}")
            )
            raise RpcError(
                INVALID_PARAMS,
                f"The config option {config_id!r} {problem}.",
                {"configId": config_id, "value": value},
            )
        await self._save()
        reply = _Reply({"configOptions": self._session_state(session)["configOptions"]})

        async def updates() -> None:
            if mode_changed:
                await self._update(session.id, m.CurrentModeUpdate(current_mode_id=session.mode))
            await self._send_config_update(session)

        self._after_reply(reply, updates)
        return reply

    # -- handlers: prompts ---------------------------------------------------------------

    async def _prompt(self, params: Any) -> Any:
        request = m.PromptRequest.parse(params)
        session = self._active(request.session_id)
        if session.turn is not None:
            # v1 defines no queueing: one prompt at a time per session.
            raise RpcError(
                INVALID_REQUEST,
                "This session is already answering a prompt; cancel it (session/cancel) first.",
            )
        turn = Turn(self, session, request.prompt)
        session.turn = turn
        try:
            session.prompts += 1
            user_message = session.new_user_message_id()
            turn.records.extend(
                m.UserMessageChunk(content=block, message_id=user_message).to_wire()
                for block in request.prompt
            )
            if not session.title:
                text = next(
                    (b.text for b in request.prompt if isinstance(b, m.TextContentBlock)), ""
                )
                session.title = edits.derive_title(text) or "Untitled demo session"
                update = m.SessionInfoUpdate(title=session.title, updated_at=_now())
                await turn.send(update, record=False)
            with turn.scope:
                try:
                    stop = await run_prompt(turn)
                except ValidationError as exc:
                    raise RpcError(
                        INTERNAL_ERROR, f"A client answer did not match the ACP schema: {exc}"
                    ) from exc
                except RpcError as exc:
                    if exc.code == INTERNAL_ERROR:
                        raise  # ours (/error), or already phrased for the user
                    # A client error no scene handled: answering with the client's own code
                    # would blame the client's request on the prompt.
                    raise RpcError(
                        INTERNAL_ERROR,
                        f"The demo agent could not finish: the client answered with an error: {exc.message}",
                        {"clientError": exc.to_wire()},
                    ) from exc
            if turn.scope.cancelled_caught or turn.cancel_requested:
                stop = "cancelled"  # spec: a cancelled turn ends with this, not an error
            await _shielded(turn.finish())
            turn.account(prompt_chars(request.prompt))
            await turn.send(turn.usage_update(), record=False)
            return {"stopReason": stop}
        except BaseException:
            await _shielded(turn.finish())
            raise
        finally:
            session.history.extend(turn.compacted())
            self._touch(session)
            session.turn = None
            turn.done.set()
            with anyio.CancelScope(shield=True):
                await self._save()

    def _cancel(self, params: Any) -> None:
        request = m.CancelNotification.parse(params)
        session = self.sessions.get(request.session_id)
        if session is not None and session.turn is not None:
            session.turn.cancel()


# --- helpers ---------------------------------------------------------------------------------


async def _shielded(cleanup: Awaitable[None]) -> None:
    # Runs even when the turn was cancelled; a deadline keeps a silent client from
    # holding the turn forever.
    with anyio.CancelScope(shield=True), anyio.move_on_after(CLEANUP_SECONDS):
        await cleanup


def _absolute(path: str, what: str) -> str:
    if not os.path.isabs(path):
        # spec: session directories are absolute paths.
        raise RpcError(INVALID_PARAMS, f"{what} must be an absolute path, not {path!r}.")
    return os.path.normpath(path)


def _server_name(server: Any) -> str:
    name = getattr(server, "name", None)
    if name is None and isinstance(getattr(server, "raw", None), dict):
        name = server.raw.get("name")
    return str(name or "unnamed")


def _list_key(session: DemoSession) -> tuple[int, str]:
    # Most recently active first; ties (never in practice) by id.
    return (-session.activity, session.id)


def _encode_cursor(key: tuple[int, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode("ascii")


def _decode_cursor(cursor: str) -> tuple[int, str]:
    try:
        activity, session_id = json.loads(base64.urlsafe_b64decode(cursor.encode("ascii")))
        return (int(activity), str(session_id))
    except (ValueError, TypeError, binascii.Error, UnicodeError) as exc:
        raise RpcError(INVALID_PARAMS, "The cursor is not one this agent gave out.") from exc


def _write_atomically(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


# --- stdio -----------------------------------------------------------------------------------


class _CountingSend(anyio.abc.ByteSendStream):
    """Counts the messages written (one ``send`` per message, as the Peer writes)."""

    def __init__(self, inner: anyio.abc.ByteSendStream) -> None:
        self.inner = inner
        self.sent = 0

    async def send(self, item: bytes) -> None:
        try:
            await self.inner.send(item)
        finally:
            self.sent += 1  # failed writes count too: nothing more will come of them

    async def aclose(self) -> None:
        await self.inner.aclose()


class _StdinStream(anyio.abc.ByteReceiveStream):
    """Standard input as a byte stream, read by a daemon thread.

    A daemon thread (rather than an anyio worker thread) because a read blocked on an
    open terminal or pipe must never keep the process from exiting. Works for pipes,
    terminals and regular files alike. Needs the asyncio backend.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: asyncio.Queue[bytes] | None = None
        self._slots = threading.Semaphore(8)  # chunks read ahead: bounded memory
        self._buffer = b""
        self._ended = False

    def _start(self) -> asyncio.Queue[bytes]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes] = asyncio.Queue()

        def pump() -> None:
            while True:
                self._slots.acquire()
                try:
                    data = os.read(self._fd, 1 << 16)
                except OSError:
                    data = b""
                try:
                    loop.call_soon_threadsafe(queue.put_nowait, data)
                except RuntimeError:  # the loop is closed: the agent is exiting
                    return
                if not data:
                    return

        threading.Thread(target=pump, name="demo-agent-stdin", daemon=True).start()
        return queue

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._buffer:
            if self._ended:
                raise anyio.EndOfStream
            if self._queue is None:
                self._queue = self._start()
            data = await self._queue.get()
            self._slots.release()
            if not data:
                self._ended = True
                raise anyio.EndOfStream
            self._buffer = data
        data, self._buffer = self._buffer[:max_bytes], self._buffer[max_bytes:]
        return data

    async def aclose(self) -> None:
        self._ended = True


class _FdSendStream(anyio.abc.ByteSendStream):
    """A file descriptor as a byte stream: every message is written whole, unbuffered
    (the client sees it at once), from a worker thread so that a client that reads
    slowly never blocks the event loop."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    async def send(self, item: bytes) -> None:
        await anyio.to_thread.run_sync(self._write_all, item)

    async def aclose(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)


def _claim_stdout() -> int:
    """A private duplicate of stdout for protocol messages; fd 1 and ``sys.stdout`` now
    go to stderr, so a stray ``print`` can never corrupt the protocol stream (spec: agents
    MUST NOT write non-ACP data to stdout)."""
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol_fd


async def serve(
    receive: anyio.abc.ByteReceiveStream,
    send: anyio.abc.ByteSendStream,
    options: DemoOptions | None = None,
) -> None:
    """Serve one client over the given byte streams until ``receive`` ends (e.g. a
    client and the demo agent in one process through :func:`~acp_notebook.protocol.memory.memory_pipe`)."""
    await DemoAgent(receive, send, options).run()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="acp-notebook demo-agent",
        description="The acp_notebook demo agent: an ACP agent on stdio that demonstrates the protocol.",
    )
    parser.add_argument(
        "--require-auth",
        action="store_true",
        default=os.environ.get("ACP_DEMO_REQUIRE_AUTH", "") not in ("", "0", "false", "no"),
        help="answer session/new, load and resume with -32000 until authenticate "
        "(method demo-login) is called (env ACP_DEMO_REQUIRE_AUTH=1)",
    )
    parser.add_argument(
        "--state-file",
        type=Path,
        default=os.environ.get("ACP_DEMO_STATE_FILE") or None,
        help="keep sessions in this JSON file so later processes can list and load them "
        "(env ACP_DEMO_STATE_FILE)",
    )
    parser.add_argument(
        "--page-size",
        type=int,
        default=DEFAULT_PAGE_SIZE,
        help=f"sessions per session/list page (default {DEFAULT_PAGE_SIZE})",
    )
    parser.add_argument(
        "--log-level",
        default="WARNING",
        type=str.upper,
        choices=["DEBUG", "INFO", "WARNING", "ERROR"],
        help="what to log to stderr (default WARNING)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the demo agent on stdin/stdout until stdin closes; returns the exit code."""
    args = _parser().parse_args(argv)
    if args.page_size < 1:
        _parser().error("--page-size must be at least 1")
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level,
        format="demo-agent %(levelname)s %(name)s: %(message)s",
    )
    options = DemoOptions(
        require_auth=bool(args.require_auth),
        state_file=Path(args.state_file) if args.state_file else None,
        page_size=args.page_size,
    )
    protocol_fd = _claim_stdout()
    try:
        anyio.run(
            serve, _StdinStream(sys.stdin.fileno()), _FdSendStream(protocol_fd), options,
            backend="asyncio",
        )  # fmt: skip
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
