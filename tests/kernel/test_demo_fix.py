"""``%acp --fix`` with the demo agent in a real kernel: for the errors it recognises it
proposes a real fix in the cell that raised (reviewed there like any cell edit; the test
client plays the notebook's extension and accepts), and the fixed cell runs. Without the
extension the fix is shown as code. Titles name a cell by the execution count it shows."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from .conftest import Execution, Kernel
from .fake_frontend import FUNCTION, RENAMED, FakeFrontend

pytestmark = pytest.mark.kernel

SALES = "import pandas as pd\nsales = pd.DataFrame({'price': [2.0, 3.0], 'qty': [1, 4]})"


@pytest.fixture
def notebook(kernel: Kernel) -> Iterator[FakeFrontend]:
    """A live notebook whose cells the tests fill, connected to the kernel."""
    fake = FakeFrontend(kernel)
    fake.cells = [fake.cell("c-load", "code", "%load_ext acp_notebook", 1)]
    fake.connect()
    try:
        yield fake
    finally:
        fake.close()


def run(kernel: Kernel, fake: FakeFrontend, cell_id: str, source: str) -> Execution:
    """Run ``source`` as the notebook's cell ``cell_id`` (added to the page as it ran)."""
    execution = kernel.execute(source, cell_id=cell_id)
    count = execution.of_type("execute_input")[0].content["execution_count"]
    fake.cells.append(fake.cell(cell_id, "code", source, count))
    return execution


def fix(kernel: Kernel, fake: FakeFrontend) -> str:
    """``%acp --fix`` from a cell of its own, every proposal accepted; its transcript."""
    turn = fake.serve(kernel.execute("%acp --fix", until=None, cell_id="c-acp"))
    assert not turn.errors, turn.describe()
    return turn.wait("final") and turn.markdown


def test_fix_guards_the_division_by_zero_in_the_cell_that_raised(
    kernel: Kernel, notebook: FakeFrontend
) -> None:
    raised = run(kernel, notebook, "c-div", "total = 0\nmean = 10 / total")
    assert raised.errors and "ZeroDivisionError" in raised.describe()

    transcript = fix(kernel, notebook)

    fixed = notebook.cells[1]["source"]
    assert fixed == 'total = 0\nmean = 10 / total if total != 0 else float("nan")'
    assert "`total` was 0" in transcript
    assert not run(kernel, notebook, "c-div2", fixed).errors
    assert math.isnan(float(kernel.text("print(mean)")))


def test_fix_replaces_an_undefined_name_by_the_kernels_nearest_one(
    kernel: Kernel, notebook: FakeFrontend
) -> None:
    run(kernel, notebook, "c-sales", SALES)
    raised = run(kernel, notebook, "c-typo", "salse.head(1)")
    assert "NameError" in raised.describe()

    transcript = fix(kernel, notebook)

    assert notebook.cells[2]["source"] == "sales.head(1)"
    assert "`salse` is not defined in the kernel; `sales` is" in transcript


def test_fix_replaces_a_missing_column_by_the_frames_nearest_one(
    kernel: Kernel, notebook: FakeFrontend
) -> None:
    run(kernel, notebook, "c-sales", SALES)
    raised = run(kernel, notebook, "c-key", "revenue = (sales['prce'] * sales['qty']).sum()")
    assert "KeyError" in raised.describe()

    transcript = fix(kernel, notebook)

    fixed = notebook.cells[2]["source"]
    assert fixed == "revenue = (sales['price'] * sales['qty']).sum()"
    assert "its column `price` is the closest" in transcript
    assert not run(kernel, notebook, "c-key2", fixed).errors
    assert kernel.text("print(revenue)").strip() == "14.0"


def test_a_fix_the_demo_cannot_find_is_explained_and_proposes_nothing(
    kernel: Kernel, notebook: FakeFrontend
) -> None:
    run(kernel, notebook, "c-far", "zzqqy_undefined + 1")

    transcript = fix(kernel, notebook)

    assert "no name the kernel has is close to it" in transcript
    assert notebook.cells[1]["source"] == "zzqqy_undefined + 1"
    assert not [r for r in notebook.requests if r["type"] == "propose"]


def test_without_the_extension_the_fix_is_shown_as_code(kernel: Kernel) -> None:
    kernel.execute("count = 0\nshare = 1 // count")

    turn = kernel.execute("%acp --fix", until="final")

    assert 'share = 1 // count if count != 0 else float("nan")' in turn.markdown
    assert "+share = 1 // count if count != 0" in turn.markdown


def test_an_edits_title_names_the_cell_by_the_execution_count_it_shows(
    kernel: Kernel, notebook: FakeFrontend
) -> None:
    # A rename of the function in the notebook's second cell, shown as [7], was titled
    # "cell 2" (its place), which the user cannot find on the page.
    notebook.cells.append(notebook.cell("c-func", "code", FUNCTION, 7))
    turn = notebook.serve(kernel.execute("%acp /rename result acc", until=None, cell_id="c-acp"))
    assert not turn.errors, turn.describe()
    turn.wait("final")

    assert notebook.cells[1]["source"] == RENAMED
    assert "Rename `result` to `acc` in cell [7]" in turn.markdown
    assert "Renamed `result` to `acc` in cell [7]." in turn.markdown
