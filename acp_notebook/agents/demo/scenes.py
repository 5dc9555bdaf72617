"""The demo agent's slash commands: the table, the dispatch of a prompt to its scene, and
the demonstrations that need no client tool (streaming, plans, thoughts, stop reasons,
modes, titles, images, unknown types).

Every scene is an ``async`` function ``(turn, argument) -> stop reason`` written against
the :class:`~.turn.Turn` API; the scenes that use the client's tools live in
:mod:`.tools`, the elicitation ones in :mod:`.elicitation`, plain prompts in
:mod:`.prompt`. ``/help`` lists the table.
"""

from __future__ import annotations

import base64
import re
from typing import NamedTuple

import anyio

from ...client.formatting import first_line
from ...protocol import models as m
from ...protocol.errors import INTERNAL_ERROR, RpcError
from .cells import scene_rename
from .content import demo_png, long_markdown_pieces
from .elicitation import scene_ask, scene_ask_url
from .newest import scene_compact, scene_named, scene_notice
from .notebook_tools import scene_tools
from .prompt import scene_prompt
from .replies import STEP_DELAY, Scene, StopReason, usage
from .tools import scene_edit, scene_read, scene_run, scene_write
from .turn import Turn

__all__ = ["COMMANDS", "NOTES", "Command", "available_commands", "run_prompt"]

SLOW_DELAY = 0.1
LONG_DEFAULT = 3000
LONG_MAX = 100_000


async def scene_help(turn: Turn, arg: str) -> StopReason:
    def cell(text: str) -> str:
        # A "|" inside a Markdown table cell ends the cell unless escaped, even in code.
        return text.replace("|", "\\|")

    rows = "\n".join(
        f"| {cell(f'`/{c.name} {c.hint}`' if c.hint else f'`/{c.name}`')} | {cell(c.description)} |"
        for c in COMMANDS.values()
    )
    return await turn.reply(
        "I am the acp_notebook demo agent. I do not understand language: I show what an ACP "
        "agent sends and why, and I really read, write and run things through your client.\n\n"
        f"| command | what it demonstrates |\n|---|---|\n{rows}\n\n"
        "Anything else gets a description of the content blocks I received; a prompt like "
        "`refactor utils.py` (or with Python code attached) gets a mechanical refactoring, and "
        "an error sent with `%acp --fix` gets a fix proposed in the cell that raised it when I "
        "recognise it (a division by zero, a misspelt name or column)."
    )


PLAN = [
    ("Read the files involved", "high"),
    ("Propose the change as a diff", "high"),
    ("Ask for permission before writing", "medium"),
    ("Run the tests", "medium"),
    ("Summarise what changed", "low"),
]


async def scene_plan(turn: Turn, arg: str) -> StopReason:
    statuses = ["pending"] * len(PLAN)

    async def show() -> None:
        await turn.plan([(c, p, s) for (c, p), s in zip(PLAN, statuses, strict=True)])

    await turn.say(
        "A plan demonstration: I send a `plan` update, then a new one each time a step "
        "changes (every update replaces the whole plan). Nothing is touched for real.\n\n"
    )
    await show()
    for index, (content, _) in enumerate(PLAN):
        statuses[index] = "in_progress"
        await show()
        await turn.say(f"{index + 1}. {content}… ")
        await anyio.sleep(STEP_DELAY)
        statuses[index] = "completed"
        await show()
        await turn.say("done.\n")
    return await turn.reply("\nAll five steps are completed.")


THOUGHTS = [
    "The user asked me to think. ",
    "A real model would reason here about the request, ",
    "which files to read, ",
    "and what could go wrong. ",
    "These words are `agent_thought_chunk` updates: ",
    "clients show them apart from the answer, ",
    "often collapsed.",
]


async def scene_think(turn: Turn, arg: str) -> StopReason:
    for piece in THOUGHTS:
        await turn.think(piece)
        await anyio.sleep(STEP_DELAY / 4)
    return await turn.reply(
        "That was my reasoning, streamed as `agent_thought_chunk` updates. This answer is "
        "an `agent_message_chunk`, a new message with its own `messageId`."
    )


