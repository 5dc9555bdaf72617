"""A recorded trace replays as an agent: the same conversation, against a live client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

UTILS = "def add(a, b):\n    return a + b\n"


def acp(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "acp_notebook", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


def test_a_recorded_edit_replays_to_the_same_transcript_and_edit(tmp_path: Path) -> None:
    (tmp_path / "utils.py").write_text(UTILS)
    trace = tmp_path / "trace.jsonl"
    recorded = acp(
        "run", "--permissions", "allow", "--trace", str(trace), "/edit utils.py", cwd=tmp_path
    )
    assert recorded.returncode == 0, recorded.stderr
    edited = (tmp_path / "utils.py").read_text()
    assert edited != UTILS

    (tmp_path / "utils.py").write_text(UTILS)
    replay = f"{sys.executable} -m acp_notebook replay-agent {trace}"
    replayed = acp(
        "run", "--agent", replay, "--permissions", "allow", "/edit utils.py", cwd=tmp_path
    )
    assert replayed.returncode == 0, replayed.stderr
    assert replayed.stdout == recorded.stdout
    # The replayed agent asked this client to write the file again, and it did.
    assert (tmp_path / "utils.py").read_text() == edited


def test_the_replay_follows_the_live_client_ids_and_reports_surprises(tmp_path: Path) -> None:
    init = {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {"protocolVersion": 1}}
    answer = {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"protocolVersion": 1, "agentCapabilities": {}, "authMethods": []},
    }
    load = {"jsonrpc": "2.0", "id": 8, "method": "session/load", "params": {}}
    steps = [
        {"direction": "send", "time": 1.0, "message": init},
        {"direction": "recv", "time": 1.1, "invalid": "this line is not JSON"},
        {"direction": "recv", "time": 1.2, "message": answer},
        {"direction": "send", "time": 2.0, "message": load},
    ]
    trace = tmp_path / "trace.jsonl"
    trace.write_text("".join(json.dumps(s) + "\n" for s in steps))
    client = [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "session/new",
            "params": {"cwd": str(tmp_path), "mcpServers": []},
        },
    ]
    result = subprocess.run(
        [sys.executable, "-m", "acp_notebook", "replay-agent", str(trace)],
        input="".join(json.dumps(c) + "\n" for c in client),
        capture_output=True,
        text=True,
        timeout=60,
    )
    lines = result.stdout.splitlines()
    assert lines[0] == "this line is not JSON"  # malformed output is replayed too
    first = json.loads(lines[1])
    assert first["id"] == 0 and first["result"]["protocolVersion"] == 1  # the live id, not 7
    second = json.loads(lines[2])
    assert second["id"] == 1 and "expected session/load" in second["error"]["message"]
    assert "expected session/load, got session/new" in result.stderr


def test_a_trace_that_cannot_be_read_is_one_sentence(tmp_path: Path) -> None:
    result = acp("replay-agent", "missing.jsonl", cwd=tmp_path)
    assert result.returncode != 0
    assert result.stderr.strip() == (
        "replay-agent: cannot read the trace missing.jsonl: No such file or directory"
    )
