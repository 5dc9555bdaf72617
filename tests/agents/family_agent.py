"""A stdlib-only agent with hard-to-kill descendants, for the shutdown tests.

Meant to run under a wrapper shell that stays alive (like ``npx``)::

    sh -c '"$0" family_agent.py; echo wrapper done' /path/to/python

The agent itself keeps running after its stdin ends. Before answering ``initialize``
it starts two grandchildren that ignore SIGTERM and stdin EOF: one in the agent's
process group, one that moved to a process group of its own (still in the session).
``initialize`` answers with every pid in ``_meta.pids`` once the grandchildren are
ready (their SIGTERM handler is installed).
"""

import json
import os
import subprocess
import sys
import time

STUBBORN = r"""
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if sys.argv[1] == "own-group":
    os.setpgid(0, 0)
sys.stdout.write("ready\n")
sys.stdout.flush()
while True:
    time.sleep(60)
"""

out = sys.stdout.buffer


def send(message):
    out.write(json.dumps(message).encode() + b"\n")
    out.flush()


children = []
for line in sys.stdin.buffer:
    if not line.strip():
        continue
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        for mode in ("same-group", "own-group"):
            child = subprocess.Popen(
                [sys.executable, "-c", STUBBORN, mode],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
            )
            child.stdout.readline()  # "ready": SIGTERM is ignored from here on
            children.append(child)
        pids = {
            "wrapper": os.getppid(),
            "agent": os.getpid(),
            "grandchildren": [c.pid for c in children],
        }
        send(
            {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "result": {"protocolVersion": 1, "_meta": {"pids": pids}},
            }
        )
    elif "id" in msg:
        send(
            {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": "Method not found"},
            }
        )

# stdin ended: a well-behaved agent would exit here; this one keeps going.
while True:
    time.sleep(60)
