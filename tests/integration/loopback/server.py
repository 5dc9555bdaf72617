"""A loopback model for the real agents: one HTTP server on 127.0.0.1 that answers the four
wire formats they speak, from a :class:`Script` a test sets, and keeps every request body.

==========================  ===============================================  ==============
format                      paths                                            agents
==========================  ===============================================  ==============
Anthropic Messages          ``/v1/messages`` (``/count_tokens``)             claude-agent-acp
OpenAI Responses            ``/v1/responses``                                codex-acp
OpenAI Chat Completions     ``/v1/chat/completions``                         qwen, opencode,
                                                                             fast-agent
Gemini                      ``/v1beta/models/M:generateContent``,            gemini-cli
                            ``:streamGenerateContent``, ``:countTokens``
==========================  ===============================================  ==============

The model is stateless: each request is answered from what it carries. Since the last
prompt the person typed (not a tool result), the script's calls are made in order, each
once, by the name the request's tool list gives it (agents name the notebook's
``run_code`` ``mcp__notebook__run_code``, ``mcp_notebook_run_code``, ``notebook_run_code``
or ``notebook__run_code``); when a wanted tool is not in the list but a ``tool_search``
tool is, the model searches for it first. Then it replies with the script's text. A
request that offers no tools (titles, topic checks, routing) gets the reply text alone, or
for a JSON schema a JSON object of its shape, so side requests never take a step of the
script.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Call:
    """A tool the model asks for: ``tool`` is an exact name or, for the notebook tools,
    the tool's own name (``run_code``), matched against each agent's spelling."""

    tool: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Script:
    reply: str = "Hello from the loopback model."
    calls: tuple[Call, ...] = ()
    #: Hold every answer that offers tools until :meth:`LoopbackModel.release` (a turn
    #: that is still waiting on its model when a test interrupts it).
    hold: bool = False


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]

    @property
    def text(self) -> str:
        return json.dumps(self.body)


@dataclass
class Conversation:
    """What the model reads in a request, whatever its format."""

    tools: list[str]
    #: Names of the tools the model called since the last prompt the person typed.
    called: list[str]
    #: A JSON reply was asked for: the schema's properties.
    schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class Answer:
    text: str = ""
    call: tuple[str, dict[str, Any]] | None = None


def tool_name(wanted: str, offered: list[str]) -> str | None:
    """The offered name of ``wanted``: itself, or a notebook tool in any agent's spelling."""
    if wanted in offered:
        return wanted
    spelled = re.compile(rf"^(mcp)?_*notebook_+{re.escape(wanted)}$")
    return next((name for name in offered if spelled.match(name)), None)


def decide(script: Script, conv: Conversation) -> Answer:
    if conv.schema is not None:
        return Answer(text=json.dumps(_fill(conv.schema)))
    if conv.tools:
        for step in script.calls:
            name = tool_name(step.tool, conv.tools)
            if name is None:
                if "tool_search" in conv.tools and "tool_search" not in conv.called:
                    return Answer(call=("tool_search", {"query": step.tool}))
                continue
            if name not in conv.called:
                return Answer(call=(name, step.arguments))
    return Answer(text=script.reply)


def _fill(schema: dict[str, Any]) -> dict[str, Any]:
    """A JSON object of ``schema``'s shape: the answer of a side request (gemini's model
    router and its next-speaker check) that ends the turn where it can."""
    out: dict[str, Any] = {}
    for key, spec in (schema.get("properties") or {}).items():
        kind = str(spec.get("type", "string")).lower()
        if "enum" in spec:
            choices = spec["enum"]
            out[key] = "user" if "user" in choices else choices[0]
        elif kind == "boolean":
            out[key] = False
        elif kind in ("number", "integer"):
            out[key] = 0
        elif kind == "array":
            out[key] = []
        elif kind == "object":
            out[key] = _fill(spec)
        else:
            out[key] = "flash" if "model" in key else "done"
    return out


# ---------------------------------------------------------------------- reading requests


def _anthropic(body: dict[str, Any]) -> Conversation:
    tools = [t.get("name", "") for t in body.get("tools") or []]
    called: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        kinds = {b.get("type") for b in blocks}
        if message.get("role") == "user" and "tool_result" not in kinds:
            called = []
        if message.get("role") == "assistant":
            called += [b.get("name", "") for b in blocks if b.get("type") == "tool_use"]
    return Conversation(tools, called)


def _responses(body: dict[str, Any]) -> Conversation:
    # Codex offers an MCP server's tools in a namespace (``mcp__notebook``) and names a
    # call of one by both: read as ``mcp__notebook__run_code``.
    tools = []
    for tool in body.get("tools") or []:
        if tool.get("type") == "namespace":
            tools += [f"{tool['name']}__{t.get('name', '')}" for t in tool.get("tools") or []]
        else:
            tools.append(tool.get("name") or tool.get("type", ""))
    called: list[str] = []
    for item in body.get("input", []):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            called = []
        elif item.get("type") == "function_call":
            space = item.get("namespace")
            called.append(f"{space}__{item.get('name', '')}" if space else item.get("name", ""))
    return Conversation(tools, called)


