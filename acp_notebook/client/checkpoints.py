"""What each prompt turn changed, kept so that it can be reviewed and reverted.

Per session (``Session.checkpoints``), per turn: every file the client wrote for the
agent (from the fs handler's :class:`~.fs.FileChange` records) and every notebook cell
the notebook's cell tools changed, each with its text before the turn's first change to
it and after the turn's last. A change is reverted whole, or one hunk at a time.

Reverting never destroys work done after the turn: the target must still hold the turn's
after-state, or nothing is written (:class:`ChangedSince`). The cell side of a revert
lives in the notebook layer (it needs the live notebook); the file side is here.

Bounded: the kept texts of a session's turns add up to at most ``max_chars``
characters; past that the oldest turns are forgotten (they can no longer be reverted,
and say so), and a single change too large to keep is recorded without its old text.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import stat
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from .formatting import short_path
from .fs import FileChange

__all__ = [
    "DEFAULT_MAX_CHARS",
    "Change",
    "ChangedSince",
    "Checkpoints",
    "Hunk",
    "TurnChanges",
    "read_file",
    "restore_file",
]

#: Text kept per session for reverting (before and after states together).
DEFAULT_MAX_CHARS = 32 * 1024 * 1024

Target = Literal["file", "cell"]


class ChangedSince(Exception):
    """The target no longer holds the turn's after-state: reverting would overwrite a
    later change, so nothing was reverted. The message says which target."""


@dataclass(frozen=True)
class Hunk:
    """One run of changed lines between the before and after texts."""

    #: Line ranges (0-based, end exclusive) in the before and after texts.
    before_start: int
    before_end: int
    after_start: int
    after_end: int
    removed: tuple[str, ...]
    added: tuple[str, ...]

    def header(self) -> str:
        """Its unified diff header: "@@ -3,2 +3,4 @@"."""
        old = _range(self.before_start, self.before_end - self.before_start)
        new = _range(self.after_start, self.after_end - self.after_start)
        return f"@@ -{old} +{new} @@"

    def diff(self) -> str:
        """The hunk as a unified diff fragment (a header, then - and + lines)."""
        lines = [self.header()]
        lines += [f"-{line.rstrip(chr(10))}" for line in self.removed]
        lines += [f"+{line.rstrip(chr(10))}" for line in self.added]
        return "\n".join(lines) + "\n"


def _range(start: int, length: int) -> str:
    # Unified diff numbering: 1-based; an empty range names the line before it.
    return f"{start + 1 if length else start},{length}"


def _lines_named(spans: list[tuple[int, int]]) -> str:
    """ "line 4", "lines 4–6", "lines 2, 7–8": 0-based end-exclusive spans of a text,
    named 1-based; an empty span is the line where lines were removed."""
    named = []
    for low, high in spans:
        first, last = low + 1, max(high, low + 1)
        named.append(str(first) if first == last else f"{first}–{last}")
    single = len(spans) == 1 and "–" not in named[0]
    return ("line " if single else "lines ") + ", ".join(named)


def _joined(lines: tuple[str, ...], *, last: bool) -> str:
    """Lines put back between others end with a newline; put back at the end, they end
    as they did before the turn."""
    text = "".join(lines)
    return text if last or not text or text.endswith("\n") else text + "\n"


def lines_of(text: str | None) -> list[str]:
    return (text or "").splitlines(keepends=True)


@dataclass
class Change:
    """One file or cell as a turn changed it."""

    target: Target
    #: The resolved path of a file; a cell's id.
    key: str
    #: How the user names it: a path relative to the session's cwd, "cell 3".
    label: str
    #: The text before the turn's first change; None: it did not exist.
    before: str | None
    #: The text after the turn's last change (or the last revert); None: it is gone.
    after: str | None
    #: The old text could not be kept (not UTF-8, too large): it cannot be reverted.
    unavailable: bool = False
    #: A cell's notebook (server-relative path); where a deleted cell goes back: below
    #: ``anchor`` (None: at the top).
    notebook: str | None = None
    anchor: str | None = None
    #: A cell's type (code, markdown, raw): a deleted cell comes back as what it was.
    cell_type: str = "code"

    @property
    def reverted(self) -> bool:
        return not self.unavailable and self.before == self.after

    @property
    def revertible(self) -> bool:
        return not self.unavailable and not self.reverted

    @property
    def size(self) -> int:
        return len(self.before or "") + len(self.after or "")

    @property
    def stats(self) -> tuple[int, int]:
        """(added, removed) lines."""
        hunks = self.hunks()
        return sum(len(h.added) for h in hunks), sum(len(h.removed) for h in hunks)

    def hunks(self) -> list[Hunk]:
        """The changed runs of lines (none once reverted)."""
        if self.unavailable:
            return []
        before, after = lines_of(self.before), lines_of(self.after)
        matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
        return [
            Hunk(i1, i2, j1, j2, tuple(before[i1:i2]), tuple(after[j1:j2]))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
            if tag != "equal"
        ]

    def whole(self) -> bool:
        """Whether the change can only be reverted whole: the target was created or
        removed (a new file, an inserted or deleted cell)."""
        return self.before is None or self.after is None

    def text_without(self, hunk: int | None) -> str | None:
        """The text the target holds once ``hunk`` (None: every hunk) is reverted."""
        if hunk is None or self.whole():
            return self.before
        hunks = self.hunks()
        chosen = hunks[hunk]
        after = lines_of(self.after)
        after[chosen.after_start : chosen.after_end] = chosen.removed
        return "".join(after)

    def hunk_reverted_in(self, hunk: int, now: str) -> str:
        """``now`` (the target's text today) with ``hunk`` put back as it was before the
        turn, merged three ways: edits made since the turn outside the hunk's own lines
        stay. :class:`ChangedSince` names the lines of ``now`` that conflict when the
        hunk's own lines (or, for lines the turn removed, the place they go back to) were
        changed since."""
        chosen = self.hunks()[hunk]
        after, current = lines_of(self.after), lines_of(now)
        start, end = chosen.after_start, chosen.after_end
        # Lines compare without their newline: a line typed below a cell's last line
        # gives that line a newline, which changes nothing the turn wrote.
        matcher = difflib.SequenceMatcher(
            None,
            [t.rstrip("\n") for t in after],
            [t.rstrip("\n") for t in current],
            autojunk=False,
        )
        opcodes = matcher.get_opcodes() or [("equal", 0, 0, 0, 0)]
        touched = [
            (j1, j2)
            for tag, i1, i2, j1, j2 in opcodes
            if tag != "equal"
            and (
                # Lines the turn removed go back at a point: any edit touching it conflicts.
                i1 <= start <= i2 if start == end else (i1 < end and start < i2) or start < i1 < end
            )
        ]
        if not touched:  # the hunk's lines are one unchanged run of ``now``
            i1, j1 = next(
                (i1, j1) for tag, i1, i2, j1, _ in opcodes if tag == "equal" and i1 <= start <= i2
            )
            at = j1 + (start - i1)
            head, tail = current[:at], current[at + end - start :]
            return "".join(head) + _joined(chosen.removed, last=not tail) + "".join(tail)
        raise ChangedSince(f"{_lines_named(touched)} of {self.label} changed after the turn.")

    def describe(self) -> str:
        """ "utils.py (+3 −1)", "cell 2 (new)", "notes.md (reverted)"."""
        if self.unavailable:
            return f"{self.label} (too large or not text: kept without its old text)"
        if self.reverted:
            return f"{self.label} (reverted)"
        if self.before is None:
            return f"{self.label} (new)"
        if self.after is None:
            return f"{self.label} (deleted)"
        added, removed = self.stats
        return f"{self.label} (+{added} −{removed})"


@dataclass
class TurnChanges:
    """What one prompt turn changed, in the order it first changed each target."""

    #: The transcript's index of the turn.
    turn: int
    changes: dict[str, Change] = field(default_factory=dict)
    #: The texts were dropped to keep the session's bound: it cannot be reverted.
    forgotten: bool = False

    def __iter__(self) -> Iterator[Change]:
        return iter(self.changes.values())

    def __len__(self) -> int:
        return len(self.changes)

    @property
    def size(self) -> int:
        return sum(change.size for change in self)

    @property
    def revertible(self) -> list[Change]:
        return [] if self.forgotten else [c for c in self if c.revertible]

    def get(self, target: Target, key: str) -> Change | None:
        return self.changes.get(f"{target}:{key}")

    def record(self, change: Change) -> Change:
        """Add a change; a target changed before in this turn keeps its first before-text
        and takes the new after-text."""
        known = self.changes.get(f"{change.target}:{change.key}")
        if known is None:
            self.changes[f"{change.target}:{change.key}"] = change
            return change
        known.after = change.after
        known.label = change.label
        known.anchor = change.anchor
        return known

    def summary(self) -> str:
        """One line listing what changed: "Changed in this turn: utils.py (+3 −1), cell 2 (new)."."""
        if not self.changes:
            return ""
        if self.forgotten:
            return "The changes of this turn are no longer kept: it cannot be reverted."
        return "Changed in this turn: " + ", ".join(c.describe() for c in self) + "."


class Checkpoints:
    """The changes of one session's turns, bounded in size."""

    def __init__(self, cwd: str | None = None, *, max_chars: int = DEFAULT_MAX_CHARS) -> None:
        self.cwd = cwd
        self.max_chars = max_chars
        self.turns: list[TurnChanges] = []
        self._current: TurnChanges | None = None

    # ------------------------------------------------------------------ recording

    def begin(self, turn: int) -> TurnChanges:
        """A turn starts: what it changes is recorded from now until :meth:`end`."""
        self._current = TurnChanges(turn)
        return self._current

    def end(self) -> TurnChanges | None:
        """The turn ended; its changes (None when it changed nothing)."""
        current, self._current = self._current, None
        if current is None or not current.changes:
            return None
        return current

    def of_turn(self, turn: int) -> TurnChanges | None:
        return next((t for t in self.turns if t.turn == turn), None)

    def last(self) -> TurnChanges | None:
        """The latest turn with something left to revert (``--undo``)."""
        return next((t for t in reversed(self.turns) if t.revertible), None)

    def file_written(self, change: FileChange) -> Change | None:
        """The fs handler wrote a file for the agent (ignored outside a turn)."""
        return self._record(
            Change(
                "file",
                change.resolved_path or change.path,
                short_path(change.path, self.cwd),
                change.old_text,
                change.new_text,
                unavailable=change.old_text_unavailable,
            )
        )

    def cell_changed(
        self,
        cell_id: str,
        label: str,
        before: str | None,
        after: str | None,
        *,
        notebook: str,
        anchor: str | None = None,
        cell_type: str = "code",
    ) -> Change | None:
        """A cell tool changed a cell of ``notebook`` (ignored outside a turn)."""
        change = Change("cell", cell_id, label, before, after, False, notebook, anchor, cell_type)
        return self._record(change)

    def _record(self, change: Change) -> Change | None:
        current = self._current
        if current is None:
            return None
        if current not in self.turns:
            self.turns.append(current)
        kept = current.record(change)
        self._bound(kept)
        return kept

    def _bound(self, newest: Change) -> None:
        """Forget the oldest turns until the kept texts fit; if the newest change alone
        does not fit, keep it without its old text."""
        total = sum(turn.size for turn in self.turns if not turn.forgotten)
        for turn in self.turns:
            if total <= self.max_chars or turn is self._current:
                break
            if not turn.forgotten:
                total -= turn.size
                turn.forgotten = True
                for change in turn:
                    change.before = change.after = None
                    change.unavailable = True
        if total > self.max_chars:
            newest.before = None
            newest.unavailable = True


# ---------------------------------------------------------------------------- files


def read_file(change: Change) -> str | None:
    """A changed file's text now (None: it does not exist); :class:`ChangedSince` when
    it is no longer a UTF-8 text file."""
    try:
        with open(change.key, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ChangedSince(f"{change.label} cannot be read ({exc.strerror or exc}).") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ChangedSince(f"{change.label} is no longer UTF-8 text.") from None


def check_file(change: Change) -> None:
    """:class:`ChangedSince` unless the file still holds the turn's after-state."""
    if read_file(change) != change.after:
        raise ChangedSince(f"{change.label} was changed after the turn.")


def restore_file(change: Change, text: str | None) -> None:
    """Write ``text`` to the changed file (atomically, keeping its permissions), or
    remove it when ``text`` is None. Call :func:`check_file` first."""
    path = change.key
    if text is None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
        return
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = None
    descriptor, temp = tempfile.mkstemp(prefix=".acp-revert-", dir=directory)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(text.encode("utf-8"))
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
