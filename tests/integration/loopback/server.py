"""The loopback model's HTTP server: every request kept, answered in its format
(:mod:`.anthropic_messages`, :mod:`.openai_responses`, :mod:`.openai_chat`,
:mod:`.gemini_content`) from the script a test plays."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from . import anthropic_messages, gemini_content, openai_chat, openai_responses
from .script import Script, decide


@dataclass
class Recorded:
    path: str
    body: dict[str, Any]

    @property
    def text(self) -> str:
        return json.dumps(self.body)


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
            return anthropic_messages.write(decide(script, anthropic_messages.read(body)), body, n)
        if route.endswith("/responses"):
            return openai_responses.write(decide(script, openai_responses.read(body)), body, n)
        if route.endswith("/chat/completions"):
            return openai_chat.write(decide(script, openai_chat.read(body)), body, n)
        if ":generateContent" in route or ":streamGenerateContent" in route:
            stream = ":streamGenerateContent" in route
            return gemini_content.write(decide(script, gemini_content.read(body)), stream)
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
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            # The agent hung up before the answer (a cancelled turn's held request): the
            # answer is no one's, and its traceback only buries the test's output.
            self.close_connection = True

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
