"""`acp-notebook run -a codex --auth openai-api-key …` against the real codex-acp 0.16.0
(npm `@zed-industries/codex-acp`), which offers that method as ``{"type": "env_var", …}``,
a type the schema does not know: the client must still choose it by id (issue 13).

A fake OPENAI_API_KEY is enough: the test only needs `authenticate` to succeed and
`session/new` to answer; the prompt that follows cannot reach OpenAI and is not checked.
Skipped, with the reason, where npm is missing or the package cannot be installed; under
``CI=true`` that fails instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .npm import npm_agents

pytestmark = pytest.mark.slow

PACKAGE = "@zed-industries/codex-acp@0.16.0"


@pytest.fixture(scope="module")
def codex_acp() -> Path:
    return npm_agents("npm-codex", [PACKAGE], ["codex-acp"]) / "codex-acp"


def answers(trace: Path, method: str) -> list[dict[str, Any]]:
    """The answers the agent gave to the client's ``method`` requests, from a --trace file."""
    records = [json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines()]
    asked = {
        r["message"]["id"]
        for r in records
        if r["direction"] == "send" and r["message"].get("method") == method
    }
    return [
        r["message"]
        for r in records
        if r["direction"] == "recv"
        and "method" not in r["message"]
        and r["message"].get("id") in asked
    ]


def test_run_with_codex_authenticates_with_the_env_var_method_and_reaches_session_new(
    codex_acp: Path, tmp_path: Path
) -> None:
    trace = tmp_path / "trace.jsonl"
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "OPENAI_API_KEY": "sk-fake-for-the-test",
        "NO_COLOR": "1",
    }
    env.pop("CODEX_API_KEY", None)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "acp_notebook",
            "run",
            "--agent",
            str(codex_acp),
            "--auth",
            "openai-api-key",
            "--trace",
            str(trace),
            "--timeout",
            "5",
            "--cancel-grace",
            "2",
            "say hi",
        ],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
        env=env,
    )
    details = result.stdout + result.stderr
    initialize = answers(trace, "initialize")
    offered = [m["id"] for m in initialize[0]["result"]["authMethods"]]
    assert "openai-api-key" in offered, details
    authenticated = answers(trace, "authenticate")
    assert authenticated and "result" in authenticated[0], details
    session = answers(trace, "session/new")
    assert session and session[0]["result"]["sessionId"], details
    assert "did not offer the auth method" not in details
