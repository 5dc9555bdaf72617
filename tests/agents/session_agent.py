"""A stdlib-only ACP agent for the client session tests: one behaviour per prompt word.

Options (argv):
  --protocol-version N   answer ``initialize`` with this protocol version (default 1)
  --caps JSON            the ``agentCapabilities`` to advertise (default: the field is omitted)
  --early                send an update for the new session *before* the ``session/new``
                         answer and another one right after it
  --early-read PATH      before the ``session/new`` answer, ask ``fs/read_text_file`` PATH for
                         the session being created (the prompt ``early`` reports the answer)
  --ignore-eof           keep running after stdin ends (until signalled)
  --pid-file PATH        write the agent's pid to PATH at start
  --auth-methods JSON    the ``authMethods`` to advertise; ``authenticate`` with one of them
                         succeeds, and the prompt ``authed`` says which one was used
  --login-first          until ``authenticate``, prompts fail as claude-agent-acp does without
                         a login: -32603 "Internal error" with the reason in ``data``
  --fail-new MESSAGE     ``session/new`` fails with -32603 MESSAGE (claude-agent-acp as root
                         outside a sandbox: "Query closed before response received")
  --refuse-link-types    a prompt holding a ``resource_link`` with a ``mimeType`` fails as
                         opencode's does: -32603 "file part media type … not supported"
  --mcp-once             MCP servers are registered once per process, as fast-agent does: a
                         ``session/new`` naming a server already registered with other
                         settings fails with fast-agent's -32603

Prompts (the first word of the first text block):
  echo TEXT              one chunk ``echo: TEXT``, then ``end_turn``
  late                   one chunk, the ``end_turn`` answer, then three updates after it
  permission MODE        a tool call and a ``session/request_permission``; once the client has
                         sent ``session/cancel`` *and* answered the permission, the prompt is
                         answered by MODE: ``cancelled``, ``error`` (a JSON-RPC error) or
                         ``end_turn``; a ``selected`` answer without a cancel ends ``end_turn``
  hang                   never answers, ignores ``session/cancel``
  crash                  writes a line to stderr and exits with code 3 without answering
  read PATH              ``fs/read_text_file``; the content (or the error) as a chunk
  early                  the answer to ``--early-read`` as a chunk
  env NAME               the agent's environment variable NAME as a chunk
  noise                  a line that is not JSON, a request for an unknown method, an unknown
                         notification, an unknown ``sessionUpdate``, then ``end_turn``
  stop REASON            ends the turn with stopReason REASON
  gate PATH              one chunk ``first``; once PATH exists, the chunk ``second``, then
                         ``end_turn`` (the client must show ``first`` before the turn ends)
  authed                 one chunk naming the auth method used (``none`` before any)
"""

import json
import os
import sys
import time

out = sys.stdout.buffer


def option(name, default=None):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


PROTOCOL_VERSION = int(option("--protocol-version", "1"))
CAPS = option("--caps")
AUTH_METHODS = json.loads(option("--auth-methods", "[]"))
EARLY_READ = option("--early-read")
if option("--pid-file"):
    with open(option("--pid-file"), "w") as handle:
        handle.write(str(os.getpid()))


def write(message):
    out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
    out.flush()


def answer(mid, result):
    write({"jsonrpc": "2.0", "id": mid, "result": result})


def fail(mid, code, message):
    write({"jsonrpc": "2.0", "id": mid, "error": {"code": code, "message": message}})


def update(session_id, body):
    write(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": session_id, "update": body},
        }
    )


def chunk(session_id, text):
    update(
        session_id,
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": text}},
    )


class State:
    next_request = 0
    #: our request id -> callback(message)
    waiting = {}  # noqa: RUF012 (one connection per process: class state is fine)
    #: the running permission turn, if any
    turn = None
    early_answer = None
    early_prompt = None
    sessions = 0
    auth_method = None
    #: --mcp-once: the settings each MCP server was first registered with, by name
    mcp = {}  # noqa: RUF012


