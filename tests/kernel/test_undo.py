"""``%acp --undo`` and the revert behind it, in a real kernel without a browser: the last
turn's files come back, a file or cell changed after the turn is never overwritten, and
cells are reverted through the live notebook (the test client plays the extension)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbconvert import HTMLExporter

from .conftest import UTILS_PY, Kernel, rel
from .fake_frontend import FUNCTION, RENAMED, FakeFrontend

pytestmark = pytest.mark.kernel


def edit_turn(kernel: Kernel, path: Path) -> str:
    """A headless turn of the demo agent editing ``path`` (allowed); its plain transcript."""
    turn = kernel.execute(
        f"%acp -p allow /edit {rel(kernel, path)}", allow_stdin=False, until="final"
    )
    assert not turn.errors, turn.describe()
    assert path.read_text() != UTILS_PY
    return turn.plain


def test_undo_restores_the_file_the_last_turn_wrote(kernel: Kernel, utils_py: Path) -> None:
    plain = edit_turn(kernel, utils_py)
    assert f"Changed in this turn: {rel(kernel, utils_py)} (+" in plain

    assert kernel.text("%acp --undo").strip() == f"Reverted {rel(kernel, utils_py)}."
    assert utils_py.read_text() == UTILS_PY


def test_undo_refuses_to_overwrite_a_file_changed_after_the_turn(
    kernel: Kernel, utils_py: Path
) -> None:
    edit_turn(kernel, utils_py)
    changed = utils_py.read_text() + "# the user's line\n"
    utils_py.write_text(changed)

    out = kernel.text("%acp --undo").strip()
    assert out == f"Nothing was reverted: {rel(kernel, utils_py)} was changed after the turn."
    assert utils_py.read_text() == changed


#: A turn's record built as the cell tools report it, and the revert run on an agent loop
#: (awaited by the cell, so the fake frontend's answers reach the kernel meanwhile).
REVERT = """
import asyncio
from acp_notebook.client.checkpoints import Checkpoints
from acp_notebook.client.fs import FileChange
from acp_notebook.notebook.runtime.loop import AgentLoop
from acp_notebook.notebook.changes.revert import revert
_loop = AgentLoop()
_checkpoints = Checkpoints({cwd!r})
_checkpoints.begin(0)
_checkpoints.file_written(FileChange({path!r}, "before\\n", "after\\n", resolved_path={path!r}))
_checkpoints.cell_changed("c-func", "cell 2", {function!r}, {renamed!r}, notebook="work/analysis.ipynb")
_checkpoints.cell_changed("c-new", "cell 3", None, "total([1])", notebook="work/analysis.ipynb")
_checkpoints.cell_changed(
    "c-note", "cell 4", "Sums.", None, notebook="work/analysis.ipynb", anchor="c-new",
    cell_type="markdown",
)
_turn = _checkpoints.end()
print((await asyncio.wrap_future(_loop.submit(revert, _turn))).sentence())
"""


@pytest.fixture
def turned(kernel: Kernel, workdir: Path) -> tuple[FakeFrontend, Path]:
    """A notebook and a file as a turn left them: cell 2 edited, a cell added below it, the
    markdown cell deleted, and a file written."""
    fake = FakeFrontend(kernel)
    fake.cells = [
        fake.cell("c-load", "code", "%load_ext acp_notebook", 1),
        fake.cell("c-func", "code", RENAMED, 2),
        fake.cell("c-new", "code", "total([1])"),
    ]
    fake.connect()
    written = workdir / "notes.txt"
    written.write_text("after\n")
    return fake, written


def revert_code(path: Path) -> str:
    return REVERT.format(path=str(path), cwd=str(path.parent), function=FUNCTION, renamed=RENAMED)


def test_a_turns_cells_and_files_are_reverted_through_the_live_notebook(
    kernel: Kernel, turned: tuple[FakeFrontend, Path]
) -> None:
    fake, written = turned
    execution = fake.serve(kernel.execute(revert_code(written), until=None))
    assert not execution.errors, execution.describe()
    assert execution.stdout.strip() == "Reverted notes.txt, cell 2, cell 3, cell 4."
    assert [(c["id"], c["source"]) for c in fake.cells] == [
        ("c-load", "%load_ext acp_notebook"),
        ("c-func", FUNCTION),
        ("c-new", "Sums."),  # the markdown cell came back (the fake names new cells c-new)
    ]
    assert fake.cells[2]["cell_type"] == "markdown"
    assert {r["type"] for r in fake.requests} == {"list_cells", "apply"}
    assert written.read_text() == "before\n"
    fake.close()


def test_a_cell_changed_after_the_turn_stops_the_whole_revert(
    kernel: Kernel, turned: tuple[FakeFrontend, Path]
) -> None:
    fake, written = turned
    fake.cells[1]["source"] = RENAMED + "\n# the user's line"
    execution = fake.serve(kernel.execute(revert_code(written), until=None))
    assert execution.stdout.strip() == "Nothing was reverted: cell 2 was changed after the turn."
    assert fake.cells[1]["source"].endswith("# the user's line")
    assert [c["id"] for c in fake.cells] == ["c-load", "c-func", "c-new"]
    assert [r["type"] for r in fake.requests] == ["list_cells"]
    assert written.read_text() == "after\n"
    fake.close()


def test_the_changes_list_reverts_one_hunk_then_all_that_is_left(
    kernel: Kernel, utils_py: Path
) -> None:
    edit_turn(kernel, utils_py)
    edited = utils_py.read_text()
    view = kernel.execute("%acp --changes", until="idle")
    assert view.widget_display is not None, view.describe()
    saved_without_widgets(view.widget_display.content["data"], rel(kernel, utils_py))
    reverts = view.buttons("Revert")
    assert len(reverts) >= 2, "the demo's edit of utils.py has a hunk per function"

    kernel.click("Revert", within=view)  # the last hunk only
    kernel.wait_for(lambda: utils_py.read_text() != edited, "the hunk to be reverted")
    partly = utils_py.read_text()
    assert partly != UTILS_PY
    assert partly.splitlines()[:3] == edited.splitlines()[:3]  # the first hunk stays

    kernel.click("Revert all")
    kernel.wait_for(lambda: utils_py.read_text() == UTILS_PY, "the rest to be reverted")


HELPER_PY = "def double(result):\n    return result * 2\n"


def test_undo_restores_the_cell_and_the_file_one_turn_renamed(
    kernel: Kernel, workdir: Path, function_notebook: FakeFrontend
) -> None:
    fake = function_notebook
    helper = workdir / "helper.py"
    helper.write_text(HELPER_PY)
    # One turn through %acp: the cell through edit_cell, then the file through fs/*.
    prompt = f"%acp -p allow /rename result acc {rel(kernel, helper)}"
    turn = fake.serve(kernel.execute(prompt, allow_stdin=False, until=None))
    assert not turn.errors, turn.describe()
    assert fake.cells[1]["source"] == RENAMED
    assert helper.read_text() == HELPER_PY.replace("result", "acc")
    assert f"Changed in this turn: cell 2 (+3 −3), {rel(kernel, helper)} (+2 −2)." in (turn.plain)

    undo = fake.serve(kernel.execute("%acp --undo", until=None))
    assert undo.stdout.strip() == f"Reverted cell 2, {rel(kernel, helper)}."
    assert fake.cells[1]["source"] == FUNCTION
    assert helper.read_text() == HELPER_PY


def saved_without_widgets(data: dict[str, Any], path: str) -> None:
    """The changes list's output also holds its saved form: a notebook saved with it and
    converted without the widget's state (nbconvert) shows the list and its diffs."""
    assert data["text/markdown"].startswith(f"Changed in this turn: {path} (+"), data
    assert "```diff\n@@ " in data["text/markdown"]
    assert data["text/plain"].endswith("`%acp --undo` reverts it.")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%acp --changes")
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    nb.cells = [cell]
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert f"Changed in this turn: {path} (+" in html
    assert "application/vnd.jupyter.widget-view+json" not in html


def test_a_cell_edit_the_policy_denies_reads_rejected_not_failed(
    kernel: Kernel, function_notebook: FakeFrontend
) -> None:
    """Issue 13: a call the client refused is shown as rejected by whoever refused it (here
    the policy), although the agent reports its tool call failed."""
    fake = function_notebook
    turn = fake.serve(kernel.execute("%acp -p deny /rename result acc", until=None))
    assert not turn.errors, turn.describe()
    assert fake.cells[1]["source"] == FUNCTION
    assert "🚫 rejected by the policy deny" in turn.plain
    assert "❌ failed" not in turn.plain
