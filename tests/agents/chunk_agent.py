"""A stdlib-only agent streaming many ``agent_message_chunk`` notifications per prompt.

usage: chunk_agent.py N

For ``session/prompt`` it writes N chunks whose texts are ``"0"``, ``"1"``, ... (in
batches, as fast as it can), with three updates our models may not know placed at
fixed positions in between, then answers ``end_turn``:

* after chunk N//4: an unknown ``sessionUpdate`` variant (``some_future_update``);
* after chunk N//2: an ``agent_message_chunk`` whose content type is unknown (``future_block``);
* after chunk 3N//4: a ``usage_update`` with ``"used": null`` (sent by claude-agent-acp 0.23.1).
"""

import json
import sys

N = int(sys.argv[1])
out = sys.stdout.buffer


def line(message):
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"


def update(session_id, body):
    return line(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


ODD = {
    N // 4: {"sessionUpdate": "some_future_update", "payload": {"x": 1}},
    N // 2: {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "future_block", "data": "?"},
    },
    3 * N // 4: {"sessionUpdate": "usage_update", "used": None, "size": 200000},
}

for raw in sys.stdin.buffer:
    if not raw.strip():
        continue
    msg = json.loads(raw)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        out.write(line({"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1}}))
    elif method == "session/new":
        out.write(line({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "chunks"}}))
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        batch = []
        for i in range(N):
            batch.append(
                update(
                    sid,
                    {
                        "sessionUpdate": "agent_message_chunk",
                        "content": {"type": "text", "text": str(i)},
                    },
                )
            )
            if i in ODD:
                batch.append(update(sid, ODD[i]))
            if len(batch) >= 256:
                out.write(b"".join(batch))
                batch.clear()
        out.write(b"".join(batch))
        out.write(line({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}}))
    elif mid is not None:
        out.write(
            line(
                {
                    "jsonrpc": "2.0",
                    "id": mid,
                    "error": {"code": -32601, "message": "Method not found"},
                }
            )
        )
    out.flush()
