"""What a tool call's ``rawInput`` says, for agents that put it only there.

``rawInput`` is free-form: each agent passes its own tool's arguments. Many agents send
an edit's ``diff`` content, some do not (or not until the call completes), so a
permission prompt would hide what is being approved. These helpers recognise the
common shapes (agent-shell#123; jupyter-ai does the same):

* ``old_string``/``new_string`` (Claude Code, Gemini CLI, Qwen Code), ``oldString``/
  ``newString`` (OpenCode), ``oldText``/``newText``, ``old_str``/``new_str``, with the
  file under ``file_path``, ``filePath``, ``path``…; a list of them under ``edits``;
* a unified diff or apply_patch text under ``diff``, ``patch`` or ``unified_diff``
  (Codex puts one per file under ``changes``, keyed by path);
* a whole new file under ``content`` when the tool kind is ``edit`` (write tools);
* the shell command under ``command`` or ``cmd`` (a string or an argv list).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..protocol import models as m

PATH_KEYS = ("file_path", "filePath", "path", "absolute_path", "file", "filename", "notebook_path")
OLD_KEYS = ("old_string", "oldString", "oldText", "old_text", "old_str")
NEW_KEYS = ("new_string", "newString", "newText", "new_text", "new_str")
PATCH_KEYS = ("diff", "patch", "unified_diff", "unifiedDiff", "input")
COMMAND_KEYS = ("command", "cmd")
#: How deep into nested rawInput to look, and how many diffs to derive at most.
MAX_DEPTH = 4
MAX_DIFFS = 20

#: The label every derived diff carries: the agent did not send it as a diff.
DERIVED_NOTE = "derived from rawInput"


@dataclass
class DerivedEdit:
    """An edit read from rawInput: either old/new text (``diff``) or a patch string."""

    label: str
    diff: m.Diff | None = None
    patch: str | None = None
    #: True when only the new content is known (a write tool): not proof of a new file.
    content_only: bool = False


def _first_str(value: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = value.get(key)
        if isinstance(found, str):
            return found
    return None


def looks_like_patch(text: str) -> bool:
    """A unified diff or an apply_patch body (not just any string under ``diff``)."""
    head = text[:20_000]
    return (
        "*** Begin Patch" in head
        or ("\n@@" in head or head.startswith("@@"))
        or ("--- " in head and "\n+++ " in head)
    )


def edits_from_raw_input(raw_input: Any, kind: str = "edit") -> list[DerivedEdit]:
    """Every edit ``raw_input`` describes, in order (empty when it describes none)."""
    return list(_walk(raw_input, None, 0, kind == "edit"))[:MAX_DIFFS]


def _walk(value: Any, path_hint: str | None, depth: int, is_edit: bool) -> Iterator[DerivedEdit]:
    if depth > MAX_DEPTH:
        return
    if isinstance(value, list):
        for item in value:
            yield from _walk(item, path_hint, depth + 1, is_edit)
        return
    if not isinstance(value, dict):
        return
    path = _first_str(value, PATH_KEYS) or path_hint
    old, new = _first_str(value, OLD_KEYS), _first_str(value, NEW_KEYS)
    if old is not None and new is not None:
        yield DerivedEdit(
            path or "(file not named)", diff=m.Diff(path=path or "", old_text=old, new_text=new)
        )
    for key in PATCH_KEYS:
        patch = value.get(key)
        if isinstance(patch, str) and looks_like_patch(patch):
            yield DerivedEdit(path or "patch", patch=patch)
    content = value.get("content")
    creating = value.get("type") in ("add", "create")
    if isinstance(content, str) and old is None and path is not None and (is_edit or creating):
        # A write tool: only the new content is known (a new file only if the agent says so).
        yield DerivedEdit(
            path,
            diff=m.Diff(path=path, old_text=None, new_text=content),
            content_only=not creating,
        )
    edits = value.get("edits")
    if isinstance(edits, list):
        yield from _walk(edits, path, depth + 1, is_edit)
    changes = value.get("changes")
    if isinstance(changes, dict):
        # Codex: {"changes": {"/abs/path": {"type": "update", "unified_diff": "..."}}}
        for file_path, change in changes.items():
            yield from _walk(change, str(file_path), depth + 1, is_edit)
    elif isinstance(changes, list):
        yield from _walk(changes, path, depth + 1, is_edit)
    for key in ("add", "update", "delete"):
        nested = value.get(key)
        if isinstance(nested, dict):  # Codex's older shape: {"add": {"content": ...}}
            yield from _walk(nested, path, depth + 1, is_edit or key == "add")


def command_of(raw_input: Any) -> str | None:
    """The shell command a tool call runs, if its rawInput names one."""
    if not isinstance(raw_input, dict):
        return None
    for key in COMMAND_KEYS:
        command = raw_input.get(key)
        if isinstance(command, str) and command.strip():
            return command
        if isinstance(command, list) and command and all(isinstance(c, str) for c in command):
            # Codex sends ["bash", "-lc", "make test"]: the script is what the user reads.
            if len(command) == 3 and command[1] in ("-c", "-lc") and command[0].endswith("sh"):
                return command[2]
            return shlex.join(command)
    return None


def paths_of(raw_input: Any) -> list[str]:
    """File paths named at the top of rawInput (for "edits a.py, b.py")."""
    if not isinstance(raw_input, dict):
        return []
    found = [raw_input[k] for k in PATH_KEYS if isinstance(raw_input.get(k), str)]
    changes = raw_input.get("changes")
    if isinstance(changes, dict):
        found.extend(str(k) for k in changes)
    return list(dict.fromkeys(found))
