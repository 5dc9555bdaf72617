"""The ``notebook`` MCP server, inside the user's kernel.

    server = NotebookToolsServer(loop, runner, shell, session="default", approve=approve)
    spec = server.start()      # the mcpServers entry for session/new (a stdio relay)
    ...
    server.close()

It listens on its own :class:`~.endpoint.RelayEndpoint` and serves every relay that
says the secret with one MCP session, on the agent loop thread. One server serves one
session, or with ``route`` every session of the kernel: the same entry for each (an
agent that registers its MCP servers once per process, fast-agent, refuses a second
``notebook`` with other settings), each call routed to its session. Built on the official
``mcp`` package's low-level ``Server`` rather than FastMCP: the tools come from a
registry that changes at run time (one registration each, announced to connected
agents with ``notifications/tools/list_changed``), take their schemas as data, and
return text and images the way we build them — there is nothing for FastMCP's
decorators and signature introspection to do. ``mcp`` is imported when the first relay
connects, in a worker thread, so neither ``%load_ext`` nor the agent loop waits for it,
and a turn whose agent never connects (the demo agent; agents without MCP) does not pay
for it at all: importing ``mcp`` is about half a second of CPU, which a first turn's
agent start and notebook-layer import would otherwise share the cores (and the GIL) with.
"""

from __future__ import annotations

import base64
import contextvars
import functools
import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from ...protocol.trace_event import Observer, TraceEvent
from ..runtime.loop import AgentLoop
from .approval import Approve
from .endpoint import McpServerSpec, RelayEndpoint, peer_pid
from .execute import CodeResult
from .kernel_tools import kernel_tools
from .registry import CellChangeReport, ToolContext, ToolImage, ToolRegistry, ToolResult
from .runner import MainThreadRunner

if TYPE_CHECKING:
    import mcp_types
    from IPython.core.interactiveshell import InteractiveShell
    from mcp.server.lowlevel import Server
    from mcp.server.models import InitializationOptions

log = logging.getLogger(__name__)

#: mcp's package is not safe to import from two threads at once (its modules import each
#: other: "partially initialized module"), and two sessions' servers start together.
_IMPORTING = threading.Lock()

#: The server's name in ``mcpServers`` (a rule or the inspector names it so).
SERVER_NAME = "notebook"
#: The channel its messages are traced on.
CHANNEL = f"mcp:{SERVER_NAME}"


@dataclass(eq=False)
class _Connection:
    """One relay's MCP session. ``session`` is the ``ServerSession`` of its latest request:
    mcp makes one per request, but its notifications go out on the connection. ``pid``:
    the relay's process (None where the socket does not say)."""

    session: Any = None
    pid: int | None = None


#: Which session's context serves a call from the relay ``pid`` (None: unknown): the
#: context, or the one sentence the agent is answered with when no session claims it.
Route = Callable[[int | None], ToolContext | str]


#: The connection a handler serves (set per connection task; handlers inherit it).
_current: contextvars.ContextVar[_Connection] = contextvars.ContextVar("notebook_tools_connection")


