"""A minimal stdlib ACP agent for the throughput benchmark.

Answers ``initialize`` and ``session/new``; for ``session/prompt`` it writes N
``agent_message_chunk`` notifications as fast as it can (serialised when the session is
created, before the turn starts, and written in batches of 256 lines), then the
``end_turn`` response: the producer does as little as possible during the turn. N comes from argv[1] or env ``BENCH_N``
(default 20000). Stdlib only, so it costs the same whichever client reads it.
"""

import json
import os
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else int(os.environ.get("BENCH_N", "20000"))
BATCH = 256
out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    out.flush()


def chunk_lines(session_id):
    lines = []
    for i in range(N):
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": f"tok{i} "},
        }
        notification = {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": update},
        }
        lines.append(json.dumps(notification, separators=(",", ":")).encode() + b"\n")
    return [b"".join(lines[start : start + BATCH]) for start in range(0, N, BATCH)]


def main():
    prepared: dict[str, list[bytes]] = {}
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        msg = json.loads(line)
        method, mid = msg.get("method"), msg.get("id")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
                }
            )
        elif method == "session/new":
            sid = f"bench-session-{len(prepared)}"
            prepared[sid] = chunk_lines(sid)
            send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": sid}})
        elif method == "session/prompt":
            sid = msg["params"]["sessionId"]
            for batch in prepared.get(sid) or chunk_lines(sid):
                out.write(batch)
            out.flush()
            send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
        elif mid is not None:
            send(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )


if __name__ == "__main__":
    main()