def _chat(body: dict[str, Any]) -> Conversation:
    tools = [t.get("function", {}).get("name", "") for t in body.get("tools") or []]
    called: list[str] = []
    for message in body.get("messages", []):
        if message.get("role") == "user":
            called = []
        for call in message.get("tool_calls") or []:
            called.append(call.get("function", {}).get("name", ""))
    schema = None
    response_format = body.get("response_format") or {}
    if response_format.get("type") == "json_schema":
        schema = response_format.get("json_schema", {}).get("schema")
    return Conversation(tools, called, schema)


def _gemini(body: dict[str, Any]) -> Conversation:
    tools = [
        d.get("name", "")
        for t in body.get("tools") or []
        for d in t.get("functionDeclarations") or t.get("function_declarations") or []
    ]
    called: list[str] = []
    for content in body.get("contents", []):
        parts = content.get("parts", [])
        if content.get("role") == "user" and not any("functionResponse" in p for p in parts):
            called = []
        called += [p["functionCall"].get("name", "") for p in parts if "functionCall" in p]
    config = body.get("generationConfig") or {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    return Conversation(tools, called, schema if isinstance(schema, dict) else None)


# ---------------------------------------------------------------------- writing answers


def _sse(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> bytes:
    out = []
    for event, data in events:
        head = f"event: {event}\n" if event else ""
        out.append(f"{head}data: {json.dumps(data)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def _chunks(text: str) -> list[str]:
    """The reply in a few pieces, as a model streams it."""
    words = text.split(" ")
    size = max(1, len(words) // 3)
    return [
        " ".join(words[i : i + size]) + (" " if i + size < len(words) else "")
        for i in range(0, len(words), size)
    ]


def anthropic_answer(answer: Answer, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    usage = {"input_tokens": 10, "output_tokens": 5}
    if answer.call is not None:
        name, arguments = answer.call
        block: dict[str, Any] = {
            "type": "tool_use",
            "id": f"toolu_{n}",
            "name": name,
            "input": arguments,
        }
        stop = "tool_use"
    else:
        block = {"type": "text", "text": answer.text}
        stop = "end_turn"
    message = {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "m"),
        "content": [block],
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": usage,
    }
    if not body.get("stream"):
        return "application/json", json.dumps(message).encode()
    start = {**message, "content": [], "stop_reason": None}
    events: list[tuple[str | None, dict[str, Any]]] = [
        ("message_start", {"type": "message_start", "message": start})
    ]
    if answer.call is not None:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {**block, "input": {}},
                },
            )
        )
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events.append(
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
        )
    else:
        events.append(
            (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": 0,
                    "content_block": {"type": "text", "text": ""},
                },
            )
        )
        for piece in _chunks(answer.text):
            delta = {"type": "text_delta", "text": piece}
            events.append(
                ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
            )
    events += [
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return "text/event-stream", _sse(events)


def responses_answer(answer: Answer, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    if answer.call is not None:
        name, arguments = answer.call
        spaces = [t["name"] for t in body.get("tools") or [] if t.get("type") == "namespace"]
        space = next((sp for sp in spaces if name.startswith(sp + "__")), None)
        item: dict[str, Any] = {
            "type": "function_call",
            "id": f"fc_{n}",
            "call_id": f"call_{n}",
            "name": name,
            "arguments": json.dumps(arguments),
            "status": "completed",
        }
        if space is not None:
            item.update(name=name[len(space) + 2 :], namespace=space)
    else:
        item = {
            "type": "message",
            "id": f"msg_{n}",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": answer.text, "annotations": []}],
        }
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    response = {
        "id": f"resp_{n}",
        "object": "response",
        "status": "completed",
        "model": body.get("model", "m"),
        "output": [item],
        "usage": usage,
    }
    if not body.get("stream"):
        return "application/json", json.dumps(response).encode()
    events: list[tuple[str | None, dict[str, Any]]] = [
        (
            "response.created",
            {
                "type": "response.created",
                "response": {**response, "status": "in_progress", "output": []},
            },
        ),
        (
            "response.output_item.added",
            {
                "type": "response.output_item.added",
                "output_index": 0,
                "item": {**item, "status": "in_progress"},
            },
        ),
    ]
    if answer.call is None:
        for piece in _chunks(answer.text):
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "item_id": item["id"],
                        "output_index": 0,
                        "content_index": 0,
                        "delta": piece,
                    },
                )
            )
    events += [
        (
            "response.output_item.done",
            {"type": "response.output_item.done", "output_index": 0, "item": item},
        ),
        ("response.completed", {"type": "response.completed", "response": response}),
    ]
    return "text/event-stream", _sse(events)