#: Fifty words, one chunk each, SLOW_DELAY apart: five seconds.
SLOW_TEXT = (
    "This reply streams one word every tenth of a second, so you have five seconds to press "
    "stop. On session/cancel I stop at once and answer the prompt with the stop reason "
    "cancelled, not an error, after the updates already sent. Every ACP agent must behave "
    "this way when cancelled."
)


async def scene_slow(turn: Turn, arg: str) -> StopReason:
    words = SLOW_TEXT.split()
    for index, word in enumerate(words):
        await turn.say(word + (" " if index < len(words) - 1 else "\n"))
        await anyio.sleep(SLOW_DELAY)
    return await turn.reply("\n(Finished without being cancelled.)")


async def scene_refuse(turn: Turn, arg: str) -> StopReason:
    return await turn.reply(
        'I refuse this one, on purpose: the turn ends with `stopReason: "refusal"`. '
        "A client should show that the agent declined, and drop this prompt and everything "
        "after it from the next turn's context (spec).",
        "refusal",
    )


async def scene_long(turn: Turn, arg: str) -> StopReason:
    word = arg.strip()
    if word and not (word.isdigit() and 0 < int(word) <= LONG_MAX):
        return await usage(turn, f"/long [N]  (N chunks, 1 to {LONG_MAX})")
    count = int(word) if word else LONG_DEFAULT
    for piece in long_markdown_pieces(count):
        await turn.say(piece)  # each is awaited: a cancel stops the stream right here
    return "end_turn"


