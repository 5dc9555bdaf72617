"""The turn's review bar, kernel side: a turn that changed a cell and a file sends the page
(the fake frontend plays the extension) a ``review`` of both, with their hunks, into the
``%acp`` cell; a ``revert`` click reverts one hunk, or everything left, and is answered with
the list as it is now; a hunk whose own lines changed after the turn is refused and left
alone, edits elsewhere stay as they are."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import Kernel, rel
from .fake_frontend import FUNCTION, RENAMED, FakeFrontend

pytestmark = pytest.mark.kernel

HELPER_PY = "def double(result):\n    return result * 2\n"
ACP_CELL = "c-acp"


@dataclass
class Renamed:
    """A turn of `/rename result acc helper.py` run from the cell ACP_CELL, as the page
    (the fake frontend) saw it: its cells, the file, and the review the turn sent."""

    fake: FakeFrontend
    helper: Path
    review: dict[str, Any]


def rename(kernel: Kernel, fake: FakeFrontend, helper: Path) -> dict[str, Any]:
    """Run the turn; the review it sent."""
    helper.write_text(HELPER_PY)
    prompt = f"%acp -p allow /rename result acc {rel(kernel, helper)}"
    turn = fake.serve(kernel.execute(prompt, allow_stdin=False, until=None, cell_id=ACP_CELL))
    assert not turn.errors, turn.describe()
    assert fake.cells[1]["source"] == RENAMED
    return kernel.wait_for(
        lambda: [r for r in fake.sent("review")[-1:] if r["cell_id"] == ACP_CELL],
        "the turn's review",
    )[0]


@pytest.fixture
def renamed(kernel: Kernel, workdir: Path, function_notebook: FakeFrontend) -> Renamed:
    helper = workdir / "helper.py"
    return Renamed(function_notebook, helper, rename(kernel, function_notebook, helper))


def click(fake: FakeFrontend, review: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """Send a Revert click; serve the kernel's requests until the bar's redraw comes."""
    before = len(fake.sent("review"))

    def redrawn() -> list[dict[str, Any]]:
        new = fake.sent("review")[before:]
        return [r for r in new if r["review"] == review["review"] and r["message"] is not None]

    fake.send("revert", review=review["review"], **fields)
    fake.serve_until(redrawn, "the review's redraw")
    return redrawn()[-1]


def hunk_texts(change: dict[str, Any]) -> list[list[str]]:
    return [
        [f"{line['kind']} {line['text']}" for line in hunk["lines"]] for hunk in change["hunks"]
    ]


def test_a_turn_that_changed_a_cell_and_a_file_sends_its_review_to_the_acp_cell(
    kernel: Kernel, renamed: Renamed
) -> None:
    helper, review = renamed.helper, renamed.review

    assert review["cell_id"] == ACP_CELL and review["message"] is None
    assert review["revert_all"] is True
    cell, file = review["changes"]
    assert (cell["label"], cell["target"], cell["status"]) == ("cell 2", "cell", "changed")
    assert (file["label"], file["target"]) == (rel(kernel, helper), "file")
    assert (cell["added"], cell["removed"], file["added"], file["removed"]) == (3, 3, 2, 2)
    assert cell["revertible"] and not cell["whole"]
    # The loop's body is unchanged: two hunks, each with its unchanged neighbours.
    assert hunk_texts(cell) == [
        [
            "context def total(values):",
            "removed     result = 0",
            "added     acc = 0",
            "context     for v in values:",
        ],
        [
            "context     for v in values:",
            "removed         result += v",
            "removed     return result",
            "added         acc += v",
            "added     return acc",
        ],
    ]


def test_reverting_one_hunk_reverts_only_it_then_revert_all_the_rest(
    kernel: Kernel, renamed: Renamed
) -> None:
    fake, helper, review = renamed.fake, renamed.helper, renamed.review
    cell = review["changes"][0]

    after = click(fake, review, change=0, hunk=0, revision=cell["revision"])
    assert after["message"] == "Reverted cell 2."
    assert fake.cells[1]["source"] == RENAMED.replace("acc = 0", "result = 0", 1)
    assert helper.read_text() == HELPER_PY.replace("result", "acc")  # the file is untouched
    left = after["changes"][0]
    assert (left["added"], left["removed"], len(left["hunks"])) == (2, 2, 1)
    assert after["cell_id"] is None and after["review"] == review["review"]

    done = click(fake, review, change=None, hunk=None, revision="")
    assert done["message"] == f"Reverted cell 2, {rel(kernel, helper)}."
    assert fake.cells[1]["source"] == FUNCTION
    assert helper.read_text() == HELPER_PY
    assert [c["status"] for c in done["changes"]] == ["reverted", "reverted"]
    assert done["revert_all"] is False


def test_a_file_whose_hunk_lines_were_changed_after_the_turn_is_not_reverted(
    kernel: Kernel, renamed: Renamed
) -> None:
    fake, helper, review = renamed.fake, renamed.helper, renamed.review
    changed = helper.read_text().replace("acc * 2", "acc * 3")
    helper.write_text(changed)
    file = review["changes"][1]

    after = click(fake, review, change=1, hunk=0, revision=file["revision"])
    assert after["message"] == (
        f"Nothing was reverted: line 2 of {rel(kernel, helper)} changed after the turn."
    )
    assert helper.read_text() == changed
    assert fake.cells[1]["source"] == RENAMED
    assert after["changes"][1]["revertible"] is True  # the record still holds the turn


def test_a_hunk_reverts_in_a_cell_the_user_edited_elsewhere_and_keeps_that_edit(
    kernel: Kernel, renamed: Renamed
) -> None:
    # A per-hunk Revert refused after any unrelated edit of the cell ("cell 2 was
    # changed after the turn"), where `git checkout -p` would revert the untouched hunk.
    fake, helper, review = renamed.fake, renamed.helper, renamed.review
    fake.cells[1]["source"] = "# the user's note\n" + RENAMED
    cell = review["changes"][0]

    after = click(fake, review, change=0, hunk=0, revision=cell["revision"])
    assert after["message"] == "Reverted cell 2."
    assert fake.cells[1]["source"] == "# the user's note\n" + RENAMED.replace(
        "acc = 0", "result = 0", 1
    )
    helper.write_text(helper.read_text() + "# the user's line\n")
    file = after["changes"][1]
    done = click(fake, review, change=1, hunk=0, revision=file["revision"])
    assert done["message"] == f"Reverted {rel(kernel, helper)}."
    assert helper.read_text() == HELPER_PY + "# the user's line\n"


def test_a_click_on_a_list_drawn_before_a_revert_reverts_nothing(
    kernel: Kernel, renamed: Renamed
) -> None:
    fake, helper, review = renamed.fake, renamed.helper, renamed.review
    file = review["changes"][1]
    click(fake, review, change=1, hunk=None, revision=file["revision"])
    assert helper.read_text() == HELPER_PY

    stale = click(fake, review, change=1, hunk=0, revision=file["revision"])
    assert stale["message"].startswith("Nothing was reverted: that change was reverted")
    assert helper.read_text() == HELPER_PY


def test_changes_control_draws_the_review_in_its_own_cell(kernel: Kernel, renamed: Renamed) -> None:
    fake, helper = renamed.fake, renamed.helper

    shown = kernel.execute("%acp --changes", until="idle", cell_id="c-changes")
    review = kernel.wait_for(
        lambda: [r for r in fake.sent("review") if r["cell_id"] == "c-changes"],
        "the review in the --changes cell",
    )[0]
    assert [c["label"] for c in review["changes"]] == ["cell 2", rel(kernel, helper)]
    assert shown.widget_display is None, "no widget: it would be dead in the saved notebook"
    assert shown.stdout.startswith("Changed in this turn: cell 2 (+3 −3)")


def test_a_turn_without_a_cell_id_sends_no_review(
    kernel: Kernel, workdir: Path, function_notebook: FakeFrontend
) -> None:
    """A frontend that does not say which cell runs (VS Code, nbclient): the transcript's
    line only."""
    fake = function_notebook
    helper = workdir / "helper.py"
    helper.write_text(HELPER_PY)
    kernel.settle()
    before = len(fake.sent("review"))  # earlier tests' bars, sent when the page connected
    prompt = f"%acp -p allow /rename result acc {rel(kernel, helper)}"
    turn = fake.serve(kernel.execute(prompt, allow_stdin=False, until=None))
    turn.wait("final")
    assert "Changed in this turn: cell 2 (+3 −3)" in turn.plain
    kernel.settle()
    assert fake.sent("review")[before:] == []


def test_a_page_that_connects_again_gets_the_bars_with_something_left_to_revert(
    kernel: Kernel, renamed: Renamed
) -> None:
    """The page was reloaded: the bar of the turn comes back in its cell; once everything
    is reverted, a page that connects gets no bar."""
    fake, helper, review = renamed.fake, renamed.helper, renamed.review
    fake.close()

    reloaded = FakeFrontend(kernel)
    reloaded.cells = fake.cells
    reloaded.connect()
    again = kernel.wait_for(
        lambda: [r for r in reloaded.sent("review") if r["cell_id"] == ACP_CELL],
        "the review on reconnection",
    )[-1]
    assert (again["review"], again["cell_id"]) == (review["review"], ACP_CELL)
    click(reloaded, again, change=None, hunk=None, revision="")
    assert helper.read_text() == HELPER_PY
    reloaded.close()

    last = FakeFrontend(kernel)
    last.connect()
    kernel.settle()
    assert [r for r in last.sent("review") if r["cell_id"] == ACP_CELL] == []
    last.close()


def test_acp_undo_redraws_the_turns_bar(kernel: Kernel, renamed: Renamed) -> None:
    fake, helper = renamed.fake, renamed.helper
    before = len(fake.sent("review"))
    undo = fake.serve(kernel.execute("%acp --undo", until=None))
    assert undo.stdout.strip() == f"Reverted cell 2, {rel(kernel, helper)}."
    redrawn = fake.sent("review")[before:]
    assert [(r["review"], r["message"]) for r in redrawn] == [
        (renamed.review["review"], undo.stdout.strip())
    ]
    assert [c["status"] for c in redrawn[0]["changes"]] == ["reverted", "reverted"]
