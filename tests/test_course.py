"""The protocol course (notebooks/protocol_tour.ipynb) hides its exercises' solutions: the
learner's cell holds ``...`` or the call to make as a comment, the solution waits in a
collapsed cell that fills in only what the learner left, and the check says what it expects.
(The notebook still runs top to bottom under nbval: the ``notebooks`` tier.)"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

COURSE = Path(__file__).resolve().parent.parent / "notebooks" / "protocol_tour.ipynb"


def exercises() -> dict[int, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """Exercise number -> (the learner's cell, the solution cell, the check cell)."""
    cells = json.loads(COURSE.read_text(encoding="utf-8"))["cells"]
    found = {}
    for i, cell in enumerate(cells):
        source = "".join(cell["source"])
        match = re.match(r"# Exercise (\d+)", source)
        if cell["cell_type"] == "code" and match:
            found[int(match.group(1))] = (cell, cells[i + 1], cells[i + 2])
    return found


def source(cell: dict[str, Any]) -> str:
    return "".join(cell["source"])


def test_every_exercise_leaves_its_answer_to_the_learner() -> None:
    # The course showed each exercise with its solution filled in, before the learner tried.
    found = exercises()
    assert sorted(found) == [1, 2, 3, 4, 5, 6, 7]
    for number, (mine, solution, check) in found.items():
        code = [line for line in source(mine).splitlines()[1:] if not line.startswith("#")]
        assert all(line.rstrip().endswith("= ...") for line in code), (number, code)
        assert solution["metadata"]["jupyter"]["source_hidden"] is True, number
        assert "solution" in solution["metadata"]["tags"]
        asserts = [line for line in source(check).splitlines() if line.startswith("assert ")]
        assert asserts and all(re.search(r', f?"', line) for line in asserts), (number, asserts)


def run(cells: list[dict[str, Any]], namespace: dict[str, Any]) -> None:
    for cell in cells:
        exec(source(cell), namespace)  # the course's own cells


HELLO = {"protocolVersion": 1, "agentCapabilities": {"promptCapabilities": {"image": True}}}


def test_the_solution_fills_in_what_the_learner_left() -> None:
    namespace: dict[str, Any] = {"hello": HELLO}
    run(list(exercises()[1]), namespace)
    assert namespace["version"] == 1 and namespace["accepts_images"] is True


def test_a_wrong_answer_is_kept_and_the_check_says_what_it_expects() -> None:
    mine, solution, check = exercises()[1]
    namespace: dict[str, Any] = {"hello": HELLO}
    run([mine], namespace)
    namespace["version"] = "1.0"  # the learner's own (wrong) answer
    run([solution], namespace)
    with pytest.raises(AssertionError, match="the protocolVersion the agent answered"):
        run([check], namespace)
