"""The least an ACP client can do for one turn, stdlib only (the baseline of the CLI and
first-turn rows): start the agent, ``initialize``, ``session/new``, ``session/prompt``, read
until the prompt's response, answer nothing else. ``python stdlib_client.py PROMPT AGENT...``"""

import json
import os
import subprocess
import sys


def turn(agent: list[str], prompt: str) -> str:
    """The stop reason of one prompt turn of a fresh ``agent``."""
    proc = subprocess.Popen(agent, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None

    def call(id_: int, method: str, params: dict) -> dict:
        message = {"jsonrpc": "2.0", "id": id_, "method": method, "params": params}
        proc.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        proc.stdin.flush()  # type: ignore[union-attr]
        for line in proc.stdout:  # type: ignore[union-attr]
            reply = json.loads(line)
            if reply.get("id") == id_ and "method" not in reply:
                return reply["result"]
        raise EOFError("the agent closed its output")

    call(0, "initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    session = call(1, "session/new", {"cwd": os.getcwd(), "mcpServers": []})["sessionId"]
    prompt_params = {"sessionId": session, "prompt": [{"type": "text", "text": prompt}]}
    stop = call(2, "session/prompt", prompt_params)["stopReason"]
    proc.stdin.close()
    proc.wait()
    return stop


if __name__ == "__main__":
    print(turn(sys.argv[2:], sys.argv[1]))