async def scene_image(turn: Turn, arg: str) -> StopReason:
    png = demo_png()
    await turn.say(
        "Here is an image, sent as an `image` content block (base64 PNG) in an `agent_message_chunk`:\n\n"
    )
    image = m.ImageContentBlock(data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
    await turn.send(m.AgentMessageChunk(content=image, message_id=turn.message_id("agent")))
    return await turn.reply(f"\n\nIt is a {len(png)}-byte, 64×64 PNG made with zlib and struct.")


async def scene_usage(turn: Turn, arg: str) -> StopReason:
    session, model = turn.session, turn.session.model_info
    return await turn.reply(
        "Every turn of mine ends with a `usage_update`: `used` tokens in context out of "
        f"`size` ({model.context_window:,} for `{model.value}`). The numbers are deterministic: "
        "4 characters make a token. A real agent may add `cost` (the session's cost so far, "
        "with its currency); I send none, because I cost nothing and a pretend price would "
        f"mislead. Before this turn: {session.input_chars:,} characters in, "
        f"{session.output_chars:,} out."
    )


async def scene_mode(turn: Turn, arg: str) -> StopReason:
    wanted = arg.strip()
    if wanted not in ("ask", "code"):
        return await turn.reply(
            f"The session is in `{turn.session.mode}` mode. `/mode ask` or `/mode code` makes "
            "me switch it myself: agents may change mode on their own (e.g. after planning), "
            "and tell the client with `current_mode_update`."
        )
    await turn.host.change_mode(turn.session, wanted)
    return await turn.reply(
        f"I switched the session to `{wanted}` mode myself and told the client with "
        "`current_mode_update` (and `config_option_update`, since the mode is also a config option)."
    )


async def scene_title(turn: Turn, arg: str) -> StopReason:
    title = first_line(arg)
    if not title:
        return await usage(turn, "/title TEXT")
    turn.session.title = title
    await turn.send(m.SessionInfoUpdate(title=title), record=False)
    return await turn.reply(f"I renamed the session to “{title}” with a `session_info_update`.")


async def scene_fail(turn: Turn, arg: str) -> StopReason:
    call = await turn.start_tool_call(
        "Run a tool that fails on purpose", "other", raw_input={"fail": True}
    )
    await call.update(status="in_progress")
    await anyio.sleep(STEP_DELAY)
    await call.fail(
        "Error: the demo tool failed on purpose.", raw_output={"error": "failed on purpose"}
    )
    return await turn.reply(
        "That tool call ended with status `failed`. A real agent reports the failure like "
        "this, then decides what to do next; the turn itself still ends normally."
    )


async def scene_unknown(turn: Turn, arg: str) -> StopReason:
    # Deliberately outside the schema: a newer agent may send variants this client has
    # never heard of, and clients must ignore them instead of failing.
    await turn.send(
        {"sessionUpdate": "demo_future_update", "detail": "an update type from the future"},
        record=False,
    )
    await turn.send(
        m.AgentMessageChunk(
            content=m.UnknownContentBlock(raw={"type": "demo_future_block", "data": "?"}),
            message_id=turn.message_id("agent"),
        ),
        record=False,
    )
    return await turn.reply(
        "I just sent a `session/update` whose `sessionUpdate` is `demo_future_update` and a "
        "message chunk whose content `type` is `demo_future_block`. Neither exists in ACP v1: "
        "a client must tolerate both (ignore them, or show them as unknown) and carry on."
    )


async def scene_error(turn: Turn, arg: str) -> StopReason:
    raise RpcError(
        INTERNAL_ERROR,
        "The demo agent failed on purpose (/error): this is how a JSON-RPC error answer to "
        "session/prompt looks.",
    )


STOP_REASONS = ("end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled")


async def scene_stop(turn: Turn, arg: str) -> StopReason:
    reason = arg.strip()
    if reason not in STOP_REASONS:
        return await usage(turn, "/stop " + "|".join(STOP_REASONS))
    return await turn.reply(f'This turn ends with `stopReason: "{reason}"`, as you asked.', reason)


class Command(NamedTuple):
    """A slash command: its ``available_commands_update`` entry and its scene."""

    name: str
    description: str
    scene: Scene
    hint: str = ""


COMMANDS: dict[str, Command] = {
    c.name: c
    for c in [
        Command("help", "List the commands and what each demonstrates", scene_help),
        Command("read", "Read a file through the client in line windows (fs/read_text_file)", scene_read, "PATH [LINE [LIMIT]]"),
        Command("edit", "Propose an edit as a diff, ask permission, write it (fs/write_text_file)", scene_edit, "PATH"),
        Command("write", "Create or overwrite a file with TEXT, after asking permission", scene_write, "PATH TEXT"),
        Command("rename", "Rename a name in the cell above, reviewed in the cell (edit_cell), and in a FILE", scene_rename, "OLD NEW [FILE]"),
        Command("run", "Run a shell command in a client terminal, after asking permission", scene_run, "COMMAND"),
        Command("tools", "Use the notebook tools (MCP): list and inspect variables, run CODE after asking", scene_tools, "[CODE]"),
        Command("plan", "Show a plan whose steps progress during the turn", scene_plan),
        Command("think", "Stream reasoning as thought chunks, then answer", scene_think),
        Command("slow", "Stream for five seconds: try cancelling it", scene_slow),
        Command("refuse", "End the turn with the refusal stop reason", scene_refuse),
        Command("long", "Stream a long Markdown reply in thousands of chunks", scene_long, "[N]"),
        Command("image", "Reply with an image content block (PNG)", scene_image),
        Command("usage", "Explain the usage_update sent at the end of every turn", scene_usage),
        Command("mode", "Let the agent switch the session mode itself", scene_mode, "ask|code"),
        Command("title", "Rename the session (session_info_update)", scene_title, "TEXT"),
        Command("fail", "Show a tool call that fails", scene_fail),
        Command("ask", "Ask you to fill in a form (elicitation/create, mode form)", scene_ask),
        Command("ask-url", "Ask you to open a URL inside a tool call (elicitation, mode url)", scene_ask_url),
        Command("notice", "Send session notices, one per severity (notice)", scene_notice, "[info|warning|error]"),
        Command("compact", "Compact the context, streaming its summary (compaction_update)", scene_compact),
        Command("named", "A tool call with a generic title and a name (tool_call name)", scene_named, "[QUERY]"),
        Command("unknown", "Send an update type and a content type no client knows", scene_unknown),
        Command("error", "Answer the prompt with a JSON-RPC error", scene_error),
        Command("stop", "End the turn with the given stop reason", scene_stop, "REASON"),
    ]
}  # fmt: skip

#: A protocol note per command, added to the reply when the `verbose` option is on.
NOTES: dict[str, str] = {
    "read": "`tool_call` (kind `read`, `locations`) → `fs/read_text_file` with `line`/`limit` → `tool_call_update` completed with a `content` item.",
    "edit": "`tool_call` (kind `edit`) with `diff` content → `session/request_permission` → `fs/write_text_file` only if allowed → `tool_call_update` completed or failed.",
    "rename": "An MCP client of the `notebook` server given in `session/new`: `list_cells`, `read_cell`, then `edit_cell`, which the user accepts or rejects in the cell; reported as a `tool_call` of kind `edit`. With FILE, then the file as /edit writes one.",
    "write": "Like /edit; a `diff` with `oldText: null` means a new file.",
    "run": "`session/request_permission` → `terminal/create` → `terminal` content in the tool call → `terminal/wait_for_exit` → `terminal/output` → `terminal/release`.",
    "plan": "Each `plan` update carries every entry: clients replace the plan, they never merge.",
    "think": "`agent_thought_chunk` and `agent_message_chunk` carry different `messageId`s.",
    "slow": "`session/cancel` is a notification; the prompt still gets an answer: `stopReason: \"cancelled\"`.",
    "long": "Thousands of `session/update` notifications before the `session/prompt` answer.",
    "image": "Agents may send any content block type in a message chunk.",
    "ask": "`elicitation/create` (mode `form`, `requestedSchema`) → the client answers `accept` with `content`, `decline` or `cancel`.",
    "ask-url": "`elicitation/create` (mode `url`, `elicitationId`, `toolCallId`) → `accept` (consent only) → `elicitation/complete` when the flow is done.",
    "notice": "`session/update` with `notice` (`severity`, `title`, `description`), only when the client advertised `session.notices`.",
    "compact": "`compaction_update` (`compactionId`, `status`) → `compaction_summary_chunk`s → `compaction_update` `completed`; only with `session.compaction`.",
    "named": "`tool_call` with `name` (the tool's programmatic name) beside a generic `title`.",
    "prompt": "Content blocks other than `text` and `resource_link` are only allowed when the agent advertised them in `promptCapabilities`.",
}  # fmt: skip


def available_commands() -> m.AvailableCommandsUpdate:
    """The ``available_commands_update`` sent after session/new, load and resume."""
    return m.AvailableCommandsUpdate(
        available_commands=[
            m.AvailableCommand(
                name=c.name,
                description=c.description,
                input=m.UnstructuredCommandInput(hint=c.hint),
            )
            if c.hint
            else m.AvailableCommand(name=c.name, description=c.description)
            for c in COMMANDS.values()
        ]
    )


async def run_prompt(turn: Turn) -> StopReason:
    """Dispatch a prompt to its scene: a leading ``/name`` picks a command (slash
    commands are plain text in ACP), anything else is a plain prompt."""
    text = turn.first_text
    stripped = text.lstrip()
    match = re.match(r"/([A-Za-z][\w-]*)", stripped)
    if match is None:
        reason = await scene_prompt(turn, text)
        note = NOTES["prompt"]
    else:
        name = match.group(1).lower()
        argument = stripped[match.end() :].removeprefix(" ")
        command = COMMANDS.get(name)
        if command is None:
            await turn.say(f"`/{name}` is not one of my commands.\n\n")
            return await scene_help(turn, "")
        reason = await command.scene(turn, argument)
        note = NOTES.get(name, "")
    if turn.session.verbose and note and reason != "cancelled":
        await turn.say(f"\n\n---\n**Protocol notes.** {note}")
    return reason
