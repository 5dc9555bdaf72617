"""The ``review`` message's changes, as the page's review bar draws them: derived from the
turn's record as it is now (counts, hunks with their context, what can be reverted)."""

from __future__ import annotations

from acp_notebook.client.checkpoints import Checkpoints, TurnChanges
from acp_notebook.client.fs import FileChange
from acp_notebook.notebook.frontend.changes import MAX_HUNK_LINES, review_fields, revision


def turn_of(*changes: tuple[str, str | None, str | None]) -> TurnChanges:
    checkpoints = Checkpoints("/w")
    checkpoints.begin(0)
    for path, before, after in changes:
        checkpoints.file_written(FileChange(path, before, after, resolved_path=path))
    turn = checkpoints.end()
    assert turn is not None
    return turn


def test_a_changed_file_shows_each_hunk_with_its_unchanged_neighbours() -> None:
    before = "".join(f"line {i}\n" for i in range(10))
    after = before.replace("line 2\n", "line two\n").replace("line 8\n", "")
    fields = review_fields(turn_of(("/w/a.txt", before, after)), "r1", "cell-1")
    (change,) = fields["changes"]
    assert (change["label"], change["status"], change["added"], change["removed"]) == (
        "a.txt",
        "changed",
        1,
        2,
    )
    assert [h["header"] for h in change["hunks"]] == ["@@ -3,1 +3,1 @@", "@@ -9,1 +8,0 @@"]
    assert [(line["kind"], line["text"]) for line in change["hunks"][0]["lines"]] == [
        ("context", "line 0"),
        ("context", "line 1"),
        ("removed", "line 2"),
        ("added", "line two"),
        ("context", "line 3"),
        ("context", "line 4"),
    ]
    assert fields["revert_all"] is True and fields["cell_id"] == "cell-1"


def test_a_new_file_is_reverted_whole_and_shows_its_lines_as_added() -> None:
    (change,) = review_fields(turn_of(("/w/new.py", None, "x = 1\n")), "r1", None)["changes"]
    assert (change["status"], change["whole"], change["revertible"]) == ("new", True, True)
    assert [line["kind"] for line in change["hunks"][0]["lines"]] == ["added"]


def test_a_long_hunk_is_cut_and_says_how_many_lines_were_not_sent() -> None:
    after = "".join(f"{i}\n" for i in range(MAX_HUNK_LINES + 50))
    (change,) = review_fields(turn_of(("/w/big.txt", "", after)), "r1", None)["changes"]
    lines = change["hunks"][0]["lines"]
    assert len(lines) == MAX_HUNK_LINES + 1
    assert lines[-1] == {"kind": "fold", "text": "", "count": 50}
    assert change["added"] == MAX_HUNK_LINES + 50


def test_a_forgotten_turn_offers_nothing_to_revert() -> None:
    turn = turn_of(("/w/a.txt", "a\n", "b\n"))
    turn.forgotten = True
    fields = review_fields(turn, "r1", None)
    assert fields["revert_all"] is False and fields["forgotten"] is True
    assert fields["changes"][0]["revertible"] is False and fields["changes"][0]["hunks"] == []


def test_the_revision_changes_with_the_text_a_revert_leaves() -> None:
    (change,) = turn_of(("/w/a.txt", "a\n", "b\n"))
    drawn = revision(change)
    change.after = change.before
    assert revision(change) != drawn
