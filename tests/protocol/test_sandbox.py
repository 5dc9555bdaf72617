"""The confinement layer: Landlock's ABI differences (against a recording libc, below the
layer), the supervisor's options and its refusal to run anything it could not confine
(against the real kernel), and how a confinement describes itself."""

from __future__ import annotations

import ctypes
import errno
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acp_notebook.protocol import landlock
from acp_notebook.protocol.process import SUPERVISED, SUPERVISOR
from acp_notebook.protocol.sandbox import Confinement, Mechanism, confinement, mechanism

from ..conftest import in_ci


class RecordingLibc:
    """A libc whose Landlock syscalls answer as a kernel of ABI ``version`` would and
    record what they were asked."""

    def __init__(self, version: int) -> None:
        self.version = version
        self.syscall = self._syscall
        self.handled: tuple[int, int] | None = None
        self.ruleset_size = 0
        self.rules: list[tuple[int, int]] = []  # (rule type, allowed access)
        self.restricted = False

    def _syscall(self, number: Any, *args: Any) -> int:
        call = number.value
        if call == landlock.SYS_CREATE_RULESET and args[0] is None:
            return self.version
        if call == landlock.SYS_CREATE_RULESET:
            attr = args[0]._obj
            self.ruleset_size = args[1].value
            self.handled = (attr.handled_access_fs, attr.handled_access_net)
            return 99
        if call == landlock.SYS_ADD_RULE:
            self.rules.append((args[1].value, args[2]._obj.allowed_access))
            return 0
        if call == landlock.SYS_RESTRICT_SELF:
            self.restricted = True
            return 0
        raise AssertionError(call)

    def prctl(self, *args: int) -> int:
        return 0


@pytest.fixture
def no_close(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recording libc hands out ruleset fd 99, which is not ours to close."""
    real_close = landlock.os.close
    monkeypatch.setattr(landlock.os, "close", lambda fd: None if fd == 99 else real_close(fd))


@pytest.mark.parametrize(
    ("version", "refer", "truncate"), [(1, False, False), (2, True, False), (3, True, True)]
)
def test_only_the_rights_the_kernel_knows_are_handled(no_close, tmp_path, version, refer, truncate):
    libc = RecordingLibc(version)
    assert landlock.confine([str(tmp_path)], libc=libc) == version  # type: ignore[arg-type]
    assert libc.handled is not None
    fs, net = libc.handled
    assert bool(fs & landlock.REFER) == refer and bool(fs & landlock.TRUNCATE) == truncate
    assert fs & landlock.WRITE_FILE and net == 0
    # Without network rules the ruleset is the ABI 1 struct, which every kernel reads.
    assert libc.ruleset_size == ctypes.sizeof(ctypes.c_uint64)
    assert libc.rules == [(landlock.RULE_PATH_BENEATH, fs)] and libc.restricted


def test_a_file_is_granted_only_the_file_rights(no_close, tmp_path):
    state = tmp_path / "agent.json"
    state.write_text("{}")
    libc = RecordingLibc(7)
    landlock.confine([str(state), str(tmp_path / "missing")], libc=libc)  # type: ignore[arg-type]
    assert libc.rules == [(landlock.RULE_PATH_BENEATH, landlock.WRITE_FILE | landlock.TRUNCATE)]


def test_network_rules_are_refused_before_abi_4_and_made_per_port_after(no_close):
    with pytest.raises(landlock.LandlockError, match="no network rules"):
        landlock.confine([], connect_ports=[443], libc=RecordingLibc(3))  # type: ignore[arg-type]
    libc = RecordingLibc(4)
    landlock.confine([], connect_ports=[443, 8080], libc=libc)  # type: ignore[arg-type]
    assert libc.handled is not None and libc.handled[1] == landlock.CONNECT_TCP
    assert libc.ruleset_size == 16
    assert libc.rules == [(landlock.RULE_NET_PORT, landlock.CONNECT_TCP)] * 2


needs_landlock = pytest.mark.skipif(
    not SUPERVISED or (mechanism().name != "landlock" and not in_ci()),
    reason="needs Linux with Landlock",
)


def supervise(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-S", "-I", SUPERVISOR, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


@needs_landlock
def test_the_supervisor_confines_its_child_to_the_places_it_was_given(tmp_path: Path):
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    script = f"echo a > {inside}/a; echo b > {outside}/b"
    done = supervise(
        "--landlock", "--write", str(inside), str(os.getpid()), "/bin/sh", "-c", script
    )
    assert (inside / "a").exists() and not (outside / "b").exists()
    assert "Permission denied" in done.stderr and done.returncode != 0


@needs_landlock
def test_a_confinement_the_kernel_refuses_runs_nothing(tmp_path: Path):
    marker = tmp_path / "ran"
    done = supervise(
        "--landlock", "--offline", "--port", "70000", str(os.getpid()), "touch", str(marker)
    )
    assert done.returncode == 126 and not marker.exists()
    assert done.stderr.startswith("The sandbox could not be applied (")
    assert errno.errorcode[errno.EINVAL] in done.stderr or "Invalid argument" in done.stderr


LANDLOCK = Mechanism("landlock", 7)


def test_the_header_says_where_the_agent_may_write_and_whether_it_may_connect():
    project = Confinement("workspace", ("/home/me/project",), mechanism=LANDLOCK)
    assert project.describe() == "confined to `project/` · network on"
    two = project.with_roots(["/data", "/more"])
    assert two.describe() == "confined to `project/` and 2 more folders · network on"
    offline = Confinement("workspace-offline", ("/p",), ports=(443,), mechanism=LANDLOCK)
    assert offline.describe() == "confined to `p/` · network off but TCP port 443"
    old = Confinement("workspace-offline", ("/p",), mechanism=Mechanism("landlock", 3))
    assert old.describe() == "confined to `p/` · network on (Landlock ABI 3 has no network rules)"
    assert "--offline" not in old.supervisor_args()
    assert Confinement("off", ("/p",), mechanism=LANDLOCK).describe().startswith("unconfined")
    missing = Confinement("workspace", ("/p",), mechanism=Mechanism("none"))
    assert missing.describe().startswith("unconfined: this kernel has no Landlock")
    assert missing.supervisor_args() == []


def test_read_only_keeps_temp_and_the_agents_own_files_writable_but_not_the_folder():
    read_only = Confinement("read-only", ("/p",), state=("/home/me/.agent",), mechanism=LANDLOCK)
    assert "/p" not in read_only.writable
    assert "/tmp" in read_only.writable and "/home/me/.agent" in read_only.writable


def test_an_agents_state_directory_is_made_so_it_can_use_it(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    made = confinement("workspace", [str(tmp_path / "p")], state=["~/.agent/", "~/.agent.json"])
    if made.mechanism.name != "none":
        assert (tmp_path / ".agent").is_dir()
    assert not (tmp_path / ".agent.json").exists()
    assert made.state == (str(tmp_path / ".agent"), str(tmp_path / ".agent.json"))
    with pytest.raises(ValueError, match="The sandbox is one of workspace, read-only"):
        confinement("open", ["/p"])
