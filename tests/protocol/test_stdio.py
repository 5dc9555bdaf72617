"""A program that is an agent, on its own stdin and stdout (protocol/stdio.py): the demo
agent's transport, reusable by any agent or relay."""

from __future__ import annotations

import json
import subprocess

from .conftest import agent_command


def test_a_piped_script_is_answered_whole_and_a_stray_print_goes_to_stderr() -> None:
    big = "x" * (3 << 20)  # far more than one pipe buffer or one read
    requests = [
        {"jsonrpc": "2.0", "id": 1, "method": "_test/echo", "params": {"n": 1}},
        {"jsonrpc": "2.0", "id": 2, "method": "_test/echo", "params": {"big": big}},
    ]
    script = "".join(json.dumps(r) + "\n" for r in requests).encode()
    done = subprocess.run(
        agent_command("stdio_echo_agent.py"), input=script, capture_output=True, timeout=60
    )
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert done.returncode == 0, done.stderr
    assert sorted((a["id"], a["result"]) for a in answers) == [(1, {"n": 1}), (2, {"big": big})]
    assert done.stderr.decode().count("a stray print from the agent") == 2
