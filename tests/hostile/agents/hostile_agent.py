"""A stdlib-only ACP agent that attacks its client: one payload per prompt word.

Options (argv):
  --hang-initialize      never answer ``initialize``
  --hang-new             never answer ``session/new``
  --hang-authenticate    never answer ``authenticate`` (the auth method ``login`` is offered)
  --hang-prompt          never answer ``session/prompt`` (nor end it on ``session/cancel``)
  --pid-file=PATH        write the agent's pid to PATH first
  --stubborn             ignore SIGTERM, and live on once stdin ends
  --escapee=PATH         first start a process that leaves the group and session (double
                         fork + ``setsid``) and ignores SIGTERM; it writes its pid to PATH

Prompts (the first word of the first text block):
  deep N         a tool call whose ``rawInput`` is nested N deep, then a chunk ``after deep``
  toodeep N      a line of N unbalanced ``[``, then a chunk ``after toodeep``
  surrogate      a chunk, a tool call title and a plan entry holding lone surrogates
  escapes        text and a tool call title with terminal escapes (OSC 52, cursor moves)
  garbage        lines that are not JSON-RPC objects, then a chunk ``after garbage``
  flood MB      MB megabytes of agent text in 64 KB chunks, numbered lines ("line N")
  escape PATH    start a process that leaves the group and session (double fork +
                 ``setsid``), write "ESCAPEE_PID AGENT_PID" to PATH, and never end the turn
Every other prompt ends with ``end_turn``.
"""

import json
import os
import signal
import sys
import time

out = sys.stdout.buffer
SESSION = "hostile-1"
AGENT_PID = os.getpid()
ESCAPES = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[1A\x1b[2Kls -la\r\x9b31m\u202e"


def write_raw(line):
    out.write(line + b"\n")
    out.flush()


def write(message):
    write_raw(json.dumps(message, separators=(",", ":")).encode())


def update(body):
    write(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": SESSION, "update": body},
        }
    )


def update_raw(body):
    """A session/update whose update is the JSON text ``body``, written as is."""
    write_raw(
        (
            '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"'
            + SESSION
            + '","update":'
            + body
            + "}}"
        ).encode()
    )


def chunk(text):
    update({"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}})


def prompt(word, arg):
    if word == "deep":
        depth = int(arg)
        head = json.dumps(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t1",
                "title": "deep",
                "kind": "other",
                "status": "completed",
                "rawInput": "RAW",
            }
        )
        update_raw(head.replace('"RAW"', "[" * depth + '"leaf"' + "]" * depth))
        chunk("after deep")
    elif word == "toodeep":
        write_raw(b"[" * int(arg))
        chunk("after toodeep")
    elif word == "surrogate":
        update_raw(
            '{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"bad \\ud800 text"}}'
        )
        update_raw(
            '{"sessionUpdate":"tool_call","toolCallId":"t2","title":"title \\udfff","kind":"read","status":"completed"}'
        )
        chunk("after surrogate")
    elif word == "escapes":
        chunk("text " + ESCAPES)
        update(
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "t3",
                "title": "title " + ESCAPES,
                "kind": "execute",
                "status": "completed",
            }
        )
    elif word == "flood":
        line_count = 0
        for _ in range(int(arg) * 16):
            lines, size = [], 0
            while size < 65536 - 20:
                lines.append(f"line {line_count}\n")
                size += len(lines[-1])
                line_count += 1
            chunk("".join(lines))
    elif word == "escape":
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                with open(arg + ".tmp", "w") as handle:
                    handle.write(f"{os.getpid()} {AGENT_PID}")
                os.rename(arg + ".tmp", arg)
                time.sleep(120)
            os._exit(0)
        return False
    elif word == "garbage":
        for line in (
            b"not json",
            b"[]",
            b"42",
            b'{"jsonrpc":"2.0","method":[1]}',
            b"\xff\xfe",
            b'{"id":{}}',
        ):
            write_raw(line)
        chunk("after garbage")


def escape(path):
    """A process that left the agent's group and session, ignoring SIGTERM."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            with open(path + ".tmp", "w") as handle:
                handle.write(str(os.getpid()))
            os.rename(path + ".tmp", path)
            time.sleep(300)
        os._exit(0)


def main():
    if "--stubborn" in sys.argv:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for option in sys.argv[1:]:
        if option.startswith("--pid-file="):
            with open(option.split("=", 1)[1], "w") as handle:
                handle.write(str(AGENT_PID))
        elif option.startswith("--escapee="):
            escape(option.split("=", 1)[1])
    for line in sys.stdin.buffer:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method, mid = message.get("method"), message.get("id")
        if method == "initialize":
            if "--hang-initialize" not in sys.argv:
                result = {
                    "protocolVersion": 1,
                    "agentCapabilities": {},
                    "authMethods": [{"id": "login", "name": "Log in"}],
                }
                write({"jsonrpc": "2.0", "id": mid, "result": result})
        elif method == "authenticate":
            if "--hang-authenticate" not in sys.argv:
                write({"jsonrpc": "2.0", "id": mid, "result": {}})
        elif method == "session/new":
            if "--hang-new" not in sys.argv:
                write({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": SESSION}})
        elif method == "session/prompt" and "--hang-prompt" not in sys.argv:
            blocks = message["params"]["prompt"]
            words = [*(blocks[0].get("text", "") if blocks else "").split(), "", ""]
            if prompt(words[0], words[1]) is False:
                continue
            write({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
        elif mid is not None and method not in (None, "session/prompt"):
            write({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}})
    while "--stubborn" in sys.argv:
        time.sleep(60)


main()