class NotebookToolsServer:
    """The notebook tools for one ACP session, offered to its agent through a relay."""

    def __init__(
        self,
        loop: AgentLoop,
        runner: MainThreadRunner,
        shell: InteractiveShell,
        session: str,
        approve: Approve,
        show: Callable[[CodeResult], None] | None = None,
        registry: ToolRegistry | None = None,
        report: Callable[[CellChangeReport], None] | None = None,
        *,
        route: Route | None = None,
        heard: Callable[[int | None], None] | None = None,
        observers_for: Callable[[int | None], tuple[Observer, ...]] | None = None,
    ) -> None:
        self._loop = loop
        self.registry = registry if registry is not None else kernel_tools()
        self.context = ToolContext(session, shell, runner, approve, show, report)
        #: Every call served with ``context``, unless the server is shared: then ``route``
        #: finds the session each call is for.
        self._route: Route = route if route is not None else (lambda _pid: self.context)
        #: Told of every request, with the relay's process: who uses the tools.
        self._heard = heard
        self._endpoint: RelayEndpoint | None = None
        self._spec: McpServerSpec | None = None
        self._scope: anyio.CancelScope | None = None
        self._closed = False
        self._stop_watching: Callable[[], None] | None = None
        #: The MCP server and its options, built for the first relay that connects.
        self._built: tuple[Server[Any], InitializationOptions] | None = None
        self._building: anyio.Lock | None = None
        #: Connected relays, told when the tool list changes.
        self._connections: set[_Connection] = set()
        #: Connections refused for a wrong secret.
        self.refused = 0
        #: What sees every MCP message of a relay both ways, on the channel
        #: :data:`CHANNEL`: the message log of the agent that started the relay.
        self._observers_for = observers_for or (lambda _pid: ())

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> McpServerSpec:
        """Open the endpoint and serve it; the stdio entry for ``mcpServers``. Idempotent;
        safe on any thread (it does not wait for the loop)."""
        if self._spec is None:
            self._endpoint = RelayEndpoint()
            self._spec = self._endpoint.spec(SERVER_NAME)
            self._stop_watching = self.registry.on_change(self._tools_changed)
            self._loop.submit(self._serve)
        return self._spec

    def close(self) -> None:
        """Stop serving (connected relays see their socket close and exit) and remove the
        endpoint. Safe on any thread, more than once."""
        if self._stop_watching is not None:
            self._stop_watching()
        self._loop.post(self._cancel)
        if self._endpoint is not None:
            self._endpoint.close()

    def _cancel(self) -> None:
        self._closed = True
        if self._scope is not None:
            self._scope.cancel()

    # ------------------------------------------------------------------ serving

    async def _serve(self) -> None:
        endpoint = self._endpoint
        assert endpoint is not None
        listener: anyio.abc.SocketListener | None = None
        try:
            with anyio.CancelScope() as self._scope:
                if self._closed:
                    return
                self._building = anyio.Lock()
                listener = await anyio.abc.SocketListener.from_socket(endpoint.socket)
                async with listener, anyio.create_task_group() as connections:
                    serve = functools.partial(self._connection, endpoint)
                    await listener.serve(serve, connections)
        except Exception:
            log.exception("the notebook tools server stopped")
        finally:
            if listener is None:  # closed before the listener took the socket over
                endpoint.socket.close()

    async def _server(self) -> tuple[Server[Any], InitializationOptions]:
        """The MCP server and its initialization options, built once (by the first relay
        that says the secret; the next ones wait for that)."""
        assert self._building is not None
        async with self._building:
            if self._built is None:
                server = await anyio.to_thread.run_sync(self._mcp_server)
                from mcp.server.lowlevel import NotificationOptions

                options = server.create_initialization_options(
                    NotificationOptions(tools_changed=True)
                )
                self._built = (server, options)
        return self._built

    async def _connection(self, endpoint: RelayEndpoint, stream: anyio.abc.SocketStream) -> None:
        async with stream:
            received = await endpoint.hello(stream)
            if received is None:
                self.refused += 1
                log.warning("refused a notebook tools connection with a wrong secret")
                return
            try:
                server, options = await self._server()
            except Exception:  # this relay's agent sees the server close; the next one retries
                log.exception("the notebook tools server could not be built")
                return
            from .transport import message_streams

            connection = _Connection(pid=peer_pid(stream))
            _current.set(connection)
            self._connections.add(connection)
            try:
                observers = self._observers_for(connection.pid)

                def observe(event: TraceEvent) -> None:
                    for observer in observers:
                        observer(event)

                streams = message_streams(stream, received, observe=observe, channel=CHANNEL)
                async with streams as (read, write):
                    await server.run(read, write, options)
            finally:
                self._connections.discard(connection)

    def _mcp_server(self) -> Server[Any]:
        """The MCP server (built in a worker thread: importing ``mcp`` takes a while)."""
        with _IMPORTING:
            from mcp.server.lowlevel import Server

        return Server(
            SERVER_NAME,
            instructions="The user's live Jupyter notebook: its variables, cells and last "
            "error, and running code in its kernel (after the user approves).",
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
        )

    # ------------------------------------------------------------------ MCP handlers

    async def _list_tools(self, ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        import mcp_types

        self._seen(ctx)
        return mcp_types.ListToolsResult(
            tools=[
                mcp_types.Tool(
                    name=tool.name,
                    description=tool.description,
                    input_schema=dict(tool.input_schema),
                    annotations=mcp_types.ToolAnnotations(
                        read_only_hint=tool.read_only, destructive_hint=not tool.read_only
                    ),
                )
                for tool in self.registry.tools()
            ]
        )

    async def _call_tool(self, ctx: Any, params: Any) -> mcp_types.CallToolResult:
        import mcp_types
        from mcp.shared.exceptions import MCPError

        connection = self._seen(ctx)
        tool = self.registry.get(params.name)
        if tool is None:
            raise MCPError(mcp_types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        context = self._route(connection.pid if connection is not None else None)
        if isinstance(context, str):
            return _to_mcp(ToolResult.error(context))
        arguments = params.arguments or {}
        wrong = argument_error(tool.input_schema, arguments)
        if wrong is not None:
            return _to_mcp(ToolResult.error(f"Invalid arguments for {tool.name}: {wrong}"))
        try:
            result = await tool.call(context, arguments)
        except Exception as exc:
            log.exception("the notebook tool %s failed", tool.name)
            result = ToolResult.error(f"The tool {tool.name} failed: {type(exc).__name__}: {exc}")
        return _to_mcp(result)

    def _seen(self, ctx: Any) -> _Connection | None:
        connection = _current.get(None)
        if connection is not None:
            connection.session = ctx.session
        if self._heard is not None:
            self._heard(connection.pid if connection is not None else None)
        return connection

    def _tools_changed(self) -> None:
        """Tell every connected agent (from any thread; the loop does the telling)."""

        async def announce() -> None:
            for connection in list(self._connections):
                if connection.session is None:
                    continue  # it has not listed the tools yet
                try:
                    await connection.session.send_tool_list_changed()
                except Exception:  # that connection is closing
                    log.debug("could not announce a tool change", exc_info=True)

        self._loop.submit(announce)


def argument_error(schema: Mapping[str, Any], arguments: Any) -> str | None:
    """What is wrong with a tool call's ``arguments`` against the tool's JSON Schema, or
    None when nothing is.

    Checked, where it reads the schema as ``jsonschema`` would, by a validator fastjsonschema
    compiles once per schema (it comes with nbformat): importing ``jsonschema`` costs the
    user's kernel about a second of CPU on its first tool call, nearly all of it building a
    parser for a URI format (``rfc3987_syntax``) that no tool schema uses. fastjsonschema
    knows drafts up to 7; MCP's default dialect is 2020-12, so a schema naming another
    dialect or using a keyword 2020-12 added or changed (:data:`_NEWER`) is checked by
    ``jsonschema``, as is one fastjsonschema cannot compile.
    """
    check = _fast_check(json.dumps(schema, sort_keys=True, default=str))
    if check is None:
        import jsonschema

        try:
            jsonschema.validate(arguments, dict(schema))
        except jsonschema.ValidationError as exc:
            return str(exc.message)
        return None
    import fastjsonschema

    try:
        check(arguments)
    except fastjsonschema.JsonSchemaValueException as exc:
        # Its messages name the value "data": "data.code must be string".
        message = str(exc.message)
        if message.startswith("data."):
            return message[len("data.") :]
        return "the arguments" + message[len("data") :] if message.startswith("data") else message
    return None


#: Keywords draft 2020-12 added or gave another meaning after draft 7.
_NEWER = frozenset(
    {
        "prefixItems",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
        "unevaluatedItems",
        "minContains",
        "maxContains",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$vocabulary",
    }
)


def _reads_as_draft7(node: Any, top: bool = True) -> bool:
    """Whether a schema means the same to a draft-7 validator as to a 2020-12 one."""
    if isinstance(node, list):
        return all(_reads_as_draft7(item, False) for item in node)
    if not isinstance(node, dict):
        return True
    dialect = node.get("$schema")
    if dialect is not None and not (top and "draft-07" in str(dialect)):
        return False
    if _NEWER & node.keys() or isinstance(node.get("items"), list):
        return False
    return all(_reads_as_draft7(value, False) for value in node.values())


@functools.lru_cache(maxsize=128)
def _fast_check(schema_json: str) -> Callable[[Any], Any] | None:
    schema = json.loads(schema_json)
    if not _reads_as_draft7(schema):
        return None
    import fastjsonschema

    try:
        return fastjsonschema.compile(schema)
    except Exception:  # a schema it cannot read: jsonschema says what it makes of it
        return None


def _to_mcp(result: ToolResult) -> mcp_types.CallToolResult:
    import mcp_types

    content: list[mcp_types.ContentBlock] = [
        mcp_types.ImageContent(
            data=base64.b64encode(block.png).decode("ascii"), mime_type="image/png"
        )
        if isinstance(block, ToolImage)
        else mcp_types.TextContent(text=block)
        for block in result.content
    ]
    return mcp_types.CallToolResult(content=content, is_error=result.is_error)
