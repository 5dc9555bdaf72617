"""TerminalManager: background commands, output limits, kill/release, cleanup on close."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from acp_notebook.client.terminals import DEFAULT_MAX_TERMINALS, TerminalManager
from acp_notebook.protocol import models as m
from acp_notebook.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    RESOURCE_NOT_FOUND,
    RpcError,
)
from acp_notebook.protocol.process import session_members

from .helpers import SAFETY

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX"),
    pytest.mark.timeout(60),
]


@pytest.fixture
async def terminals(root: Path) -> AsyncIterator[TerminalManager]:
    async with TerminalManager([root], root, kill_grace=1.0) as manager:
        yield manager


async def create(manager: TerminalManager, command: str, *args: str, **extra: Any) -> str:
    """``terminal/create`` as the agent sends it (wire params); the new terminal's id."""
    params: dict[str, Any] = {"sessionId": "s", "command": command, **extra}
    if args:
        params["args"] = list(args)
    result = await manager.create(params)
    assert result.to_wire() == {"terminalId": result.terminal_id}
    return result.terminal_id


def ref(terminal_id: str) -> dict[str, Any]:
    return {"sessionId": "s", "terminalId": terminal_id}


async def output(manager: TerminalManager, terminal_id: str) -> dict[str, Any]:
    """``terminal/output``'s answer as it goes on the wire."""
    return (await manager.output(ref(terminal_id))).to_wire()


async def exit_status(manager: TerminalManager, terminal_id: str) -> dict[str, Any]:
    """``terminal/wait_for_exit``'s answer as it goes on the wire."""
    return (await manager.wait_for_exit(ref(terminal_id))).to_wire()


async def run(manager: TerminalManager, command: str, *args: str, **extra: Any) -> dict[str, Any]:
    """Create, wait for exit, and return terminal/output."""
    terminal_id = await create(manager, command, *args, **extra)
    await manager.wait_for_exit(ref(terminal_id))
    return await output(manager, terminal_id)


async def test_create_returns_while_the_command_still_runs(terminals: TerminalManager) -> None:
    terminal_id = await create(terminals, "sleep 2; echo done")  # shell syntax, no args
    first = await output(terminals, terminal_id)
    assert first == {"output": "", "truncated": False}  # no exitStatus: still running
    assert await exit_status(terminals, terminal_id) == {"exitCode": 0, "signal": None}
    assert await output(terminals, terminal_id) == {
        "output": "done\n",
        "truncated": False,
        "exitStatus": {"exitCode": 0, "signal": None},
    }


async def test_ids_are_deterministic_and_unique(terminals: TerminalManager) -> None:
    ids = [await create(terminals, "true") for _ in range(3)]
    assert ids == ["term-1", "term-2", "term-3"]
    assert terminals.terminal_ids == ids


async def test_stdout_and_stderr_are_merged_in_order_with_exit_code(
    terminals: TerminalManager,
) -> None:
    result = await run(
        terminals, "sh", "-c", "echo out; sleep 0.1; echo err >&2; sleep 0.1; echo out2; exit 3"
    )
    assert result == {
        "output": "out\nerr\nout2\n",
        "truncated": False,
        "exitStatus": {"exitCode": 3, "signal": None},
    }


async def test_args_are_passed_without_a_shell(terminals: TerminalManager) -> None:
    result = await run(terminals, "printf", "%s|", "a b", "$HOME", "*")
    assert result["output"] == "a b|$HOME|*|"


async def test_shell_syntax_without_args_goes_through_sh(terminals: TerminalManager) -> None:
    result = await run(terminals, "echo one | tr a-z A-Z && echo $((1 + 2))")
    assert result["output"] == "ONE\n3\n"


async def test_missing_command_is_resource_not_found(terminals: TerminalManager) -> None:
    with pytest.raises(RpcError) as error:
        await create(terminals, "definitely-not-a-command-acp")
    assert error.value.code == RESOURCE_NOT_FOUND
    assert "definitely-not-a-command-acp" in error.value.message


async def test_kill_reports_the_signal_and_keeps_the_terminal_readable(
    terminals: TerminalManager,
) -> None:
    terminal_id = await create(terminals, "sh", "-c", "echo started; exec sleep 30")
    with anyio.fail_after(SAFETY):
        while (await output(terminals, terminal_id))["output"] != "started\n":
            await anyio.sleep(0.02)
    assert (await terminals.kill(ref(terminal_id))).to_wire() == {}
    status = await exit_status(terminals, terminal_id)
    assert status["exitCode"] is None
    assert status["signal"] in ("SIGTERM", "SIGKILL")
    after = await output(terminals, terminal_id)
    assert after["output"] == "started\n"
    assert after["exitStatus"] == status
    # Killing again is harmless.
    assert (await terminals.kill(ref(terminal_id))).to_wire() == {}


