"""A hostile stdio agent (stdlib only) that acts without asking, or after being refused.

On each `session/prompt` it runs the actions of its script (argv[1], a JSON list), one at
a time, and answers the prompt `end_turn` with one line per action's outcome in an
`agent_message_chunk`: ``write PATH: ok`` / ``write PATH: error -32003 …``. ``{cwd}`` in a
string is replaced by the session's directory. Actions:

  ["ask", TOOL_CALL, OPTIONS?]     session/request_permission (Allow once / Reject, or
                                  OPTIONS)
  ["write", PATH, CONTENT]        fs/write_text_file
  ["read", PATH]                  fs/read_text_file
  ["terminal", COMMAND, ARGS?, ENV?]
                                  terminal/create (ENV: {NAME: VALUE}), then
                                  terminal/wait_for_exit
  ["spawn", COMMAND, ARGS?]       terminal/create, left running
  ["race", SENT, [TOOL_CALL…]]    every request_permission at once, then touch SENT, then
                                  read the answers (in any order)
  ["after", [ACTION…]]            not in the turn: when the client sends the request
                                  `_test/after` (once the turn is over), the ACTIONs, their
                                  lines the answer
"""

import json
import sys

script = json.loads(sys.argv[1])
out = sys.stdout.buffer
inbox = iter(sys.stdin.buffer)
ids = iter(range(1000, 10**9))
OPTIONS = [
    {"optionId": "allow", "name": "Allow once", "kind": "allow_once"},
    {"optionId": "reject", "name": "Reject", "kind": "reject_once"},
]


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def request(method, params):
    """Send a request and read until its answer (the client sends none of its own here)."""
    mid = next(ids)
    send({"jsonrpc": "2.0", "id": mid, "method": method, "params": params})
    return answers([mid])[mid]


def answers(mids):
    found = {}
    for line in inbox:
        msg = json.loads(line)
        if msg.get("id") in mids and "method" not in msg:
            found[msg["id"]] = msg
            if len(found) == len(mids):
                return found
    sys.exit(0)


def race(sid, sent, tool_calls):
    mids = []
    for tool_call in tool_calls:
        mids.append(next(ids))
        params = {"sessionId": sid, "toolCall": tool_call, "options": OPTIONS}
        send(
            {
                "jsonrpc": "2.0",
                "id": mids[-1],
                "method": "session/request_permission",
                "params": params,
            }
        )
    with open(sent, "w"):
        pass
    found = answers(mids)
    return " ".join(
        f"{c['toolCallId']}={outcome(found[i])}" for c, i in zip(tool_calls, mids, strict=True)
    )


def fill(value, cwd):
    if isinstance(value, str):
        return value.replace("{cwd}", cwd)
    if isinstance(value, list):
        return [fill(v, cwd) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, cwd) for k, v in value.items()}
    return value


def outcome(answer):
    if "error" in answer:
        return f"error {answer['error']['code']} {answer['error']['message']}"
    result = answer.get("result") or {}
    if "content" in result:
        return "ok " + json.dumps(result["content"][:40])
    if "outcome" in result:
        chosen = result["outcome"]
        return chosen.get("optionId") or chosen.get("outcome")
    return "ok"


def run(sid, cwd, actions):
    lines = []
    for action in fill(actions, cwd):
        verb, *args = action
        if verb == "after":
            continue
        if verb == "race":
            lines.append(f"race: {race(sid, args[0], args[1])}")
            continue
        if verb == "ask":
            options = args[1] if len(args) > 1 else OPTIONS
            answer = request(
                "session/request_permission",
                {"sessionId": sid, "toolCall": args[0], "options": options},
            )
        elif verb == "write":
            answer = request(
                "fs/write_text_file", {"sessionId": sid, "path": args[0], "content": args[1]}
            )
        elif verb == "read":
            answer = request("fs/read_text_file", {"sessionId": sid, "path": args[0]})
        else:
            params = {"sessionId": sid, "command": args[0]}
            if len(args) > 1:
                params["args"] = args[1]
            if len(args) > 2:
                params["env"] = [{"name": k, "value": v} for k, v in args[2].items()]
            answer = request("terminal/create", params)
            if "result" in answer and verb == "terminal":
                request("terminal/wait_for_exit", {"sessionId": sid, **answer["result"]})
        lines.append(
            f"{verb} {args[0] if verb != 'ask' else args[0]['toolCallId']}: {outcome(answer)}"
        )
    return lines


cwd = ""
sessions = 0
for line in inbox:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send(
            {"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}}}
        )
    elif method == "session/new":
        cwd = msg["params"]["cwd"]
        sessions += 1  # spec: each new session has its own id
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": f"s{sessions}"}})
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        lines = run(sid, cwd, script)
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "\n".join(lines)},
        }
        send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": sid, "update": update},
            }
        )
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
    elif method == "_test/after":
        later = [
            line for verb, *args in script if verb == "after" for line in run(sid, cwd, args[0])
        ]
        send({"jsonrpc": "2.0", "id": mid, "result": {"lines": later}})
    elif mid is not None and method is not None:
        send(
            {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}}
        )
