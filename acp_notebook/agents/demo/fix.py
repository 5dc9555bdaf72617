"""A prompt with an error attached (``%acp --fix``, the notebook's Fix button): the demo
agent explains the error and, for the errors :mod:`.repairs` recognises, proposes a fix
in the cell that raised, reviewed there like any cell edit (``edit_cell`` of the
``notebook`` MCP server, the path ``/rename`` and refactoring take).

What the agent knows comes from the prompt and the client's tools, never from guessing:
the error and its cell (the ``notebook://error`` attachment), the code and the variables
sent with it, the kernel's variable names (``list_variables``) and, for a ``KeyError``,
the columns of the value indexed (its ``{name}`` attachment, else ``inspect_variable``).
Without the live cell tools (a console, VS Code) the fix is shown as code and a diff.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...protocol import models as m
from .cells import NOTEBOOK_SERVER, edit_cell_holding
from .edits import fence, shorten, unified_diff
from .mcp_client import McpTools, connect
from .repairs import bound_names, columns_in, lookups, read_failure, repair
from .replies import StopReason
from .turn import Turn

__all__ = ["ERROR_URI", "Attached", "attached", "scene_fix"]

#: The URI acp_notebook gives the last error it attaches.
ERROR_URI = "notebook://error"
_INLINE = re.compile(r"^Attached .*? \[(?P<uri>[^\]\s]+)\]:")
_VARIABLE = re.compile(r"^- `([^`]+)`: ", re.MULTILINE)


@dataclass(frozen=True)
class Attached:
    """One thing the client attached: its URI, the variable name it was sent as (if
    any), and its text."""

    uri: str
    name: str | None
    text: str


def attached(turn: Turn) -> list[Attached]:
    """The text attachments of the prompt: embedded resources, and the inline text an
    agent without ``embeddedContext`` gets ("Attached … [uri]:")."""
    found = []
    for block in turn.prompt:
        meta = getattr(block, "field_meta", None)
        about = meta.get("acpNotebook") if isinstance(meta, dict) else None
        name = about.get("name") if isinstance(about, dict) else None
        name = name if isinstance(name, str) else None
        if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            found.append(Attached(block.resource.uri, name, block.resource.text))
        elif isinstance(block, m.TextContentBlock) and about is not None:
            match = _INLINE.match(block.text)
            if match is not None:
                found.append(Attached(match["uri"], name, block.text))
    return found


async def scene_fix(turn: Turn, error: Attached) -> StopReason:
    """Explain the attached error and propose a fix for it where there is one."""
    failure = read_failure(error.text)
    if failure is None:
        return await turn.reply(
            "An error was attached, but I could not find its traceback and the cell that "
            "raised it in what was sent, so I have nothing to fix."
        )
    where = f"cell [{failure.number}]" if failure.number is not None else "the cell"
    headline = f"{failure.error}: {failure.message}" if failure.message else failure.error
    await turn.say(f"{where[:1].upper()}{where[1:]} raised `{shorten(headline, 120)}`")
    await turn.say(f" on line {failure.line}.\n\n" if failure.line else ".\n\n")
    sent = attached(turn)
    names = set().union(*(bound_names(_code_of(a.text)) for a in sent if a.uri != ERROR_URI))
    columns = {a.name: columns_in(a.text) for a in sent if a.name}
    server = turn.session.mcp_stdio.get(NOTEBOOK_SERVER)
    if server is not None:
        async with connect(server) as tools:
            names |= await _kernel_names(tools)
            for holder in lookups(failure):
                if not columns.get(holder):
                    columns[holder] = await _columns(tools, holder)
    found = repair(failure, names, columns)
    if isinstance(found, str):
        return await turn.reply(found + " I proposed no change.")
    await turn.say(found.why + "\n\n")
    in_cell = await edit_cell_holding(turn, failure.code, found.code, found.what)
    if in_cell is not None:
        return in_cell
    return await turn.reply(
        "I cannot edit the notebook's cells here (that needs JupyterLab 4 or Notebook 7 "
        f"with the acp-notebook extension), so here is {where}, fixed:\n\n"
        + fence(found.code, "python")
        + "\n\nAs a diff:\n\n"
        + fence(unified_diff(failure.code, found.code, "cell.py"), "diff")
    )


def _code_of(text: str) -> str:
    """The Python in an attachment's fenced blocks (a cell as the client sends it)."""
    blocks = re.findall(r"^(`{3,})python\n(.*?)\n\1$", text, re.MULTILINE | re.DOTALL)
    return "\n".join(body for _, body in blocks)


async def _kernel_names(tools: McpTools) -> set[str]:
    listing = await tools.call("list_variables", {})
    return set() if listing.is_error else set(_VARIABLE.findall(listing.text))


async def _columns(tools: McpTools, holder: str) -> list[str]:
    inspected = await tools.call("inspect_variable", {"name": holder})
    if inspected.is_error:
        return []
    # The answer starts with a header line ("`df`: DataFrame 3×2 (text/markdown)").
    return columns_in(inspected.text.partition("\n\n")[2])