async def test_kill_escalates_to_sigkill(terminals: TerminalManager) -> None:
    terminal_id = await create(
        terminals, "sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.1; done"
    )
    with anyio.fail_after(SAFETY):
        while not (await output(terminals, terminal_id))["output"]:
            await anyio.sleep(0.02)
    await terminals.kill(ref(terminal_id))
    assert await exit_status(terminals, terminal_id) == {
        "exitCode": None,
        "signal": "SIGKILL",
    }


def _is_suffix_valid_utf8(retained: str, full: bytes, limit: int) -> None:
    data = retained.encode("utf-8")
    data.decode("utf-8", errors="strict")
    assert len(data) <= limit
    assert full.endswith(data)
    # spec: at most one character's worth (< 4 bytes) below the limit.
    assert len(data) > limit - 4


@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 7, 11, 50, 101, 200, 246])
async def test_output_limit_drops_the_beginning_at_a_character_boundary(
    terminals: TerminalManager, limit: int
) -> None:
    text = "aé€" * 40 + "é€é"  # 1, 2 and 3-byte characters; the limits fall inside them
    full = text.encode("utf-8")
    result = await run(terminals, "printf", "%s", text, outputByteLimit=limit)
    assert result["truncated"] is True
    _is_suffix_valid_utf8(result["output"], full, limit)


async def test_limit_applies_across_many_reads(terminals: TerminalManager) -> None:
    # Many writes, so truncation happens repeatedly as chunks arrive.
    script = "i=0; while [ $i -lt 300 ]; do printf 'é€%s' $i; i=$((i+1)); done"
    expected = "".join(f"é€{i}" for i in range(300)).encode()
    result = await run(terminals, "sh", "-c", script, outputByteLimit=64)
    assert result["truncated"] is True
    _is_suffix_valid_utf8(result["output"], expected, 64)


async def test_output_under_the_limit_is_not_truncated(terminals: TerminalManager) -> None:
    result = await run(terminals, "printf", "%s", "é€", outputByteLimit=5)
    assert result["output"] == "é€"
    assert result["truncated"] is False


async def test_zero_limit_keeps_nothing(terminals: TerminalManager) -> None:
    result = await run(terminals, "printf", "abc", outputByteLimit=0)
    assert result["output"] == ""
    assert result["truncated"] is True


async def test_hard_cap_applies_without_a_limit(root: Path) -> None:
    async with TerminalManager([root], root, max_output_bytes=10) as manager:
        result = await run(manager, "printf", "%s", "0123456789abcdef")
    assert result["output"] == "6789abcdef"
    assert result["truncated"] is True


async def test_multibyte_character_split_across_reads_comes_out_whole(
    terminals: TerminalManager,
) -> None:
    # '€' is \342\202\254; the pause makes the two halves arrive in separate reads.
    result = await run(
        terminals, "sh", "-c", r"printf '\342'; sleep 0.3; printf '\202\254 \377 end'"
    )
    assert result["output"] == "€ \ufffd end"


async def test_incomplete_last_character_is_replaced(terminals: TerminalManager) -> None:
    result = await run(terminals, "sh", "-c", r"printf 'ok\342\202'")
    assert result["output"] == "ok\ufffd"


async def test_release_invalidates_the_id_but_snapshot_keeps_the_output(
    terminals: TerminalManager, root: Path
) -> None:
    terminal_id = await create(terminals, "echo hi")
    await exit_status(terminals, terminal_id)
    assert (await terminals.release(ref(terminal_id))).to_wire() == {}
    for call in (terminals.output, terminals.wait_for_exit, terminals.kill, terminals.release):
        with pytest.raises(RpcError) as error:
            await call(ref(terminal_id))
        assert error.value.code == INVALID_PARAMS
        assert "released" in error.value.message
    snap = terminals.snapshot(terminal_id)
    assert snap.output == "hi\n"
    assert snap.released is True
    assert snap.exit_code == 0
    assert snap.signal is None
    assert snap.command == "echo hi"
    assert snap.cwd == os.path.realpath(root)


async def test_release_kills_a_running_command(terminals: TerminalManager) -> None:
    terminal_id = await create(terminals, "sleep", "30")
    pid = terminals.snapshot(terminal_id).pid
    assert pid is not None
    await terminals.release(ref(terminal_id))
    snap = terminals.snapshot(terminal_id)
    assert snap.exited and snap.exit_code is None and snap.signal == "SIGTERM"
    assert snap.command == "sleep 30"
    assert session_members(pid) == []


