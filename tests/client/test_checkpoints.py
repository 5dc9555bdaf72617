"""What each turn changed, per session: the files the client wrote for the agent and the
cells the notebook tools changed, before the turn's first change and after its last;
hunks to revert one at a time; reverting a file only while it holds the turn's
after-state; a size bound that forgets the oldest turns."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_notebook.client.checkpoints import (
    Change,
    ChangedSince,
    Checkpoints,
    check_file,
    restore_file,
)
from acp_notebook.client.connection import ClientConnection
from acp_notebook.client.fs import FileChange
from acp_notebook.client.transcript import NoteEntry

from .helpers import DEMO, SAFETY


def written(path: Path, old: str | None, new: str) -> FileChange:
    return FileChange(str(path), old, new, resolved_path=str(path))


FUNCTION = "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result\n"


# --- recording ----------------------------------------------------------------------------


def test_a_turn_keeps_each_files_text_before_its_first_write_and_after_its_last(
    tmp_path: Path,
) -> None:
    checkpoints = Checkpoints(str(tmp_path))
    target = tmp_path / "src" / "utils.py"
    checkpoints.begin(0)
    checkpoints.file_written(written(target, "a\n", "b\n"))
    checkpoints.file_written(written(target, "b\n", "c\n"))
    checkpoints.file_written(written(tmp_path / "new.md", None, "# new\n"))
    changes = checkpoints.end()

    assert changes is not None
    [utils, new] = list(changes)
    assert (utils.label, utils.before, utils.after) == ("src/utils.py", "a\n", "c\n")
    assert (new.label, new.before, new.after) == ("new.md", None, "# new\n")
    assert changes.summary() == "Changed in this turn: src/utils.py (+1 −1), new.md (new)."
    assert checkpoints.last() is changes


def test_writes_outside_a_turn_and_turns_that_change_nothing_are_not_kept(
    tmp_path: Path,
) -> None:
    checkpoints = Checkpoints(str(tmp_path))
    assert checkpoints.file_written(written(tmp_path / "a.txt", None, "x")) is None
    checkpoints.begin(0)
    assert checkpoints.end() is None
    assert checkpoints.turns == [] and checkpoints.last() is None


def test_cells_are_kept_by_id_with_their_notebook_and_where_a_deleted_one_goes_back() -> None:
    checkpoints = Checkpoints()
    checkpoints.begin(3)
    checkpoints.cell_changed("c1", "cell 2", "x = 1\n", "y = 1\n", notebook="nb.ipynb")
    checkpoints.cell_changed("c1", "cell 2", "y = 1\n", "z = 1\n", notebook="nb.ipynb")
    checkpoints.cell_changed("c9", "cell 5", "gone\n", None, notebook="nb.ipynb", anchor="c4")
    changes = checkpoints.end()

    assert changes is not None and changes.turn == 3
    edited = changes.get("cell", "c1")
    deleted = changes.get("cell", "c9")
    assert edited is not None and (edited.before, edited.after) == ("x = 1\n", "z = 1\n")
    assert deleted is not None and (deleted.notebook, deleted.anchor) == ("nb.ipynb", "c4")
    assert changes.summary() == "Changed in this turn: cell 2 (+1 −1), cell 5 (deleted)."


# --- hunks ----------------------------------------------------------------------------------


def test_hunks_are_the_changed_runs_and_each_reverts_alone() -> None:
    after = FUNCTION.replace("    result = 0\n", "    acc = 0\n").replace(
        "    return result\n", "    return acc\n"
    )
    change = Change("cell", "c1", "cell 2", FUNCTION, after)

    first, _second = change.hunks()
    assert (first.removed, first.added) == (("    result = 0\n",), ("    acc = 0\n",))
    assert first.diff() == "@@ -2,1 +2,1 @@\n-    result = 0\n+    acc = 0\n"
    assert change.text_without(1) == after.replace("return acc", "return result")
    assert change.text_without(0) == after.replace("acc = 0", "result = 0")
    assert change.text_without(None) == FUNCTION


def test_a_created_or_removed_target_reverts_only_whole() -> None:
    created = Change("file", "/x/new.md", "new.md", None, "# new\n")
    assert created.whole() and created.text_without(0) is None
    assert Change("cell", "c", "cell 1", "x\n", None).text_without(0) == "x\n"


def test_a_change_whose_old_text_could_not_be_kept_is_not_revertible(tmp_path: Path) -> None:
    checkpoints = Checkpoints(str(tmp_path))
    checkpoints.begin(0)
    change = checkpoints.file_written(
        FileChange(str(tmp_path / "blob.bin"), None, "text", True, str(tmp_path / "blob.bin"))
    )
    changes = checkpoints.end()
    assert change is not None and not change.revertible and change.hunks() == []
    assert changes is not None and changes.revertible == []
    assert "kept without its old text" in changes.summary()


# --- bounds ---------------------------------------------------------------------------------


def test_the_oldest_turns_are_forgotten_when_the_kept_text_passes_the_bound(
    tmp_path: Path,
) -> None:
    checkpoints = Checkpoints(str(tmp_path), max_chars=100)
    for turn in range(3):
        checkpoints.begin(turn)
        checkpoints.file_written(written(tmp_path / f"f{turn}.txt", "a" * 20, "b" * 20))
        checkpoints.end()

    first, second, third = checkpoints.turns
    assert first.forgotten and first.revertible == []
    assert first.summary() == "The changes of this turn are no longer kept: it cannot be reverted."
    assert not second.forgotten and not third.forgotten
    assert sum(turn.size for turn in checkpoints.turns if not turn.forgotten) <= 100
    assert checkpoints.last() is third


def test_a_single_change_larger_than_the_bound_is_kept_without_its_old_text(
    tmp_path: Path,
) -> None:
    checkpoints = Checkpoints(str(tmp_path), max_chars=100)
    checkpoints.begin(0)
    change = checkpoints.file_written(written(tmp_path / "big.txt", "a" * 80, "b" * 80))
    assert change is not None and change.unavailable and change.before is None


# --- files ------------------------------------------------------------------------------------


def test_a_file_still_as_the_turn_left_it_is_restored(tmp_path: Path) -> None:
    target = tmp_path / "utils.py"
    target.write_text("after\n")
    target.chmod(0o640)
    change = Change("file", str(target), "utils.py", "before\n", "after\n")
    check_file(change)
    restore_file(change, change.text_without(None))
    assert target.read_text() == "before\n"
    assert target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["utils.py"]  # no temporary file left


def test_a_file_the_turn_created_is_removed(tmp_path: Path) -> None:
    target = tmp_path / "new.md"
    target.write_text("# new\n")
    change = Change("file", str(target), "new.md", None, "# new\n")
    check_file(change)
    restore_file(change, None)
    assert not target.exists()


@pytest.mark.parametrize(
    ("now", "why"),
    [
        (b"after\nand the user's line\n", "utils.py was changed after the turn."),
        (None, "utils.py was changed after the turn."),
        (b"\xff\xfe", "utils.py is no longer UTF-8 text."),
    ],
)
def test_a_file_changed_after_the_turn_is_refused(
    tmp_path: Path, now: bytes | None, why: str
) -> None:
    target = tmp_path / "utils.py"
    if now is not None:
        target.write_bytes(now)
    change = Change("file", str(target), "utils.py", "before\n", "after\n")
    with pytest.raises(ChangedSince) as refused:
        check_file(change)
    assert str(refused.value) == why


# --- in a session ---------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_session_keeps_what_each_turn_wrote_and_its_transcript_lists_it(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.md").write_text("old\n")
    async with ClientConnection.spawn(DEMO) as conn:
        with anyio.fail_after(SAFETY):
            await conn.initialize()
            session = await conn.new_session(tmp_path, policy="allow")
            first = await session.prompt("/write notes.md new")
            second = await session.prompt("/plan")

    assert first.record is not None and second.record is not None
    changes = session.checkpoints.of_turn(first.record.index)
    assert changes is not None
    [change] = list(changes)
    assert (change.label, change.before, change.after) == ("notes.md", "old\n", "new\n")
    assert session.checkpoints.of_turn(second.record.index) is None
    notes = [e.text for e in session.transcript.entries_of(first.record.index)
             if isinstance(e, NoteEntry)]  # fmt: skip
    assert notes[-1] == "Changed in this turn: notes.md (+1 −1)."
    assert "Changed in this turn" in first.bundle()["text/markdown"]


# --- one hunk, three ways -------------------------------------------------------------------

#: A turn that renamed ``result`` to ``acc`` in two places of FUNCTION: two hunks.
RENAMED = FUNCTION.replace("    result = 0\n", "    acc = 0\n").replace(
    "    return result\n", "    return acc\n"
)


def test_a_hunk_reverts_when_only_other_lines_were_edited_since_the_turn() -> None:
    # Reverting one hunk was refused ("cell 2 was changed after the turn") after any
    # unrelated edit of the cell; `git checkout -p` would revert an untouched hunk.
    change = Change("cell", "c1", "cell 2", FUNCTION, RENAMED)
    now = "# the user's comment\n" + RENAMED + "print(total([1]))"
    assert change.hunk_reverted_in(0, now) == now.replace("acc = 0", "result = 0")
    assert change.hunk_reverted_in(1, now) == now.replace("return acc", "return result")


def test_a_hunk_whose_own_lines_were_edited_since_is_refused_naming_them() -> None:
    change = Change("cell", "c1", "cell 2", FUNCTION, RENAMED)
    now = RENAMED.replace("    acc = 0\n", "    acc = 10\n")
    with pytest.raises(ChangedSince) as refused:
        change.hunk_reverted_in(0, now)
    assert str(refused.value) == "line 2 of cell 2 changed after the turn."
    assert change.hunk_reverted_in(1, now) == now.replace("return acc", "return result")


def test_lines_the_turn_removed_go_back_where_they_were_among_later_edits() -> None:
    before = "a\nb\nc\nd\n"
    change = Change("file", "/w/x.txt", "x.txt", before, "a\nc\nd\n")
    assert change.hunk_reverted_in(0, "a\nc\nd\ne\n") == "a\nb\nc\nd\ne\n"
    with pytest.raises(ChangedSince) as refused:
        change.hunk_reverted_in(0, "a\nX\nc\nd\n")
    assert str(refused.value) == "line 2 of x.txt changed after the turn."


def test_a_line_typed_below_a_cells_last_line_leaves_the_last_hunk_revertible() -> None:
    change = Change("cell", "c1", "cell 1", "x = 1\ny = 2", "x = 1\ny = 3")
    assert change.hunk_reverted_in(0, "x = 1\ny = 3\nz = 4") == "x = 1\ny = 2\nz = 4"
    assert change.hunk_reverted_in(0, "x = 0\ny = 3") == "x = 0\ny = 2"
