"""A stdlib-only agent that wants a login and refuses every one with an HTML message.

``initialize`` offers one agent-handled auth method (``web``); ``session/new`` answers
``auth_required`` (-32000); ``authenticate`` fails with a message that is HTML, so a
client that shows it unescaped would run the agent's markup. With ``--hang``,
``authenticate`` is never answered (a browser login waiting for its callback).
"""

import json
import sys

ERROR_HTML = "<img src=x onerror=alert(1)>Bad <b>token</b>"


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def error(request_id, code, message):
    send({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})


for line in sys.stdin:
    request = json.loads(line)
    method, request_id = request.get("method"), request.get("id")
    if request_id is None:
        continue
    if method == "initialize":
        result = {
            "protocolVersion": 1,
            "agentCapabilities": {},
            "authMethods": [{"id": "web", "name": "Web login"}],
        }
        send({"jsonrpc": "2.0", "id": request_id, "result": result})
    elif method == "session/new":
        error(request_id, -32000, "Log in first.")
    elif method == "authenticate":
        if "--hang" not in sys.argv:
            error(request_id, -32603, ERROR_HTML)
    else:
        error(request_id, -32601, f"{method} is not supported here.")