async def test_unknown_ids_are_invalid_params(terminals: TerminalManager) -> None:
    for call in (terminals.output, terminals.wait_for_exit, terminals.kill, terminals.release):
        with pytest.raises(RpcError) as error:
            await call(ref("term-99"))
        assert error.value.code == INVALID_PARAMS
        assert "term-99" in error.value.message
    with pytest.raises(KeyError):
        terminals.snapshot("term-99")


async def test_cwd_must_be_absolute_and_inside_the_roots(
    terminals: TerminalManager, root: Path, tmp_path: Path
) -> None:
    sibling = tmp_path / "root2"
    sibling.mkdir()
    (root / "link-out").symlink_to(tmp_path, target_is_directory=True)
    for cwd in ("/", str(tmp_path), str(sibling), str(root / ".."), str(root / "link-out")):
        with pytest.raises(RpcError) as error:
            await create(terminals, "touch", "created-here", cwd=cwd)
        assert error.value.code == INVALID_PARAMS
        assert "outside the session's directories" in error.value.message
    with pytest.raises(RpcError) as error:
        await create(terminals, "pwd", cwd="sub")
    assert error.value.code == INVALID_PARAMS
    assert "absolute" in error.value.message
    assert not (tmp_path / "created-here").exists()
    assert not (sibling / "created-here").exists()
    assert terminals.terminal_ids == []


async def test_cwd_inside_the_roots_and_default(terminals: TerminalManager, root: Path) -> None:
    (root / "sub").mkdir()
    real = os.path.realpath(root)
    assert (await run(terminals, "pwd", cwd=str(root / "sub")))["output"] == f"{real}/sub\n"
    assert (await run(terminals, "pwd"))["output"] == f"{real}\n"
    with pytest.raises(RpcError) as error:
        await create(terminals, "pwd", cwd=str(root / "missing"))
    assert error.value.code == RESOURCE_NOT_FOUND