def chat_answer(answer: Answer, body: dict[str, Any], n: int) -> tuple[str, bytes]:
    base = {"id": f"chatcmpl-{n}", "created": 1700000000, "model": body.get("model", "m")}
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    call = None
    if answer.call is not None:
        name, arguments = answer.call
        call = {
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
    finish = "tool_calls" if call else "stop"
    if not body.get("stream"):
        message: dict[str, Any] = {"role": "assistant", "content": None if call else answer.text}
        if call:
            message["tool_calls"] = [call]
        choice = {"index": 0, "message": message, "finish_reason": finish}
        reply = {**base, "object": "chat.completion", "choices": [choice], "usage": usage}
        return "application/json", json.dumps(reply).encode()

    def chunk(
        delta: dict[str, Any], finish_reason: str | None = None
    ) -> tuple[None, dict[str, Any]]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason}
        return None, {**base, "object": "chat.completion.chunk", "choices": [choice]}

    events = [chunk({"role": "assistant", "content": ""})]
    if call:
        events.append(chunk({"tool_calls": [{"index": 0, **call}]}))
    else:
        events += [chunk({"content": piece}) for piece in _chunks(answer.text)]
    events.append(chunk({}, finish))
    if (body.get("stream_options") or {}).get("include_usage"):
        events.append(
            (None, {**base, "object": "chat.completion.chunk", "choices": [], "usage": usage})
        )
    return "text/event-stream", _sse(events, done=True)


def gemini_answer(answer: Answer, stream: bool) -> tuple[str, bytes]:
    if answer.call is not None:
        name, arguments = answer.call
        parts: list[dict[str, Any]] = [{"functionCall": {"name": name, "args": arguments}}]
    else:
        parts = [{"text": answer.text}]
    usage = {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15}
    reply = {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": usage,
        "modelVersion": "mock-model",
    }
    if not stream:
        return "application/json", json.dumps(reply).encode()
    return "text/event-stream", _sse([(None, reply)])


# ---------------------------------------------------------------------- the server


@dataclass
class LoopbackModel:
    """The server's state: the script every request is answered from, and what came."""

    script: Script = field(default_factory=Script)
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: Set when a request is being held (``Script.hold``).
    holding: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def mark(self) -> int:
        """Where the requests of what follows start (an index into :attr:`requests`)."""
        return len(self.requests)

    def since(self, mark: int) -> list[Recorded]:
        with self.lock:
            return self.requests[mark:]

    def play(self, script: Script) -> int:
        """Answer from ``script`` from now on; returns :meth:`mark`."""
        with self.lock:
            self.script = script
            self.holding.clear()
            self.released.clear()
            return len(self.requests)

    def release(self) -> None:
        self.released.set()

    def answer(self, path: str, body: dict[str, Any]) -> tuple[str, bytes]:
        with self.lock:
            self.requests.append(Recorded(path, body))
            n = len(self.requests)
            script = self.script
        route = path.split("?")[0]
        if script.hold and '"tools"' in json.dumps(body):
            self.holding.set()
            self.released.wait(120)  # a safety net: the test releases it
        if route.endswith("/count_tokens"):
            return "application/json", b'{"input_tokens": 10}'
        if route.endswith(":countTokens"):
            return "application/json", b'{"totalTokens": 10}'
        if route.endswith("/messages"):
            return anthropic_answer(decide(script, _anthropic(body)), body, n)
        if route.endswith("/responses"):
            return responses_answer(decide(script, _responses(body)), body, n)
        if route.endswith("/chat/completions"):
            return chat_answer(decide(script, _chat(body)), body, n)
        if ":generateContent" in route or ":streamGenerateContent" in route:
            stream = ":streamGenerateContent" in route
            return gemini_answer(decide(script, _gemini(body)), stream)
        raise LookupError(route)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
            content_type, payload = self.server.model.answer(self.path, body)
        except (LookupError, ValueError) as exc:
            self._send(404, "application/json", json.dumps({"error": str(exc)}).encode())
            return
        self._send(200, content_type, payload)

    def do_GET(self) -> None:
        # Model lists (opencode, fast-agent may ask): one model.
        models = {
            "object": "list",
            "data": [{"id": "mock-model", "object": "model"}],
            "models": [{"name": "models/mock-model"}],
        }
        self._send(200, "application/json", json.dumps(models).encode())

    def _send(self, status: int, content_type: str, payload: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    model: LoopbackModel


def serve() -> Iterator[LoopbackModel]:
    """Run a loopback model on a free port until the generator is closed."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.model = LoopbackModel(port=server.server_address[1])
    thread = threading.Thread(target=server.serve_forever, name="loopback-model", daemon=True)
    thread.start()
    try:
        yield server.model
    finally:
        server.shutdown()
        server.server_close()
