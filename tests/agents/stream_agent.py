"""A stdlib-only ACP agent that answers every prompt with the same recorded stream: the
``session/update`` values in the JSON file named by argv[1] (each sent with the session's
id), then ``end_turn``."""

import json
import sys
from pathlib import Path

out = sys.stdout.buffer
updates = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))


def send(message):
    out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    out.flush()


for line in sys.stdin.buffer:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1}})
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "stream-1"}})
    elif method == "session/prompt":
        for update in updates:
            params = {"sessionId": "stream-1", "update": update}
            send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
    elif mid is not None:
        send(
            {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}}
        )
