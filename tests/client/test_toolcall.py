"""What a tool call runs, touches and fetches: read once, from its fields and rawInput,
for the rules, the risk rating, the permission prompt and both renderers."""

from __future__ import annotations

from typing import Any

from acp_notebook.client.rawinput import FileDiff, patch_paths
from acp_notebook.client.toolcall import ToolCallState
from acp_notebook.protocol import models as m

CWD = "/work/proj"


def call(kind: str = "other", title: str = "", raw: Any = None, **fields: Any) -> ToolCallState:
    state = ToolCallState("t1", 0, title=title, kind=kind, raw_input=raw)
    state.merge(m.ToolCallUpdate.parse({"toolCallId": "t1", **fields}))
    return state


def test_the_command_comes_from_raw_input_else_from_an_execute_title() -> None:
    assert call("execute", "Run", {"command": "make test"}).command == "make test"
    assert call("execute", "Run", {"cmd": ["bash", "-lc", "ls -la"]}).command == "ls -la"
    assert call("execute", "`git status`").command == "git status"
    assert call("execute", "  ").command is None
    assert call("read", "`cat a.py`").command is None, "only an execute title is a command"
    assert call("other", "", {"command": "rm x"}).command == "rm x"


def test_the_url_comes_from_raw_input_only() -> None:
    assert call("fetch", "Fetch", {"url": "https://x.org/a"}).url == "https://x.org/a"
    assert call("fetch", "https://x.org/a").url is None
    assert call("fetch", "", {"url": "  "}).url is None


def test_diffs_are_the_agents_own_else_those_derived_from_raw_input() -> None:
    raw = {"file_path": f"{CWD}/a.py", "old_string": "1", "new_string": "2"}
    derived = call("edit", "Edit", raw)
    assert derived.diffs == [FileDiff(f"{CWD}/a.py", "1", "2", derived=True)]
    own = call(
        "edit",
        "Edit",
        raw,
        content=[{"type": "diff", "path": f"{CWD}/b.py", "oldText": None, "newText": "x"}],
    )
    assert own.diffs == [FileDiff(f"{CWD}/b.py", None, "x")]
    assert own.diffs[0].new_file and not own.diffs[0].derived


def test_paths_name_every_file_once_in_order() -> None:
    patch = "--- a/c.py\n+++ b/c.py\n@@ -1 +1 @@\n-a\n+b\n"
    state = call(
        "edit",
        "Edit",
        {"path": f"{CWD}/b.py", "changes": {f"{CWD}/d.py": {"unified_diff": patch}}},
        content=[{"type": "diff", "path": f"{CWD}/a.py", "newText": "x"}],
        locations=[{"path": f"{CWD}/b.py", "line": 3}, {"path": f"{CWD}/a.py"}],
    )
    assert state.paths == [f"{CWD}/a.py", f"{CWD}/b.py", f"{CWD}/d.py", "c.py"]


def test_patch_paths_read_unified_diffs_and_apply_patch_bodies() -> None:
    unified = "--- a/x.py\t2024-01-01\n+++ b/y.py\n@@ -1 +1 @@\n--- not a header\n+b\n"
    assert patch_paths(unified) == ["x.py", "y.py"]
    assert patch_paths("--- /dev/null\n+++ b/new.txt\n") == ["new.txt"]
    codex = "*** Begin Patch\n*** Add File: n.md\n*** Update File: u.py\n*** Move to: v.py\n"
    assert patch_paths(codex + "*** Delete File: d.py\n*** End Patch") == [
        "n.md",
        "u.py",
        "v.py",
        "d.py",
    ]


def test_terminal_ids_are_the_embedded_terminals() -> None:
    state = call(
        "execute",
        content=[
            {"type": "terminal", "terminalId": "term-1"},
            {"type": "content", "content": {"type": "text", "text": "x"}},
            {"type": "terminal", "terminalId": "term-2"},
        ],
    )
    assert state.terminal_ids == ["term-1", "term-2"]
