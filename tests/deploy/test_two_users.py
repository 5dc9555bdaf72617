"""Two users on one machine (as on a JupyterHub with a local spawner): what one user's
notebook runs and keeps is not the other's to use. User A is the test's own user, running
a real kernel whose ``%acp`` turn used the notebook tools and saved a trace; user B is a
system user made for the test, whose probe (stdlib Python, run with ``setpriv``) tries
A's relay socket, A's state directory and trace, and signals A's agent.

A's state directory lies under a home-like folder anyone may enter (0755, as homes are on
many systems), so only acp_notebook's own modes keep B out.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import skip_or_fail
from ..kernel.conftest import SAFETY, Kernel
from .processes import descendants, endpoints

OTHER = "acp-nb-other"

#: What B tries; each answers "refused" or what it got.
PROBE = r"""
import json, os, socket, sys
socket_path, state, trace, agent = sys.argv[1:5]
out = {}
def attempt(name, action):
    try:
        out[name] = action()
    except PermissionError:
        out[name] = "refused"
def connect():
    s = socket.socket(socket.AF_UNIX); s.connect(socket_path); return "connected"
def walk():
    # Listing a folder is reading it too: the notebooks' and sessions' names are A's.
    listed = []
    for root, dirs, files in os.walk(state):  # what cannot be listed is left out
        listed += [os.path.relpath(os.path.join(root, n), state) for n in dirs + files]
    return sorted(listed) or "refused"
attempt("socket", connect)
attempt("state", walk)
attempt("trace", lambda: open(trace).read()[:40])
attempt("signal", lambda: (os.kill(int(agent), 0), "signalled")[1])
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def other_user() -> str:
    """User B (made if missing: the test must run as root to have two users)."""
    if os.geteuid() != 0:
        skip_or_fail("two users need root, to make the second one and run as it")
    if shutil.which("setpriv") is None:
        skip_or_fail("setpriv (util-linux) is not installed")
    try:
        pwd.getpwnam(OTHER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", OTHER],
            check=True,
        )
    return OTHER


@pytest.fixture
def kernel_of_a(monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    # Not under pytest's own temp folder, which only its user may enter.
    home = Path(tempfile.mkdtemp(prefix="acp-nb-home-"))
    try:
        (home / ".local" / "state").mkdir(parents=True)
        for folder in (home, home / ".local", home / ".local" / "state"):
            folder.chmod(0o755)
        monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local" / "state"))
        work = home / "work"
        work.mkdir(mode=0o755)
        kernel = Kernel(work)
        try:
            yield kernel
        finally:
            kernel.shutdown()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def probe_as(user: str, *args: str) -> dict[str, object]:
    entry = pwd.getpwnam(user)
    python = "/usr/bin/python3"  # the test's interpreter may lie in a folder B cannot enter
    result = subprocess.run(
        [
            "setpriv",
            f"--reuid={entry.pw_uid}",
            f"--regid={entry.pw_gid}",
            "--clear-groups",
            python,
            "-I",
            "-c",
            PROBE,
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=SAFETY,
        cwd="/",
    )
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def test_another_user_cannot_use_the_relay_read_the_state_or_trace_or_signal_the_agent(
    other_user: str, kernel_of_a: Kernel
) -> None:
    kernel = kernel_of_a
    kernel.text("%load_ext acp_notebook")
    turn = kernel.execute("%acp -p allow /tools print('relayed')", allow_stdin=False, until="final")
    assert "relayed" in turn.plain, turn.describe()
    kernel.text("import acp_notebook; acp_notebook.messages().save('trace.jsonl')")
    pid = int(kernel.text("import os; print(os.getpid())"))
    (endpoint,) = endpoints(pid)
    agent = next(p for p in descendants(pid) if "acp_notebook.agents.demo" in p.cmdline)
    state = Path(os.environ["XDG_STATE_HOME"]) / "acp-notebook"
    assert any(state.rglob("*.json")), "A's turn left no state to protect"

    seen = probe_as(
        other_user,
        str(endpoint / "mcp.sock"),
        str(state),
        str(kernel.cwd / "trace.jsonl"),
        str(agent.pid),
    )
    assert seen == {
        "socket": "refused",
        "state": "refused",
        "trace": "refused",
        "signal": "refused",
    }
