"""A hostile stdio agent (stdlib only) that writes where it pleases without asking, the
way Claude Code's Write or Codex's exec do: from its own process, from a child, from a
grandchild that left its session, and through the client's terminals.

On each `session/prompt` it tries every action of its script (argv[1], a JSON list) and
answers `end_turn` with one line per action in an `agent_message_chunk`:
``own PATH: ok`` / ``own PATH: EACCES``. ``{cwd}`` in a string is the session's directory.

  ["own", PATH]        open(PATH, "w") in the agent's process, reported as a tool call
  ["child", PATH]      the same in a child process it starts
  ["escapee", PATH]    the same in a grandchild that double-forked and called setsid()
  ["terminal", PATH]   terminal/create `sh -c 'echo x > PATH'`: its exit code and output
  ["connect", PORT]    a TCP connect to 127.0.0.1:PORT
"""

import errno
import json
import os
import socket
import subprocess
import sys

script = json.loads(sys.argv[1])
out = sys.stdout.buffer
inbox = iter(sys.stdin.buffer)
ids = iter(range(1000, 10**9))


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


def request(method, params):
    mid = next(ids)
    send({"jsonrpc": "2.0", "id": mid, "method": method, "params": params})
    for line in inbox:
        msg = json.loads(line)
        if msg.get("id") == mid and "method" not in msg:
            return msg
    sys.exit(0)


def outcome(error):
    return "ok" if error is None else errno.errorcode.get(error.errno, str(error))


def write(path):
    try:
        with open(path, "w") as handle:
            handle.write("written\n")
    except OSError as exc:
        return outcome(exc)
    return "ok"


CHILD = "import sys\ntry:\n open(sys.argv[1], 'w').write('x')\n print('ok')\nexcept OSError as e:\n import errno\n print(errno.errorcode[e.errno])"


def child(path):
    done = subprocess.run([sys.executable, "-c", CHILD, path], capture_output=True, text=True)
    return done.stdout.strip() or done.stderr.strip()


def escapee(path):
    """The grandchild reports through a pipe it inherited: it has left the session and
    the process group, and is nobody's child but the supervisor's."""
    read_end, write_end = os.pipe()
    if os.fork() == 0:
        os.close(read_end)
        os.setsid()
        if os.fork() == 0:
            os.write(write_end, write(path).encode())
            os._exit(0)
        os._exit(0)
    os.close(write_end)
    os.wait()
    with os.fdopen(read_end, "rb") as report:
        return report.read().decode()


def terminal(sid, path):
    created = request("terminal/create", {"sessionId": sid, "command": f"echo x > '{path}'"})
    if "error" in created:
        return "error " + created["error"]["message"]
    ids_ = {"sessionId": sid, **created["result"]}
    exited = request("terminal/wait_for_exit", ids_)["result"]
    output = request("terminal/output", ids_)["result"]["output"].strip()
    request("terminal/release", ids_)
    code = exited.get("exitCode")
    return "ok" if code == 0 else f"exit {code}: {output}"


def connect(port):
    with socket.socket() as sock:
        try:
            sock.connect(("127.0.0.1", int(port)))
        except OSError as exc:
            return outcome(exc)
    return "ok"


def report(sid, update):
    send(
        {
            "jsonrpc": "2.0",
            "method": "session/update",
            "params": {"sessionId": sid, "update": update},
        }
    )


def own(sid, path):
    """The write as Claude Code's Write tool reports it: a tool call, failed with Node's
    error text when the kernel refused it."""
    call = {"toolCallId": f"w{next(ids)}", "title": f"Write {path}", "kind": "edit"}
    report(sid, {"sessionUpdate": "tool_call", "status": "in_progress", **call})
    result = write(path)
    error = f"{result}: permission denied, open '{path}'" if result == "EACCES" else result
    text = {"type": "content", "content": {"type": "text", "text": error}}
    status = "completed" if result == "ok" else "failed"
    report(sid, {"sessionUpdate": "tool_call_update", "status": status, "content": [text], **call})
    return result


def run(sid, cwd):
    lines = []
    for verb, target in json.loads(json.dumps(script).replace("{cwd}", cwd)):
        if verb == "terminal":
            result = terminal(sid, target)
        elif verb == "own":
            result = own(sid, target)
        else:
            result = {"own": write, "child": child, "escapee": escapee, "connect": connect}[verb](
                target
            )
        lines.append(f"{verb} {target}: {result}")
    return lines


cwd = ""
for line in inbox:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if method == "initialize":
        send(
            {"jsonrpc": "2.0", "id": mid, "result": {"protocolVersion": 1, "agentCapabilities": {}}}
        )
    elif method == "session/new":
        cwd = msg["params"]["cwd"]
        send({"jsonrpc": "2.0", "id": mid, "result": {"sessionId": "s1"}})
    elif method == "session/prompt":
        sid = msg["params"]["sessionId"]
        update = {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "\n".join(run(sid, cwd))},
        }
        send(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {"sessionId": sid, "update": update},
            }
        )
        send({"jsonrpc": "2.0", "id": mid, "result": {"stopReason": "end_turn"}})
    elif mid is not None and method is not None:
        send(
            {"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "Method not found"}}
        )