async def test_env_variables_reach_the_command(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACP_FROM_KERNEL", "kernel")
    monkeypatch.setenv("ACP_OVERRIDDEN", "kernel")
    async with TerminalManager([root], root, env={"ACP_FROM_MANAGER": "manager"}) as manager:
        result = await run(
            manager,
            "sh",
            "-c",
            'printf "%s %s %s %s" "$ACP_FROM_KERNEL" "$ACP_FROM_MANAGER" "$ACP_OVERRIDDEN" "$ACP_NEW"',
            env=[
                {"name": "ACP_OVERRIDDEN", "value": "agent"},
                {"name": "ACP_NEW", "value": "with spaces = and é"},
            ],
        )
    assert result["output"] == "kernel manager agent with spaces = and é"


@pytest.mark.parametrize(
    "params",
    [
        {"command": ""},
        {"command": 5},
        {"command": "echo", "args": "hi"},
        {"command": "echo", "args": [1]},
        {"command": "echo", "env": {"A": "1"}},
        {"command": "echo", "env": [{"name": "A"}]},
        {"command": "echo", "env": [{"name": "A=B", "value": "1"}]},
        {"command": "echo", "outputByteLimit": -1},
        {"command": "echo", "outputByteLimit": "10"},
        {"command": "echo", "cwd": 3},
    ],
)
async def test_malformed_params_are_invalid_params(
    terminals: TerminalManager, params: dict[str, Any]
) -> None:
    with pytest.raises(RpcError) as error:
        await terminals.create({"sessionId": "s", **params})
    assert error.value.code == INVALID_PARAMS
    assert terminals.terminal_ids == []


async def test_on_output_is_called_for_output_and_exit(root: Path) -> None:
    calls: list[str] = []
    async with TerminalManager([root], root, on_output=calls.append) as manager:
        terminal_id = await create(manager, "sh", "-c", "echo a; sleep 0.2; echo b")
        await manager.wait_for_exit(ref(terminal_id))
    assert len(calls) >= 3  # "a", "b", exit
    assert set(calls) == {terminal_id}


async def test_closing_the_manager_kills_the_whole_process_group(root: Path) -> None:
    async with TerminalManager([root], root, kill_grace=1.0) as manager:
        terminal_id = await create(manager, "sh", "-c", "sleep 30 & sleep 30 & wait")
        pid = manager.snapshot(terminal_id).pid
        assert pid is not None
        with anyio.fail_after(SAFETY):
            while len(session_members(pid)) < 3:  # sh and both sleeps are up
                await anyio.sleep(0.02)
    assert session_members(pid) == []
    snap = manager.snapshot(terminal_id)
    assert snap.exited and snap.signal in ("SIGTERM", "SIGKILL")
    with pytest.raises(RpcError):  # closed: no new commands
        await create(manager, "true")


async def test_kill_reaches_children_that_outlive_the_shell(terminals: TerminalManager) -> None:
    # The shell exits at once; its background child keeps running in the group.
    terminal_id = await create(terminals, "sh", "-c", "sleep 30 & echo bg")
    pid = terminals.snapshot(terminal_id).pid
    assert pid is not None
    assert await exit_status(terminals, terminal_id) == {"exitCode": 0, "signal": None}
    assert session_members(pid) != []
    await terminals.kill(ref(terminal_id))
    assert session_members(pid) == []
    assert (await output(terminals, terminal_id))["output"] == "bg\n"


async def test_a_pending_wait_for_exit_ends_when_the_manager_closes(root: Path) -> None:
    results: list[m.WaitForTerminalExitResponse] = []
    async with TerminalManager([root], root, kill_grace=1.0) as manager:
        terminal_id = await create(manager, "sleep", "30")
        async with anyio.create_task_group() as group:

            async def waiter() -> None:
                results.append(await manager.wait_for_exit(ref(terminal_id)))

            group.start_soon(waiter)
            await anyio.wait_all_tasks_blocked()  # the waiter is waiting
            await manager.aclose()
    assert results and results[0].signal == "SIGTERM"


async def test_a_path_with_spaces_is_run_directly(terminals: TerminalManager, root: Path) -> None:
    script = root / "my tool"
    script.write_text("#!/bin/sh\necho tool ran\n")
    script.chmod(0o755)
    assert (await run(terminals, str(script)))["output"] == "tool ran\n"


async def test_a_create_over_the_limit_is_refused_until_a_terminal_is_released(
    terminals: TerminalManager,
) -> None:
    held = [await create(terminals, "true") for _ in range(DEFAULT_MAX_TERMINALS)]
    with pytest.raises(RpcError) as error:
        await create(terminals, "true")
    assert error.value.code == INTERNAL_ERROR
    assert error.value.message == (
        "This session already has 32 terminals, its limit; release one with "
        "`terminal/release` (its output stays shown) before creating another."
    )
    assert error.value.data == {"maxTerminals": 32, "terminalIds": held}
    await terminals.release(ref(held[0]))
    assert (await exit_status(terminals, await create(terminals, "true")))["exitCode"] == 0


async def test_the_terminal_limit_is_configurable_and_counts_running_creates(root: Path) -> None:
    async with TerminalManager([root], root, max_terminals=2) as manager:
        results = []

        async def attempt() -> None:
            try:
                results.append(await create(manager, "sleep", "30"))
            except RpcError as exc:
                results.append(exc.message)

        async with anyio.create_task_group() as group:  # three at once: one is refused
            for _ in range(3):
                group.start_soon(attempt)
        assert sorted(result.startswith("term-") for result in results) == [False, True, True]
        assert any("already has 2 terminals" in result for result in results)


async def test_releasing_an_ended_command_leaves_its_exit_status_to_the_event_loop(
    terminals: TerminalManager, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A process that has exited but is not yet reaped by asyncio's child watcher (its
    thread blocks in ``waitpid``) must not be reaped by the client: ``Popen.send_signal``
    polls first, took the status, and the watcher then logged "Unknown child process pid
    …, will report returncode 255" (seen on the CLI's stderr). The watcher is slowed here
    so the window is wide open."""
    real_waitpid = os.waitpid
    slowed: list[int] = []

    def slow_watcher(pid: int, options: int) -> tuple[int, int]:
        if options == 0 and threading.current_thread() is not threading.main_thread():
            slowed.append(pid)
            time.sleep(0.5)
        return real_waitpid(pid, options)

    monkeypatch.setattr(os, "waitpid", slow_watcher)
    terminal_id = await create(terminals, "echo", "hi")
    assert (await exit_status(terminals, terminal_id)) == {"exitCode": 0, "signal": None}
    pid = terminals.snapshot(terminal_id).pid
    assert pid is not None
    while Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z":
        await anyio.sleep(0.01)  # ended, not yet reaped: the window
    await terminals.release(ref(terminal_id))
    assert slowed, "the child watcher was not slowed: the window was not opened"
    assert "Unknown child process" not in caplog.text
    snap = terminals.snapshot(terminal_id)
    assert (snap.exit_code, snap.signal, snap.output) == (0, None, "hi\n")
