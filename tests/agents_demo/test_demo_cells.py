"""The demo agent's ``/rename``: which cell it picks from the notebook server's answers
(in the notebook tools' own format), and what it says when it has no notebook server.
The rename through a real tools server is in tests/tools/test_live_tools.py."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from acp_notebook.agents.demo.cells import parse_cells, pick_cell
from acp_notebook.client import ClientConnection
from acp_notebook.notebook.frontend.protocol import LiveCell
from acp_notebook.notebook.tools.cell_reads import describe_cell
from tests.client.helpers import DEMO, SAFETY

FUNCTION = "def total(values):\n    result = 0\n    for v in values:\n        result += v\n    return result"


def listed(*cells: tuple[str, str, str]) -> str:
    """A list_cells answer for ``(id, type, source)`` cells, as the tool writes it."""
    described = [
        describe_cell(
            LiveCell(
                id=i,
                index=n,
                cell_type=t,
                source=s,
                execution_count=None,
                outputs_text="",
                truncated=False,
            )
        )[0]
        for n, (i, t, s) in enumerate(cells)
    ]
    return "The notebook nb.ipynb (JupyterLab), cells:\n\n" + "\n\n".join(described)


def test_cells_are_read_back_from_the_tools_answer_whole() -> None:
    tricky = "x = '''\n```\nnot a fence end\n```\n'''"
    cells = parse_cells(
        listed(("a", "code", FUNCTION), ("b", "markdown", "# Title"), ("c", "code", tricky))
    )
    assert [(c.number, c.id, c.cell_type, c.source) for c in cells] == [
        (1, "a", "code", FUNCTION),
        (2, "b", "markdown", "# Title"),
        (3, "c", "code", tricky),
    ]


def test_the_cell_renamed_is_the_nearest_code_cell_above_the_prompt_using_the_name() -> None:
    cells = parse_cells(
        listed(
            ("old", "code", "result = 1"),
            ("func", "code", FUNCTION),
            ("note", "markdown", "result"),
            ("earlier", "code", "%acp /rename result acc"),
            ("prompt", "code", "%acp /rename result acc"),
            ("after", "code", "result = 2"),
        )
    )
    picked = pick_cell(cells, "/rename result acc", "result")
    assert picked is not None and picked.id == "func"
    # A name that is only part of another one (or an attribute) is not a use.
    assert pick_cell(cells, "/rename res acc", "res") is None


@pytest.mark.anyio
async def test_without_the_notebook_server_the_rename_says_so_and_changes_nothing(
    tmp_path: Path,
) -> None:
    async with ClientConnection.spawn(DEMO) as conn:
        with anyio.fail_after(SAFETY):
            await conn.initialize()
            session = await conn.new_session(tmp_path, policy="allow")
            turn = await session.prompt("/rename result acc")
    text = turn.bundle()["text/markdown"]
    assert "this session was not given one" in text


@pytest.mark.anyio
async def test_a_rename_takes_two_names_and_an_optional_file(tmp_path: Path) -> None:
    async with ClientConnection.spawn(DEMO) as conn:
        with anyio.fail_after(SAFETY):
            await conn.initialize()
            session = await conn.new_session(tmp_path, policy="allow")
            turn = await session.prompt("/rename result acc helper.py extra")
    assert "Usage: `/rename OLD NEW [FILE]`" in turn.bundle()["text/markdown"]