def request(method, params, callback):
    State.next_request += 1
    rid = f"agent-{State.next_request}"
    State.waiting[rid] = callback
    write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})


def finish_permission_turn():
    turn = State.turn
    if turn is None or turn["answer"] is None:
        return
    outcome = turn["answer"].get("result", {}).get("outcome", {})
    if not turn["cancelled"]:
        if outcome.get("outcome") == "selected":
            State.turn = None
            answer(turn["id"], {"stopReason": "end_turn"})
        return
    State.turn = None
    update(
        turn["sid"],
        {"sessionUpdate": "tool_call_update", "toolCallId": "tc-perm", "status": "failed"},
    )
    if turn["mode"] == "error":
        fail(turn["id"], -32603, "Interrupted by the user")
    else:
        answer(turn["id"], {"stopReason": turn["mode"]})


def report_early():
    """Answer the ``early`` prompt once both it and the early read's answer are here."""
    if State.early_prompt is None or State.early_answer is None:
        return
    mid, sid = State.early_prompt
    State.early_prompt = None
    chunk(sid, "early: " + json.dumps(State.early_answer, sort_keys=True))
    answer(mid, {"stopReason": "end_turn"})


def on_prompt(mid, params):
    sid = params["sessionId"]
    blocks = params.get("prompt") or []
    text = next((b.get("text", "") for b in blocks if b.get("type") == "text"), "")
    word, _, rest = text.partition(" ")
    typed = [b["mimeType"] for b in blocks if b.get("type") == "resource_link" and b.get("mimeType")]
    if "--refuse-link-types" in sys.argv and typed:
        fail(mid, -32603, f"'file part media type {typed[0]}' functionality not supported")
    elif "--login-first" in sys.argv and State.auth_method is None:
        details = {"details": "Invalid API key · Please run /login"}
        write({"jsonrpc": "2.0", "id": mid,
               "error": {"code": -32603, "message": "Internal error", "data": details}})  # fmt: skip
    elif word == "authed":
        chunk(sid, f"authenticated with {State.auth_method or 'none'}")
        answer(mid, {"stopReason": "end_turn"})
    elif word == "gate":
        chunk(sid, "first")
        while not os.path.exists(rest):
            time.sleep(0.02)
        chunk(sid, " second")
        answer(mid, {"stopReason": "end_turn"})
    elif word == "echo":
        chunk(sid, f"echo: {rest}")
        answer(mid, {"stopReason": "end_turn"})
    elif word == "late":
        chunk(sid, "before the answer")
        answer(mid, {"stopReason": "end_turn"})
        update(
            sid,
            {
                "sessionUpdate": "available_commands_update",
                "availableCommands": [{"name": "late", "description": "sent after the answer"}],
            },
        )
        chunk(sid, " and after it")
        update(sid, {"sessionUpdate": "session_info_update", "title": "Late title"})
    elif word == "permission":
        State.turn = {"id": mid, "sid": sid, "mode": rest or "cancelled", "cancelled": False,
                      "answer": None}  # fmt: skip
        update(
            sid,
            {
                "sessionUpdate": "tool_call",
                "toolCallId": "tc-perm",
                "title": "Delete everything",
                "kind": "delete",
                "status": "pending",
            },
        )

        def on_answer(message):
            if State.turn is not None:
                State.turn["answer"] = message
                finish_permission_turn()

        request(
            "session/request_permission",
            {
                "sessionId": sid,
                "toolCall": {"toolCallId": "tc-perm", "title": "Delete everything"},
                "options": [
                    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
                    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
                ],
            },
            on_answer,
        )
    elif word == "hang":
        chunk(sid, "thinking forever")
    elif word == "crash":
        chunk(sid, "about to crash")
        sys.stderr.write("fatal: the model backend went away\n")
        sys.stderr.flush()
        sys.exit(3)
    elif word == "read":

        def on_read(message):
            if "result" in message:
                chunk(sid, "content: " + message["result"].get("content", ""))
            else:
                chunk(sid, "error: " + json.dumps(message.get("error")))
            answer(mid, {"stopReason": "end_turn"})

        request("fs/read_text_file", {"sessionId": sid, "path": rest}, on_read)
    elif word == "early":
        State.early_prompt = (mid, sid)
        report_early()
    elif word == "env":
        chunk(sid, f"env {rest}={os.environ.get(rest, '<unset>')}")
        answer(mid, {"stopReason": "end_turn"})
    elif word == "noise":
        out.write(b"this line is not JSON\n")
        out.flush()
        request("_acme/unknown", {"sessionId": sid}, lambda message: None)
        request("acme/unknown_method", {"sessionId": sid}, lambda message: None)
        write({"jsonrpc": "2.0", "method": "acme/notify", "params": {"x": 1}})
        update(sid, {"sessionUpdate": "acme_future_update", "payload": {"x": 1}})
        chunk(sid, "still here")
        answer(mid, {"stopReason": "end_turn"})
    elif word == "stop":
        answer(mid, {"stopReason": rest})
    else:
        chunk(sid, f"unknown prompt: {text}")
        answer(mid, {"stopReason": "end_turn"})


