"""A deliberately broken ACP agent (stdlib only): each of its defects is planted for one
check of the report card (acp_notebook/lab/checks.py) to find, and nothing else is wrong.

It claims loadSession, embeddedContext and sessionCapabilities.list, never claims image,
sends no usage_update (optional in ACP), and answers protocol version 1. A prompt naming
``report-card.txt`` writes that file; a prompt containing ``slow`` streams for a while.
"""

import json
import os
import sys
import time

#: check id -> the defect planted for it.
PLANTED = {
    "schema": "a session/update whose content block has no `type`",
    "load-session": "session/load answers without replaying the history",
    "cancel": "ignores session/cancel and ends the turn with end_turn",
    "permission-before-edit": "writes a file through the client without asking permission",
    "unknown-method": "answers unknown methods with -32603 instead of -32601",
    "session-list": "session/list lists no session at all",
}

out = sys.stdout.buffer
_next_id = 0
_sessions = {}


def write(message):
    out.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
    out.flush()


def update(session_id, body):
    write({"method": "session/update", "params": {"sessionId": session_id, "update": body}})


def say(session_id, text):
    update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


def read():
    line = sys.stdin.buffer.readline()
    return json.loads(line) if line else None


def ask(method, params):
    """A request to the client; its answer (notifications meanwhile are ignored)."""
    global _next_id
    _next_id += 1
    write({"id": _next_id, "method": method, "params": params})
    while True:
        message = read()
        if message is None:
            sys.exit(0)
        if message.get("id") == _next_id and "method" not in message:
            return message


def prompt(params):
    session_id = params["sessionId"]
    text = " ".join(b.get("text", "") for b in params["prompt"] if b.get("type") == "text")
    if "report-card.txt" in text:
        path = os.path.join(_sessions[session_id], "report-card.txt")
        ask("fs/write_text_file", {"sessionId": session_id, "path": path, "content": "ok\n"})
        say(session_id, "Written.")
    elif "slow" in text:
        for number in range(1, 11):
            say(session_id, f"{number} ")
            time.sleep(0.1)
    else:
        # The planted schema defect: a content block without its `type`.
        update(session_id, {"sessionUpdate": "agent_message_chunk", "content": {"text": "hello"}})
    return {"stopReason": "end_turn"}


def answer(message):
    method, params = message["method"], message.get("params") or {}
    if method == "initialize":
        return {
            "protocolVersion": 1,
            "agentCapabilities": {
                "loadSession": True,
                "promptCapabilities": {"embeddedContext": True},
                "sessionCapabilities": {"list": {}},
            },
            "authMethods": [],
        }
    if method == "session/new":
        session_id = f"broken-{len(_sessions) + 1}"
        _sessions[session_id] = params["cwd"]
        return {"sessionId": session_id}
    if method == "session/prompt":
        return prompt(params)
    if method == "session/load":
        return {}
    if method == "session/list":
        return {"sessions": []}
    return None


def main():
    while True:
        message = read()
        if message is None:
            return
        if "id" not in message or "method" not in message:
            continue  # notifications (session/cancel is ignored: planted) and stray answers
        result = answer(message)
        if result is None:
            error = {"code": -32603, "message": f"internal error: {message['method']}"}
            write({"id": message["id"], "error": error})
        else:
            write({"id": message["id"], "result": result})


if __name__ == "__main__":
    main()
