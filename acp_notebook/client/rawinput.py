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
* the shell command under ``command`` or ``cmd`` (a string or an argv list), and the
  directory it runs in under ``cwd``, ``workdir``…;
* the URL of a fetch under ``url``.

:class:`~acp_notebook.client.toolcall.ToolCallState` reads these once, as its ``command``,
``paths``, ``url`` and ``diffs``; nothing else reads rawInput.
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
CWD_KEYS = ("cwd", "workdir", "working_directory", "workingDirectory", "dir")
URL_KEYS = ("url",)
#: How deep into nested rawInput to look, and how many diffs to derive at most.
MAX_DEPTH = 4
MAX_DIFFS = 20

#: The label every derived diff carries: the agent did not send it as a diff.
DERIVED_NOTE = "derived from rawInput"


@dataclass(frozen=True)
class FileDiff:
    """One diff of a tool call: the agent's own `diff` content, or an edit read from
    rawInput (``derived``) — old and new text, or a patch string the agent passed."""

    #: The file ("" when rawInput does not name it).
    path: str
    old_text: str | None = None
    #: None for a patch.
    new_text: str | None = None
    #: A unified diff or apply_patch text, as the agent passed it.
    patch: str | None = None
    #: Read from rawInput: the agent did not send it as a diff (shown with DERIVED_NOTE).
    derived: bool = False
    #: True when only the new content is known (a write tool): not proof of a new file.
    content_only: bool = False

    @classmethod
    def of(cls, diff: m.Diff) -> FileDiff:
        """The agent's own `diff` content."""
        return cls(diff.path, diff.old_text, diff.new_text)

    @property
    def label(self) -> str:
        """What names the diff: its file, else what it is."""
        return self.path or ("patch" if self.patch is not None else "(file not named)")

    @property
    def new_file(self) -> bool:
        """spec: a null ``oldText`` is a new file (unless only the new content is known)."""
        return self.patch is None and self.old_text is None and not self.content_only

    @property
    def paths(self) -> list[str]:
        """Every file the diff changes: its path, and the files a patch names."""
        found = [self.path] if self.path else []
        if self.patch is not None:
            found += patch_paths(self.patch)
        return list(dict.fromkeys(found))


def _first_str(value: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        found = value.get(key)
        if isinstance(found, str):
            return found
    return None


#: apply_patch lines that name a file (Codex).
_PATCH_FILE_LINES = ("*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: ")


def looks_like_patch(text: str) -> bool:
    """A unified diff or an apply_patch body (not just any string under ``diff``)."""
    head = text[:20_000]
    return (
        "*** Begin Patch" in head
        or ("\n@@" in head or head.startswith("@@"))
        or ("--- " in head and "\n+++ " in head)
    )


def patch_paths(patch: str) -> list[str]:
    """The files a unified diff or an apply_patch body changes: the ``---``/``+++`` header
    pairs (``a/``/``b/`` dropped, ``/dev/null`` skipped) and apply_patch's file lines."""
    found: list[str] = []
    lines = patch.splitlines()
    for index, line in enumerate(lines):
        if (
            line.startswith("--- ")
            and index + 1 < len(lines)
            and lines[index + 1].startswith("+++ ")
        ):
            for header in (line, lines[index + 1]):
                path = header[4:].split("\t", 1)[0].strip()
                if path != "/dev/null":
                    found.append(path[2:] if path.startswith(("a/", "b/")) else path)
        else:
            for prefix in _PATCH_FILE_LINES:
                if line.startswith(prefix):
                    found.append(line[len(prefix) :].strip())
    return list(dict.fromkeys(p for p in found if p))


def edits_from_raw_input(raw_input: Any, kind: str = "edit") -> list[FileDiff]:
    """Every edit ``raw_input`` describes, in order (empty when it describes none)."""
    return list(_walk(raw_input, None, 0, kind == "edit"))[:MAX_DIFFS]


def _walk(value: Any, path_hint: str | None, depth: int, is_edit: bool) -> Iterator[FileDiff]:
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
        yield FileDiff(path or "", old, new, derived=True)
    for key in PATCH_KEYS:
        patch = value.get(key)
        if isinstance(patch, str) and looks_like_patch(patch):
            yield FileDiff(path or "", patch=patch, derived=True)
    content = value.get("content")
    creating = value.get("type") in ("add", "create")
    if isinstance(content, str) and old is None and path is not None and (is_edit or creating):
        # A write tool: only the new content is known (a new file only if the agent says so).
        yield FileDiff(path, None, content, derived=True, content_only=not creating)
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


def cwd_of(raw_input: Any) -> str | None:
    """The directory a command runs in, if its rawInput names one (Codex's ``workdir``)."""
    if not isinstance(raw_input, dict):
        return None
    return _first_str(raw_input, CWD_KEYS) or None


def paths_of(raw_input: Any) -> list[str]:
    """File paths named at the top of rawInput (for "edits a.py, b.py")."""
    if not isinstance(raw_input, dict):
        return []
    found = [raw_input[k] for k in PATH_KEYS if isinstance(raw_input.get(k), str)]
    changes = raw_input.get("changes")
    if isinstance(changes, dict):
        found.extend(str(k) for k in changes)
    return list(dict.fromkeys(found))


def url_of(raw_input: Any) -> str | None:
    """The URL a tool call fetches, if its rawInput names one."""
    if not isinstance(raw_input, dict):
        return None
    url = (_first_str(raw_input, URL_KEYS) or "").strip()
    return url or None
