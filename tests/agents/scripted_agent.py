"""A stdlib-only ACP agent for the subprocess tests; each method is one behaviour.

Options (argv):
  --stderr-bytes N   write N bytes to stderr before answering ``initialize``
  --ignore-eof       keep running after stdin ends (until signalled)
  --updates FILE     answer every ``session/prompt`` with the ``session/update`` values of
                     the JSON list in FILE (each sent with the session's id), then ``end_turn``
  --until-cancel     with --updates: leave the prompt unanswered after the stream until
                     ``session/cancel`` comes, then answer it ``cancelled`` (a reply cut mid-way)

Methods:
  initialize, session/new       minimal valid answers
  session/prompt                with --updates: the recorded stream (else: not found)
  _test/echo                    answers ``{"params": <params>}``
  _test/env                     answers ``{"env": <os.environ>}``
  _test/die                     writes a line to stderr, then exits with code 3 without answering
"""

import json
import os
import sys
import time
from pathlib import Path

out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    out.flush()


def option(name, default=None):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


stderr_bytes = int(option("--stderr-bytes", "0"))
updates_file = option("--updates")
updates = json.loads(Path(updates_file).read_text(encoding="utf-8")) if updates_file else None
until_cancel = "--until-cancel" in sys.argv
waiting = None  # the id of a prompt left unanswered until session/cancel

for line in sys.stdin.buffer:
    if not line.strip():
        continue
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        if stderr_bytes:
            row = b"x" * 99 + b"\n"
            for _ in range(stderr_bytes // len(row)):
                sys.stderr.buffer.write(row)
            sys.stderr.flush()
        send(
            {
                "jsonrpc": "2.0",
                "id": mid,
                "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
            }
        )
    elif method == "session/new":
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt" and updates is not None:
        for update in updates:
            params = {"sessionId": "s1", "update": update}
            send({"jsonrpc": "2.0", "method": "session/update", "params": params})
        if until_cancel:
            waiting = mid
        else:
            send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
    elif method == "session/cancel" and waiting is not None:
        send({"jsonrpc": "2.0", "id": waiting, "result": {"stopReason": "cancelled"}})
        waiting = None
    elif method == "_test/echo":
        send({"jsonrpc": "2.0", "id": mid, "result": {"params": msg.get("params")}})
    elif method == "_test/env":
        send({"jsonrpc": "2.0", "id": mid, "result": {"env": dict(os.environ)}})
    elif method == "_test/die":
        sys.stderr.write("fatal: the model backend went away\n")
        sys.stderr.flush()
        sys.exit(3)
    elif mid is not None:
        send(
            {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}}
        )

if "--ignore-eof" in sys.argv:
    while True:
        time.sleep(60)
