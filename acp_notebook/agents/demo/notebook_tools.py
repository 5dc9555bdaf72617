"""``/tools [CODE]``: the notebook tools, used as a real MCP client would.

The client (acp_notebook in a kernel) offers every session an MCP server named
``notebook`` in ``session/new``. This scene starts it over stdio with the official ``mcp``
client (``mcp_client.py``), lists the user's variables, inspects one (a data frame when
there is one), and runs CODE in the kernel through ``run_code`` — which the client
approves like any tool call: the code is shown with Allow and Reject, rules and the
policy apply, and denied code does not run (the tool answers with an error).
"""

from __future__ import annotations

import re

from .edits import fence
from .mcp_client import McpAnswer, connect
from .replies import StopReason
from .turn import Turn

__all__ = ["scene_tools"]

SERVER = "notebook"
DEFAULT_CODE = "print('hello from the demo agent')"
#: Characters of each tool answer quoted in the reply.
QUOTE_CHARS = 1500
_VARIABLE = re.compile(r"^- `([^`]+)`: (.*)$", re.MULTILINE)


def _quote(answer: McpAnswer) -> str:
    text = answer.text
    if len(text) > QUOTE_CHARS:
        text = text[:QUOTE_CHARS] + f"\n… ({len(answer.text) - QUOTE_CHARS:,} more characters)"
    return fence(text)


def _pick(listing: str) -> str | None:
    """The variable to inspect: the first data frame, else the newest variable."""
    found: list[tuple[str, str]] = _VARIABLE.findall(listing)
    frames = [name for name, label in found if label.startswith("DataFrame")]
    names = frames or [name for name, _ in reversed(found)]
    return names[0] if names else None


async def scene_tools(turn: Turn, arg: str) -> StopReason:
    server = turn.session.mcp_stdio.get(SERVER)
    if server is None:
        return await turn.reply(
            f"The client gave this session no `{SERVER}` MCP server in `session/new`, so I "
            "have no notebook tools to use. acp_notebook offers them from a kernel (unless "
            "`--no-tools` or `%config AcpMagics.tools = False`)."
        )
    code = arg.strip() or DEFAULT_CODE
    await turn.say(
        f"I connect to the `{SERVER}` MCP server the client offered in `session/new` "
        "(over stdio, with the official MCP client) and use its tools.\n\n"
    )
    async with connect(server) as tools:
        names = await tools.names()
        await turn.say(f"**Tools:** {', '.join(f'`{n}`' for n in names)}.\n\n")
        listing = await tools.call("list_variables", {})
        await turn.say(f"**`list_variables`** answered:\n{_quote(listing)}\n\n")
        name = _pick(listing.text)
        if name is not None:
            inspected = await tools.call("inspect_variable", {"name": name})
            await turn.say(f"**`inspect_variable({name!r})`** answered:\n{_quote(inspected)}\n\n")
        await turn.say(
            f"Now **`run_code`** with:\n{fence(code, 'python')}\nThe client asks you first.\n\n"
        )
        ran = await tools.call("run_code", {"code": code})
    if ran.is_error:
        return await turn.reply(f"`run_code` answered with an error:\n{_quote(ran)}")
    return await turn.reply(f"`run_code` answered:\n{_quote(ran)}")
