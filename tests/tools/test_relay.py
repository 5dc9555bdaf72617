"""The relay: the agent's stdio MCP server that pipes to the kernel's private socket.

It proves itself with the secret from the token file (a wrong one is refused), the
secret is in neither its command line nor its environment, and when the kernel shuts
down the relay exits and the private directory is gone.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.notebook.tools.endpoint import RelayEndpoint
from tests.kernel.conftest import ROOT, SAFETY, Kernel, _start
from tests.tools.helpers import (
    McpAgent,
    kernel_value,
    relay_processes,
    start_tools,
    token_file,
    token_of,
    wait_until,
)

pytestmark = [pytest.mark.kernel, pytest.mark.slow]


def _relay(spec: dict[str, Any], token_file: Path) -> subprocess.CompletedProcess[bytes]:
    args = list(spec["args"])
    args[args.index("--token-file") + 1] = str(token_file)
    return subprocess.run(
        [spec["command"], *args],
        input=b"",
        capture_output=True,
        timeout=SAFETY,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )


def test_a_relay_with_a_wrong_token_is_refused(
    kernel: Kernel, spec: dict[str, Any], tmp_path: Path
) -> None:
    wrong = tmp_path / "token"
    wrong.write_text("not-the-secret")
    relay = _relay(spec, wrong)
    assert relay.returncode == 1
    assert relay.stdout == b""
    assert relay.stderr.decode() == (
        "acp_notebook.mcp_relay: the kernel refused the connection: the token does not match.\n"
    )
    assert kernel_value(kernel, "_tools_server.refused") == 1


def test_the_relay_exits_when_the_agent_closes_its_stdin(spec: dict[str, Any]) -> None:
    # Connected with the right secret, then at once the end of input: the kernel ends
    # the MCP session and closes, and the relay leaves with nothing written.
    relay = _relay(spec, Path(token_file(spec)))
    assert (relay.returncode, relay.stdout, relay.stderr) == (0, b"", b"")


def test_the_endpoint_is_private_to_the_user(spec: dict[str, Any]) -> None:
    token = Path(token_file(spec))
    socket_path = Path(spec["args"][spec["args"].index("--socket") + 1])
    assert stat.S_IMODE(token.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(token.stat().st_mode) == 0o600
    assert stat.S_IMODE(socket_path.stat().st_mode) == 0o600
    assert token.parent.stat().st_uid == os.getuid()


def test_a_relay_without_its_token_file_says_so(spec: dict[str, Any], tmp_path: Path) -> None:
    relay = _relay(spec, tmp_path / "missing")
    assert relay.returncode == 1
    assert b"cannot read the token file" in relay.stderr


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc (Linux)")
def test_the_secret_is_in_neither_the_relays_command_line_nor_its_environment(
    spec: dict[str, Any], agent: McpAgent
) -> None:
    token = token_of(spec).encode()
    [pid] = relay_processes(spec)
    assert token not in Path(f"/proc/{pid}/cmdline").read_bytes()
    assert token not in Path(f"/proc/{pid}/environ").read_bytes()
    assert token.decode() not in json.dumps(spec)  # nor in what session/new carries


def test_closing_the_server_ends_its_relays_and_removes_its_endpoint(kernel: Kernel) -> None:
    other = json.loads(
        kernel.text(
            "_other = _NotebookToolsServer(_tools_loop, _tools_runner, get_ipython(), 's2', "
            "_tools_approve)\nprint(json.dumps(_other.start()))"
        )
    )
    agent = McpAgent(other)
    try:
        assert "run_code" in agent.tool_names()
        kernel.text("_other.close()")
        wait_until(lambda: not relay_processes(other), "the relay to exit")
        assert not Path(token_file(other)).parent.exists()
    finally:
        agent.close()


def test_no_relay_is_left_after_the_kernel_shuts_down(tmp_path: Path) -> None:
    kernel = _start(tmp_path)
    agent = None
    try:
        spec = start_tools(kernel)
        agent = McpAgent(spec)
        assert "run_code" in agent.tool_names()
        assert len(relay_processes(spec)) == 1
        kernel.shutdown()
        # The agent still holds the relay's stdin open: only the socket closing ends it.
        wait_until(lambda: not relay_processes(spec), "the relay to exit")
        assert not Path(token_file(spec)).parent.exists()
    finally:
        if agent is not None:
            agent.close()
        kernel.shutdown()


def test_the_relay_imports_only_the_standard_library() -> None:
    code = (
        "import sys; before = set(sys.modules); import acp_notebook.mcp_relay; "
        "print(sorted(m for m in set(sys.modules) - before if m.split('.')[0] not in "
        "sys.stdlib_module_names))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=SAFETY
    ).stdout
    assert json.loads(out.replace("'", '"')) == ["acp_notebook", "acp_notebook.mcp_relay"]


def test_the_directory_of_a_kernel_killed_outright_goes_with_the_next_endpoint(
    tmp_path: Path,
) -> None:
    kernel = _start(tmp_path)
    try:
        directory = Path(token_file(start_tools(kernel))).parent
        os.kill(kernel_value(kernel, "__import__('os').getpid()"), signal.SIGKILL)
        wait_until(lambda: not kernel.km.is_alive(), "the kernel to die")
        assert directory.exists()  # left behind, with the secret in it
        RelayEndpoint().close()
        assert not directory.exists()
    finally:
        kernel.shutdown()


def test_an_over_long_line_through_the_relay_is_refused_and_the_session_goes_on(
    spec: dict[str, Any],
) -> None:
    # One unterminated 160 MB line cost the kernel 21 s of CPU and was held whole; a line
    # past the bound is now answered with an error and the next message is served.
    from acp_notebook.notebook.tools.transport import MAX_LINE_BYTES

    relay = subprocess.Popen(
        [spec["command"], *spec["args"]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert relay.stdin is not None and relay.stdout is not None
    try:
        head = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"code":"'
        relay.stdin.write(head)
        for _ in range(MAX_LINE_BYTES // (1 << 20) + 1):
            relay.stdin.write(b"x" * (1 << 20))
        relay.stdin.write(b'"}}\n')
        initialize = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "test", "version": "0"},
            },
        }
        relay.stdin.write(json.dumps(initialize).encode() + b"\n")
        relay.stdin.flush()
        refused = json.loads(relay.stdout.readline())
        answered = json.loads(relay.stdout.readline())
    finally:
        relay.kill()
        relay.wait(timeout=SAFETY)
    assert (
        refused["id"] == 1 and "longer than the notebook tools read" in refused["error"]["message"]
    )
    assert answered["id"] == 2 and answered["result"]["serverInfo"]["name"] == "notebook"