for raw in sys.stdin.buffer:
    if not raw.strip():
        continue
    msg = json.loads(raw)
    method, mid = msg.get("method"), msg.get("id")
    if method is None:  # an answer to one of our requests
        callback = State.waiting.pop(mid, None)
        if callback is not None:
            callback(msg)
    elif method == "initialize":
        result = {"protocolVersion": PROTOCOL_VERSION, "authMethods": AUTH_METHODS}
        if CAPS is not None:
            result["agentCapabilities"] = json.loads(CAPS)
        answer(mid, result)
    elif method == "session/new" and option("--fail-new"):
        fail(mid, -32603, option("--fail-new"))
    elif method == "session/new" and "--mcp-once" in sys.argv and any(
        State.mcp.setdefault(server.get("name"), server) != server
        for server in msg["params"].get("mcpServers") or []
    ):
        name = next(
            server.get("name")
            for server in msg["params"]["mcpServers"]
            if State.mcp[server.get("name")] != server
        )
        detail = f"Runtime MCP server '{name}' is already registered with different settings"
        write({"jsonrpc": "2.0", "id": mid,
               "error": {"code": -32603, "message": "Internal error", "data": {"details": detail}}})  # fmt: skip
    elif method == "session/new":
        State.sessions += 1
        sid = f"session-{State.sessions}"
        if "--early" in sys.argv:
            update(
                sid,
                {
                    "sessionUpdate": "available_commands_update",
                    "availableCommands": [{"name": "early", "description": "before the answer"}],
                },
            )
        if EARLY_READ:

            def on_early(message):
                State.early_answer = message.get("result", message.get("error"))
                report_early()

            request("fs/read_text_file", {"sessionId": sid, "path": EARLY_READ}, on_early)
        answer(mid, {"sessionId": sid})
        if "--early" in sys.argv:
            update(sid, {"sessionUpdate": "current_mode_update", "currentModeId": "after"})
    elif method == "authenticate":
        method_id = msg["params"].get("methodId")
        if any(m.get("id") == method_id for m in AUTH_METHODS):
            State.auth_method = method_id
            answer(mid, {})
        else:
            fail(mid, -32602, f"unknown auth method {method_id}")
    elif method == "session/prompt":
        on_prompt(mid, msg["params"])
    elif method == "session/cancel":
        if State.turn is not None:
            State.turn["cancelled"] = True
            finish_permission_turn()
    elif mid is not None:
        fail(mid, -32601, f"Method not found: {method}")

if "--ignore-eof" in sys.argv:
    while True:
        time.sleep(60)
