"""The demonstration that edits the open notebook: ``/rename OLD NEW`` renames a name in
the cell above the prompt through the ``notebook`` MCP server's ``edit_cell`` (the user
reviews it in the cell), the way a real agent uses the tools a client gives it;
``/rename OLD NEW FILE`` then renames it in FILE too (``fs/write_text_file``, asked like
``/edit``), so one turn changes a cell and a file.

A refactoring prompt with code attached uses the same path (:func:`edit_cell_holding`): the
cell holding that code gets the mechanical edit. The session must have been given that server (acp_notebook does in JupyterLab 4 and
Notebook 7 with its extension); without it, or without its live cell tools, the reply
says what is missing. Deterministic: the cell is the nearest code cell above the one
holding the prompt that uses OLD as a word (or the last such cell), and the edit is a
whole-word replacement.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from .content import text_content
from .mcp_client import McpTools, connect
from .replies import StopReason, usage
from .tools import Proposal, apply_edit, read_to_change
from .turn import Turn

__all__ = [
    "NOTEBOOK_SERVER",
    "Cell",
    "edit_cell_holding",
    "parse_cells",
    "pick_cell",
    "scene_rename",
]

#: The MCP server acp_notebook gives its agents.
NOTEBOOK_SERVER = "notebook"

_CELL = re.compile(
    r"^cell (?P<number>\d+) · id `(?P<id>[^`]+)` · (?P<type>\w+)"
    r"(?: · \[(?P<count>\d+)\])?[^\n]*\n"
    r"(?P<fence>`{3,})[^\n]*\n(?P<source>.*?)\n(?P=fence)$",
    re.MULTILINE | re.DOTALL,
)
_NAME = re.compile(r"[A-Za-z_]\w*")


@dataclass(frozen=True)
class Cell:
    #: Its place in the notebook, from 1.
    number: int
    id: str
    cell_type: str
    source: str
    #: The execution count the cell shows (``[11]``), None when it has not run.
    count: int | None = None

    @property
    def label(self) -> str:
        """How the user finds it: by the execution count the cell shows ("cell [11]"),
        by its place ("cell 21") only when it has not run."""
        return f"cell [{self.count}]" if self.count is not None else f"cell {self.number}"


def parse_cells(text: str) -> list[Cell]:
    """The cells in a ``list_cells`` or ``read_cell`` answer."""
    return [
        Cell(
            int(match["number"]),
            match["id"],
            match["type"],
            match["source"],
            int(match["count"]) if match["count"] else None,
        )
        for match in _CELL.finditer(text)
    ]


def _uses(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.]){re.escape(name)}\b")


def pick_cell(cells: list[Cell], prompt: str, old: str) -> Cell | None:
    """The nearest code cell above the prompt's cell that uses ``old`` (a cell holding
    the same prompt is never one)."""
    holding = [i for i, cell in enumerate(cells) if prompt and prompt in cell.source]
    above = cells[: holding[-1]] if holding else cells
    uses = _uses(old)
    return next(
        (
            c
            for c in reversed(above)
            if c.cell_type == "code" and uses.search(c.source) and prompt not in c.source
        ),
        None,
    )


async def scene_rename(turn: Turn, argument: str) -> StopReason:
    words = argument.split()
    names, file = words[:2], words[2] if len(words) == 3 else None
    if len(words) not in (2, 3) or not all(_NAME.fullmatch(n) for n in names):
        return await usage(turn, "/rename OLD NEW [FILE]")
    old, new = names
    server = turn.session.mcp_stdio.get(NOTEBOOK_SERVER)
    if server is None:
        return await turn.reply(
            f"I edit cells through the client's `{NOTEBOOK_SERVER}` MCP server, and this "
            "session was not given one. acp_notebook gives it to its agents in a notebook."
        )
    async with connect(server) as tools:
        if "edit_cell" not in await tools.names():
            return await turn.reply(
                "The notebook's live cell tools are not offered here: they need JupyterLab 4 "
                "or Notebook 7 with the acp-notebook extension. Nothing was changed."
            )
        listed = await tools.call("list_cells", {})
        cell = pick_cell(parse_cells(listed.text), turn.first_text.strip(), old)
        if listed.is_error or cell is None:
            why = listed.text if listed.is_error else f"No code cell above this one uses `{old}`."
            return await turn.reply(f"{why} Nothing was changed.")
        current = await _read(tools, cell)
        source = _uses(old).sub(new, current.source)
        edit = Edit(
            f"Rename `{old}` to `{new}` in {current.label}",
            f"Rename {old} to {new}",
            "rename",
            f"Renamed `{old}` to `{new}` in {current.label}.",
        )
        then = (lambda: _rename_in_file(turn, file, old, new)) if file is not None else None
        return await _propose(turn, tools, current, source, edit, then)


async def _rename_in_file(turn: Turn, name: str, old: str, new: str) -> StopReason:
    """The same rename in a file, written through the client after its permission."""
    read = await read_to_change(turn, name, "read the file to rename in")
    if not isinstance(read, tuple):
        return read
    path, text = read
    renamed = _uses(old).sub(new, text)
    shown = turn.display(path)
    if renamed == text:
        return await turn.reply(f"`{shown}` does not use `{old}`; it was not changed.")
    proposal = Proposal(renamed, f"Renamed `{old}` to `{new}` in `{shown}` as well.")
    title = f"Rename {old} to {new} in {shown}"
    return await apply_edit(turn, path, text, proposal, title=title, action="rename")


async def edit_cell_holding(turn: Turn, code: str, new_code: str, what: str) -> StopReason | None:
    """Replace ``code`` with ``new_code`` in the notebook cell that holds it, through
    ``edit_cell`` (reviewed in that cell); None when there is no notebook server with the
    live cell tools, or no cell holds the code (the caller answers another way)."""
    server = turn.session.mcp_stdio.get(NOTEBOOK_SERVER)
    if server is None or not code.strip():
        return None
    async with connect(server) as tools:
        if "edit_cell" not in await tools.names():
            return None
        listed = await tools.call("list_cells", {})
        prompt = turn.first_text.strip()
        holding = [
            c
            for c in parse_cells(listed.text)
            if c.cell_type == "code" and code.strip() in c.source and prompt not in c.source
        ]
        if listed.is_error or not holding:
            return None
        current = await _read(tools, holding[-1])
        if code.strip() not in current.source:
            return None
        source = current.source.replace(code.strip(), new_code.strip(), 1)
        what_ = what[:1].upper() + what[1:]  # str.capitalize would lower `Names`
        edit = Edit(
            f"{what_} in {current.label}",
            what_,
            "change",
            f"{current.label[:1].upper()}{current.label[1:]} now has the change ({what}).",
        )
        return await _propose(turn, tools, current, source, edit)


async def _read(tools: McpTools, cell: Cell) -> Cell:
    """The cell read whole (``list_cells`` may cut a long source)."""
    read = await tools.call("read_cell", {"id": cell.id})
    found = parse_cells(read.text)
    return found[0] if found and not read.is_error else cell


@dataclass(frozen=True)
class Edit:
    """How an ``edit_cell`` call is named: its tool call's title, the line above the diff,
    the noun of the failure sentence, and the reply once it is done."""

    title: str
    description: str
    noun: str
    done: str


async def _propose(
    turn: Turn,
    tools: McpTools,
    cell: Cell,
    source: str,
    edit: Edit,
    then: Callable[[], Awaitable[StopReason]] | None = None,
) -> StopReason:
    """``edit_cell`` as an ``edit`` tool call of the turn; the reply says what became of it.
    Once the cell has the change, ``then`` (if given) goes on with the turn."""
    call = await turn.start_tool_call(
        edit.title,
        "edit",
        raw_input={"server": NOTEBOOK_SERVER, "tool": "edit_cell", "id": cell.id},
    )
    await call.update(status="in_progress")
    arguments = {"id": cell.id, "source": source, "description": edit.description}
    answer = await tools.call("edit_cell", arguments)
    if answer.is_error:
        await call.fail(answer.text)
        return await turn.reply(f"The {edit.noun} did not happen: {answer.text}")
    await call.update(status="completed", content=[text_content(answer.text)])
    done = await turn.reply(edit.done)
    return await then() if then is not None else done
