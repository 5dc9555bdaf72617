"""The demonstrations of the demo agent: one prompt turn each (see :mod:`.demo` for the list).

Every scene is an ``async`` function ``(turn, argument) -> stop reason`` written against
the :class:`~.demo_turn.Turn` API; :func:`run_prompt` picks the scene for a prompt.
"""

from __future__ import annotations

import base64
import binascii
import json
import posixpath
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

from ..protocol import models as m
from ..protocol.errors import INTERNAL_ERROR, REQUEST_CANCELLED, RESOURCE_NOT_FOUND, RpcError
from . import demo_edits as edits
from .demo_turn import Permission, Turn, text_content

__all__ = [
    "COMMANDS",
    "NOTES",
    "Command",
    "available_commands",
    "describe_block",
    "prompt_chars",
    "run_prompt",
]

StopReason = str

#: ``terminal/create`` output limit: enough for any demo command, small enough to replay.
OUTPUT_BYTE_LIMIT = 64 * 1024
#: Seconds to wait for the ``terminal/create`` answer (it should come at once).
CREATE_TIMEOUT = 30.0
#: How many lines ``/read`` shows when no LIMIT is given, and the window for counting.
READ_LIMIT = 20
COUNT_WINDOW = 500
COUNT_WINDOWS_MAX = 20
#: Seconds between the steps of the paced demonstrations (so a UI visibly progresses).
STEP_DELAY = 0.2
SLOW_DELAY = 0.1
LONG_DEFAULT = 3000
LONG_MAX = 100_000


# --- helpers shared by the scenes ----------------------------------------------------------


def _error_text(exc: RpcError) -> str:
    return f"{exc.message.rstrip('.')} (JSON-RPC error {exc.code})"


def _missing_capability(capability: str, what: str) -> str:
    return (
        f"The client did not advertise `{capability}` in `initialize`, so I may not {what} "
        "(spec: an omitted capability means unsupported). A real agent would fall back to "
        "its own tools or tell you it cannot do this; I skip the step."
    )


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


async def _usage(turn: Turn, command: str) -> StopReason:
    await turn.say(f"Usage: `{command}`. Send `/help` for every command.")
    return "end_turn"


async def _read_whole(turn: Turn, path: str) -> str | None:
    """Read a whole file through the client inside a ``read`` tool call; None (after
    reporting the failure) when it cannot be read."""
    shown = turn.display(path)
    call = await turn.start_tool_call(
        f"Read {shown}", "read", locations=[path], raw_input={"path": path}
    )
    await call.update(status="in_progress")
    try:
        text = await turn.read_text(path)
    except RpcError as exc:
        await call.fail(f"Could not read `{shown}`: {_error_text(exc)}")
        if exc.code == RESOURCE_NOT_FOUND:
            await turn.say(f"I asked the client for `{shown}`; it does not exist.")
        else:
            await turn.say(f"The client could not read `{shown}`: {_error_text(exc)}.")
        return None
    lines = edits.count_lines(text)
    await call.update(
        status="completed",
        content=[text_content(f"Read {lines} line{'s' * (lines != 1)} of `{shown}`.")],
        raw_output={"lines": lines},
    )
    return text


@dataclass
class Proposal:
    """A change to a file: the new text and what it is, in words."""

    new_text: str
    summary: str
    changes: list[str] = field(default_factory=list)


def _propose_edit(path: str, text: str) -> Proposal:
    """What ``/edit`` changes: placeholders for Python, a labelled line otherwise.

    Raises :class:`ValueError` for formats the demo will not edit.
    """
    if path.endswith((".py", ".pyi")):
        try:
            result = edits.add_placeholders(text)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            where = f" (line {line})" if line else ""
            return Proposal(
                edits.append_marker(path, text),
                f"The file is not valid Python{where}, so instead of docstrings I add one "
                "labelled comment line at the end.",
            )
        if result.changed:
            return Proposal(
                result.text,
                "A mechanical demonstration, not an AI refactoring: placeholder docstrings "
                "and `Any` type-hint placeholders for functions that lack them; every other "
                "byte stays as it was.",
                result.changes,
            )
        return Proposal(
            edits.append_marker(path, text),
            "Every function already has a docstring and type hints, so I add one labelled "
            "comment line at the end instead.",
        )
    return Proposal(
        edits.append_marker(path, text),
        "A demonstration edit: one clearly labelled line at the end of the file.",
    )


async def _apply_edit(
    turn: Turn, path: str, old: str | None, proposal: Proposal, *, title: str, action: str
) -> StopReason:
    """Show the change as a ``diff``, ask permission, write it only when allowed."""
    shown = turn.display(path)
    diff = m.DiffToolCallContent(path=path, old_text=old, new_text=proposal.new_text).to_wire()
    call = await turn.start_tool_call(
        title,
        "edit",
        locations=[path],
        content=[diff],
        raw_input={"path": path, "change": action},
    )
    call.cancel_note = f"Cancelled before writing: `{shown}` was not changed."
    if not turn.caps.write:
        await call.fail(
            f"Not written: the client does not offer `fs/write_text_file`; `{shown}` was not changed."
        )
        await turn.say(_missing_capability("fs.writeTextFile", "write files"))
        return "end_turn"
    permission = await turn.permit(call, "edit")
    if permission.how == "cancelled":
        await call.fail(call.cancel_note)
        return "cancelled"
    if not permission.allowed:
        await call.fail(f"Not allowed: `{shown}` was not changed.")
        await turn.say(f"{permission.why}, so I did not write `{shown}`: the file was not changed.")
        return "end_turn"
    await call.update(status="in_progress")
    call.cancel_note = f"Cancelled while the write was in flight: the client may or may not have written `{shown}`."
    try:
        await turn.write_text(path, proposal.new_text)
    except RpcError as exc:
        await call.fail(f"The client could not write `{shown}`: {_error_text(exc)}")
        await turn.say(f"The write failed: {_error_text(exc)}. `{shown}` was not changed by me.")
        return "end_turn"
    await call.update(status="completed")
    reply = [
        f"I wrote `{shown}` through the client (`fs/write_text_file`), {_how(permission, 'edits')}"
    ]
    reply.append(proposal.summary)
    if proposal.changes:
        reply.append("\n".join(f"- {change}" for change in proposal.changes))
    await turn.say("\n\n".join(reply))
    return "end_turn"


def _how(permission: Permission, kind: str) -> str:
    return {
        "once": "after you allowed it once.",
        "always": f"after you chose Allow always: in Code mode I will not ask again for {kind} "
        "in this session (Ask mode always asks).",
        "remembered": f"without asking: you chose Allow always for {kind} earlier in this "
        "session and the session is in Code mode.",
    }.get(permission.how, ".")


# --- the commands --------------------------------------------------------------------------


async def scene_help(turn: Turn, arg: str) -> StopReason:
    def cell(text: str) -> str:
        # A "|" inside a Markdown table cell ends the cell unless escaped, even in code.
        return text.replace("|", "\\|")

    rows = "\n".join(
        f"| {cell(f'`/{c.name} {c.hint}`' if c.hint else f'`/{c.name}`')} | {cell(c.description)} |"
        for c in COMMANDS.values()
    )
    await turn.say(
        "I am the acp_notebook demo agent. I do not understand language: I show what an ACP "
        "agent sends and why, and I really read, write and run things through your client.\n\n"
        f"| command | what it demonstrates |\n|---|---|\n{rows}\n\n"
        "Anything else gets a description of the content blocks I received; a prompt like "
        "`refactor utils.py` (or with Python code attached) gets a mechanical edit proposal."
    )
    return "end_turn"


async def scene_read(turn: Turn, arg: str) -> StopReason:
    name, rest = edits.split_first(arg)
    numbers = rest.split()
    if not name or len(numbers) > 2 or not all(n.isdigit() and int(n) > 0 for n in numbers):
        return await _usage(
            turn, "/read PATH [LINE [LIMIT]]  (LINE and LIMIT are positive numbers)"
        )
    if not turn.caps.read:
        await turn.say(_missing_capability("fs.readTextFile", "read files"))
        return "end_turn"
    line = int(numbers[0]) if numbers else 1
    limit = int(numbers[1]) if len(numbers) > 1 else READ_LIMIT
    path = turn.resolve(name)
    shown = turn.display(path)
    call = await turn.start_tool_call(
        f"Read {shown}",
        "read",
        locations=[(path, line)],
        raw_input={"path": path, "line": line, "limit": limit},
    )
    await call.update(status="in_progress")
    windows = [(line, limit)]
    try:
        window = await turn.read_text(path, line=line, limit=limit)
        got = edits.count_lines(window)
        total: int | None = line - 1 + got
        next_line = line + got  # the first line not read yet
        if got == limit or not got:
            # A full window may not be the end (and an empty one says nothing about the
            # length): count on in bigger windows, the way an agent pages through a file.
            next_line = next_line if got else 1
            total = None
            for _ in range(COUNT_WINDOWS_MAX):
                windows.append((next_line, COUNT_WINDOW))
                more = edits.count_lines(
                    await turn.read_text(path, line=next_line, limit=COUNT_WINDOW)
                )
                next_line += more
                if more < COUNT_WINDOW:
                    total = next_line - 1
                    break
    except RpcError as exc:
        await call.fail(f"Could not read `{shown}`: {_error_text(exc)}")
        await turn.say(
            f"The client answered `fs/read_text_file` with an error: {_error_text(exc)}."
        )
        return "end_turn"
    length = f"{total:,}" if total is not None else f"more than {next_line - 1:,}"
    if got:
        preview = window.splitlines(keepends=True)[:40]
        summary = f"Lines {line}–{line + got - 1} of {length} in `{shown}`:"
        body = "\n\n" + edits.fence("".join(preview), edits.language_for(path))
        if len(preview) < got:
            body += f"\n\n({got - len(preview)} more lines read, not shown.)"
        showing = f"the tool call above shows lines {line}–{line + got - 1}"
    else:
        summary = f"`{shown}` is empty." if total == 0 else f"`{shown}` has no line {line}."
        body = ""
        showing = "there is nothing to show from that line on"
    await call.update(
        status="completed",
        content=[text_content(summary + body)],
        raw_output={"lines": got, "totalLines": total},
    )
    steps = ", ".join(f"line {start} limit {size}" for start, size in windows)
    await turn.say(
        f"I read `{shown}` through the client with `fs/read_text_file` "
        f"({len(windows)} window{'s' * (len(windows) != 1)}: {steps}). It has {length} "
        f"line{'s' * (total != 1)}; {showing}. A real agent reads big files in windows "
        "like this so that it never pulls a whole file into its context."
    )
    return "end_turn"


async def scene_edit(turn: Turn, arg: str) -> StopReason:
    name, _ = edits.split_first(arg)
    if not name:
        return await _usage(turn, "/edit PATH")
    if not turn.caps.read:
        await turn.say(_missing_capability("fs.readTextFile", "read the file I would edit"))
        return "end_turn"
    path = turn.resolve(name)
    text = await _read_whole(turn, path)
    if text is None:
        return "end_turn"
    try:
        proposal = _propose_edit(path, text)
    except ValueError as exc:
        await turn.say(f"I will not edit `{turn.display(path)}`: {exc}.")
        return "end_turn"
    return await _apply_edit(
        turn, path, text, proposal, title=f"Edit {turn.display(path)}", action=proposal.summary
    )


async def scene_write(turn: Turn, arg: str) -> StopReason:
    name, content = edits.split_first(arg)
    if not name or not content:
        return await _usage(turn, "/write PATH TEXT")
    path = turn.resolve(name)
    shown = turn.display(path)
    if not content.endswith("\n"):
        content += "\n"  # a text file ends with a newline
    old: str | None = None
    note = ""
    if turn.caps.read:
        try:
            old = await turn.read_text(path)
            lines = edits.count_lines(old)
            note = f"The new text replaced the {lines} line{'s' * (lines != 1)} `{shown}` had."
        except RpcError as exc:
            if exc.code == RESOURCE_NOT_FOUND:
                note = f"`{shown}` did not exist, so the diff had no old text (`oldText: null`, a new file)."
            else:
                note = f"I could not read the old `{shown}` first ({_error_text(exc)})."
    else:
        note = "The client cannot read files, so the diff could not show the old text."
    proposal = Proposal(content, note)
    return await _apply_edit(
        turn, path, old, proposal, title=f"Write {shown}", action="write the given text"
    )


async def scene_run(turn: Turn, arg: str) -> StopReason:
    command = arg.strip()
    if not command:
        return await _usage(turn, "/run COMMAND")
    if not turn.caps.terminal:
        await turn.say(_missing_capability("terminal", "run commands"))
        return "end_turn"
    call = await turn.start_tool_call(
        f"Run {_short(command)}", "execute", raw_input={"command": command, "cwd": turn.cwd}
    )
    call.cancel_note = "Cancelled before the command started."
    permission = await turn.permit(call, "execute")
    if permission.how == "cancelled":
        await call.fail(call.cancel_note)
        return "cancelled"
    if not permission.allowed:
        await call.fail("Not allowed: the command was not run.")
        await turn.say(f"{permission.why}, so I did not run `{_short(command)}`.")
        return "end_turn"
    create = m.CreateTerminalRequest(
        session_id=turn.session.id,
        command="sh",  # explicit and portable: the spec leaves shells to the agent
        args=["-c", command],
        cwd=turn.cwd,
        output_byte_limit=OUTPUT_BYTE_LIMIT,
    )
    created: Any = None
    try:
        # Shielded: a cancel arriving now must not lose the id of a terminal the client
        # starts anyway (spec: the agent MUST release every terminal it creates). The
        # answer comes at once (spec), so the shield holds for moments; the deadline
        # covers a client that never answers.
        with anyio.CancelScope(shield=True), anyio.move_on_after(CREATE_TIMEOUT):
            created = await turn.host.request("terminal/create", create)
    except RpcError as exc:
        await call.fail(f"The client could not start it: {_error_text(exc)}")
        await turn.say(f"`terminal/create` failed: {_error_text(exc)}.")
        return "end_turn"
    if created is None:
        await call.fail(f"The client did not answer `terminal/create` within {CREATE_TIMEOUT:g} s.")
        await turn.say("The client did not answer `terminal/create`; I gave up on the command.")
        return "end_turn"
    terminal_id = m.CreateTerminalResponse.parse(created).terminal_id
    turn.terminals.append(terminal_id)
    await anyio.lowlevel.checkpoint()  # a cancel that came during the shield lands here
    call.cancel_note = "Cancelled: the command was killed and its terminal released."
    # spec: embed the terminal so the client shows its output live while it runs.
    terminal = m.TerminalToolCallContent(terminal_id=terminal_id).to_wire()
    await call.update(status="in_progress", content=[terminal])
    try:
        exited = m.WaitForTerminalExitResponse.parse(
            await turn.terminal("wait_for_exit", terminal_id)
        )
        output = m.TerminalOutputResponse.parse(await turn.terminal("output", terminal_id))
        turn.terminal_outputs[terminal_id] = output.output
        await turn.terminal("release", terminal_id)
        turn.terminals.remove(terminal_id)
    except RpcError as exc:
        # Turn.finish() still kills and releases the terminal.
        await call.fail(f"The client's terminal failed: {_error_text(exc)}")
        await turn.say(
            f"The client answered a `terminal/*` request with an error: {_error_text(exc)}."
        )
        return "end_turn"
    code, signal = exited.exit_code, exited.signal
    outcome = f"exited with code {code}" if signal is None else f"was killed by {signal}"
    await call.update(
        status="completed" if code == 0 else "failed",
        raw_output={
            "exitCode": code,
            "signal": signal,
            "truncated": output.truncated,
            "output": output.output,
        },
    )
    tail = output.output.splitlines()[-10:]
    reply = f"`{_short(command)}` {outcome} ({_how(permission, 'commands').rstrip('.')})."
    if tail:
        reply += "\n\nThe last lines of its output:\n\n" + edits.fence("\n".join(tail))
    else:
        reply += " It printed nothing."
    reply += (
        "\n\nI ran it in a client terminal (`terminal/create` with `sh -c`), embedded the "
        "terminal in the tool call, waited with `terminal/wait_for_exit`, read "
        "`terminal/output` and released it with `terminal/release`."
    )
    await turn.say(reply)
    return "end_turn"


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
    await turn.say("\nAll five steps are completed.")
    return "end_turn"


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
    await turn.say(
        "That was my reasoning, streamed as `agent_thought_chunk` updates. This answer is "
        "an `agent_message_chunk`, a new message with its own `messageId`."
    )
    return "end_turn"


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
    await turn.say("\n(Finished without being cancelled.)")
    return "end_turn"


async def scene_refuse(turn: Turn, arg: str) -> StopReason:
    await turn.say(
        'I refuse this one, on purpose: the turn ends with `stopReason: "refusal"`. '
        "A client should show that the agent declined, and drop this prompt and everything "
        "after it from the next turn's context (spec)."
    )
    return "refusal"


async def scene_long(turn: Turn, arg: str) -> StopReason:
    word = arg.strip()
    if word and not (word.isdigit() and 0 < int(word) <= LONG_MAX):
        return await _usage(turn, f"/long [N]  (N chunks, 1 to {LONG_MAX})")
    count = int(word) if word else LONG_DEFAULT
    for piece in edits.long_markdown_pieces(count):
        await turn.say(piece)  # each is awaited: a cancel stops the stream right here
    return "end_turn"


async def scene_image(turn: Turn, arg: str) -> StopReason:
    png = edits.demo_png()
    await turn.say(
        "Here is an image, sent as an `image` content block (base64 PNG) in an `agent_message_chunk`:\n\n"
    )
    image = m.ImageContentBlock(data=base64.b64encode(png).decode("ascii"), mime_type="image/png")
    await turn.send(m.AgentMessageChunk(content=image, message_id=turn.message_id("agent")))
    await turn.say(f"\n\nIt is a {len(png)}-byte, 64×64 PNG made with zlib and struct.")
    return "end_turn"


async def scene_usage(turn: Turn, arg: str) -> StopReason:
    session, model = turn.session, turn.session.model_info
    await turn.say(
        "Every turn of mine ends with a `usage_update`: `used` tokens in context out of "
        f"`size` ({model.context_window:,} for `{model.value}`), and the session's cost so far. "
        "The numbers are deterministic: 4 characters make a token, priced like "
        f"`{model.value}` (${model.usd_per_input_token * 1e6:.2f} per million input tokens, "
        f"${model.usd_per_output_token * 1e6:.2f} per million output tokens). "
        f"Before this turn: {session.input_chars:,} characters in, {session.output_chars:,} out."
    )
    return "end_turn"


async def scene_mode(turn: Turn, arg: str) -> StopReason:
    wanted = arg.strip()
    if wanted not in ("ask", "code"):
        await turn.say(
            f"The session is in `{turn.session.mode}` mode. `/mode ask` or `/mode code` makes "
            "me switch it myself: agents may change mode on their own (e.g. after planning), "
            "and tell the client with `current_mode_update`."
        )
        return "end_turn"
    await turn.host.change_mode(turn.session, wanted)
    await turn.say(
        f"I switched the session to `{wanted}` mode myself and told the client with "
        "`current_mode_update` (and `config_option_update`, since the mode is also a config option)."
    )
    return "end_turn"


async def scene_title(turn: Turn, arg: str) -> StopReason:
    title = edits.derive_title(arg)
    if not title:
        return await _usage(turn, "/title TEXT")
    turn.session.title = title
    await turn.send(m.SessionInfoUpdate(title=title), record=False)
    await turn.say(f"I renamed the session to “{title}” with a `session_info_update`.")
    return "end_turn"


async def scene_fail(turn: Turn, arg: str) -> StopReason:
    call = await turn.start_tool_call(
        "Run a tool that fails on purpose", "other", raw_input={"fail": True}
    )
    await call.update(status="in_progress")
    await anyio.sleep(STEP_DELAY)
    await call.fail(
        "Error: the demo tool failed on purpose.", raw_output={"error": "failed on purpose"}
    )
    await turn.say(
        "That tool call ended with status `failed`. A real agent reports the failure like "
        "this, then decides what to do next; the turn itself still ends normally."
    )
    return "end_turn"


# --- elicitation ---------------------------------------------------------------------------

#: The form of ``/ask``: one field of each kind the schema defines.
ASK_SCHEMA = m.ElicitationSchema(
    title="About you",
    description="A demonstration: nothing is stored.",
    properties={
        "name": m.StringPropertySchema(
            title="Name", description="What should I call you?", min_length=1, max_length=80
        ),
        "age": m.IntegerPropertySchema(title="Age", minimum=0, maximum=150),
        "language": m.StringPropertySchema(
            title="Favourite language", enum=["Python", "Rust", "Julia", "Other"]
        ),
        "newsletter": m.BooleanPropertySchema(
            title="Newsletter", description="Send me the pretend newsletter", default=False
        ),
        "topics": m.MultiSelectPropertySchema(
            title="Topics",
            items=m.TitledMultiSelectItems(
                any_of=[
                    m.EnumOption(const="protocol", title="The protocol"),
                    m.EnumOption(const="notebooks", title="Notebooks"),
                    m.EnumOption(const="tools", title="Tool calls"),
                    m.EnumOption(const="other", title="Something else"),
                ]
            ),
            max_items=3,
        ),
    },
    required=["name"],
)
#: Where ``/ask-url`` sends the user: a pretend device sign-in (the agent never opens it).
DEVICE_URL = "https://example.com/device?code=DEMO-1234"


async def _elicit(turn: Turn, message: str, **how: Any) -> Any | None:
    """``elicitation/create``; None (after saying why) when the client answered an error."""
    try:
        return await turn.elicit(message, **how)
    except RpcError as exc:
        if exc.code == REQUEST_CANCELLED:
            return m.CancelElicitationResponse()
        await turn.say(
            f"The client answered `elicitation/create` with an error: {_error_text(exc)}."
        )
        return None


async def scene_ask(turn: Turn, arg: str) -> StopReason:
    if not turn.caps.elicitation_form:
        await turn.say(_missing_capability("elicitation.form", "ask you to fill in a form"))
        return "end_turn"
    answer = await _elicit(
        turn,
        "Tell me a little about yourself, so I can show what a form elicitation sends back.",
        schema=ASK_SCHEMA,
    )
    if answer is None:
        return "end_turn"
    if isinstance(answer, m.AcceptElicitationResponse):
        content = answer.content or {}
        rows = [
            f"- {getattr(prop, 'title', None) or name}: `{json.dumps(content[name], ensure_ascii=False)}`"
            for name, prop in ASK_SCHEMA.properties.items()
            if name in content
        ]
        name = content.get("name")
        hello = f"Hello, {name}! " if isinstance(name, str) and name else ""
        await turn.say(
            f'{hello}You accepted (`action: "accept"`) and sent:\n\n'
            + ("\n".join(rows) or "(no values)")
            + "\n\nI asked with `elicitation/create` (mode `form`); a real agent would now use "
            "these values. I only repeat them."
        )
        return "end_turn"
    if isinstance(answer, m.DeclineElicitationResponse):
        await turn.say(
            'The answer was `action: "decline"` (you declined, or your client had no one to '
            "ask), so I go on without your answers, as an agent must."
        )
        return "end_turn"
    if isinstance(answer, m.CancelElicitationResponse):
        await turn.say(
            'The form was cancelled (`action: "cancel"`): dismissed without a choice. I stop here.'
        )
        return "cancelled" if turn.cancel_requested else "end_turn"
    await turn.say(
        f"The client answered with an action I do not know (`{answer.action}`); I treat it "
        "as a decline."
    )
    return "end_turn"


async def scene_ask_url(turn: Turn, arg: str) -> StopReason:
    if not turn.caps.elicitation_url:
        await turn.say(_missing_capability("elicitation.url", "ask you to open a web page"))
        return "end_turn"
    call = await turn.start_tool_call("Sign in at example.com (pretend device flow)", "other")
    call.cancel_note = "Cancelled before the sign-in finished."
    elicitation_id = f"{call.id}-sign-in"  # deterministic, and opaque to the client
    answer = await _elicit(
        turn,
        "Sign in to the pretend example.com service with the code DEMO-1234.",
        url=DEVICE_URL,
        elicitation_id=elicitation_id,
        tool_call_id=call.id,
    )
    if answer is None:
        await call.fail("The client could not show the sign-in URL.")
        return "end_turn"
    if isinstance(answer, m.AcceptElicitationResponse):
        # accept = the user consented to open the URL; the flow itself ends out of band.
        await call.update(status="in_progress")
        await anyio.sleep(STEP_DELAY)
        await turn.complete_elicitation(elicitation_id)
        await call.update(
            status="completed",
            content=[text_content("Signed in (pretend): the device flow reported completion.")],
        )
        await turn.say(
            'You consented to open the URL (`action: "accept"` means only that). A real agent '
            "would now wait for its server to confirm the sign-in; there is no server behind "
            f"example.com, so after {STEP_DELAY:g} s I sent `elicitation/complete` for "
            f"`{elicitation_id}` myself. I never opened or fetched the page."
        )
        return "end_turn"
    cancelled = isinstance(answer, m.CancelElicitationResponse)
    await call.fail("Cancelled: not signed in." if cancelled else "Declined: not signed in.")
    await turn.say(
        "The sign-in was cancelled, so I stop here."
        if cancelled
        else 'The answer was `action: "decline"`, so I go on without signing in.'
    )
    return "cancelled" if cancelled and turn.cancel_requested else "end_turn"


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
    await turn.say(
        "I just sent a `session/update` whose `sessionUpdate` is `demo_future_update` and a "
        "message chunk whose content `type` is `demo_future_block`. Neither exists in ACP v1: "
        "a client must tolerate both (ignore them, or show them as unknown) and carry on."
    )
    return "end_turn"


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
        return await _usage(turn, "/stop " + "|".join(STOP_REASONS))
    await turn.say(f'This turn ends with `stopReason: "{reason}"`, as you asked.')
    return reason


# --- plain prompts -------------------------------------------------------------------------

_INTENT = re.compile(
    r"\b(refactor\w*|clean\s*up|tidy|improve|document|docstrings?|type[- ]?hints?|annotate|"
    r"rewrite|modernize|polish|edit)\b",
    re.IGNORECASE,
)
_CODE_BLOCK = re.compile(r"```(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL)
_KNOWN_EXTENSIONS = {".py", ".pyi", ".txt", ".md", ".rst", ".ini", ".log"} | {
    ext
    for table in (
        edits._LANGUAGES,
        edits._HASH,
        edits._SLASHES,
        edits._DASHES,
        edits._MARKUP,
        edits.REFUSED,
    )
    for ext in table
}


def _file_names(text: str) -> list[str]:
    """Words of ``text`` that look like file names with a known extension."""
    found = []
    for word in text.split():
        word = word.strip("`'\"()[]{}<>,;:!?").rstrip(".")
        if posixpath.splitext(word.lower())[1] in _KNOWN_EXTENSIONS and re.search(r"\w\.\w", word):
            found.append(word)
    return found


def _size(count: int) -> str:
    return f"{count:,} byte{'s' * (count != 1)}"


def _decoded_size(data: str) -> str:
    try:
        return _size(len(base64.b64decode(data, validate=True)))
    except (binascii.Error, ValueError):
        return f"{len(data):,} characters that are not valid base64"


def describe_block(index: int, block: Any) -> str:
    """One line per received content block, for the reply to plain prompts."""
    if isinstance(block, m.TextContentBlock):
        preview = _short(block.text, 60)
        return f"{index}. `text`, {len(block.text):,} characters: “{preview}”"
    if isinstance(block, m.ImageContentBlock):
        return f"{index}. `image`, {block.mime_type}, {_decoded_size(block.data)}"
    if isinstance(block, m.AudioContentBlock):
        return (
            f"{index}. `audio`, {block.mime_type}, {_decoded_size(block.data)} (I did not "
            "advertise audio in `promptCapabilities`, so a client should not have sent it)"
        )
    if isinstance(block, m.ResourceLinkContentBlock):
        details = [f"uri `{block.uri}`", f"name `{block.name}`"]
        if block.mime_type:
            details.append(f"MIME type {block.mime_type}")
        if block.size is not None:
            details.append(_size(block.size))
        return f"{index}. `resource_link` (a reference; I would read it myself): " + ", ".join(
            details
        )
    if isinstance(block, m.EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, m.TextResourceContents):
            size = _size(len(resource.text.encode("utf-8")))
            kind, mime, uri = "text", resource.mime_type, resource.uri
        elif isinstance(resource, m.BlobResourceContents):
            size = _decoded_size(resource.blob)
            kind, mime, uri = "binary", resource.mime_type, resource.uri
        else:
            return f"{index}. `resource` of a shape I do not know"
        return (
            f"{index}. `resource` (embedded {kind} contents): uri `{uri}`, "
            f"{size}, MIME type {mime or 'not given'}"
        )
    kind = getattr(block, "type", None) or "unknown"
    return f"{index}. `{kind}`: a content type I do not know (ignored, as clients and agents must)"


def _block_chars(block: Any) -> int:
    if isinstance(block, m.TextContentBlock):
        return len(block.text)
    if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
        block.resource, m.TextResourceContents
    ):
        return len(block.resource.text)
    if isinstance(block, m.ResourceLinkContentBlock):
        return len(block.uri)
    return 1000  # images, audio and blobs: a flat, deterministic price


def prompt_chars(blocks: Sequence[Any]) -> int:
    return sum(_block_chars(block) for block in blocks)


def _file_target(turn: Turn, text: str) -> str | None:
    """The file a refactoring prompt names: an attached link or file resource first, then
    a file name in the text (resolved against the session cwd)."""
    for block in turn.prompt:
        uri = None
        if isinstance(block, m.ResourceLinkContentBlock):
            uri = block.uri
        elif isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            uri = block.resource.uri
        if uri and uri.startswith("file://") and "#" not in uri and uri.endswith((".py", ".pyi")):
            return turn.resolve(uri)
    names = _file_names(text)
    return turn.resolve(names[0]) if names else None


def _code_target(turn: Turn, text: str) -> tuple[str, str] | None:
    """(label, code) of Python code attached without a file: an embedded resource that is
    Python, or a fenced code block in the text."""
    for block in turn.prompt:
        if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            resource = block.resource
            is_python = "python" in (resource.mime_type or "") or resource.uri.split("#")[
                0
            ].endswith(".py")
            if is_python:
                return f"the embedded resource `{resource.uri}`", resource.text
    match = _CODE_BLOCK.search(text)
    if match:
        return "the code block in your prompt", match.group(1)
    return None


async def _refactor_file(turn: Turn, path: str) -> StopReason:
    shown = turn.display(path)
    if not path.endswith((".py", ".pyi")):
        await turn.say(
            f"My mechanical refactoring only knows Python, and `{shown}` is not a Python file. "
            f"`/edit {shown}` shows an edit of any text file."
        )
        return "end_turn"
    if not turn.caps.read:
        await turn.say(_missing_capability("fs.readTextFile", f"read `{shown}`"))
        return "end_turn"
    text = await _read_whole(turn, path)
    if text is None:
        return "end_turn"
    try:
        result = edits.add_placeholders(text)
    except SyntaxError as exc:
        await turn.say(
            f"`{shown}` is not valid Python (line {exc.lineno}): {exc.msg}. I leave it alone."
        )
        return "end_turn"
    if not result.changed:
        await turn.say(
            f"Nothing to do: every function in `{shown}` already has a docstring and type hints."
        )
        return "end_turn"
    proposal = Proposal(
        result.text,
        "This is a mechanical demonstration, not an AI refactoring: I added placeholder "
        "docstrings and `Any` type-hint placeholders where they were missing, found with "
        "Python's `ast`; every other byte is unchanged.",
        result.changes,
    )
    return await _apply_edit(
        turn,
        path,
        text,
        proposal,
        title=f"Edit {shown}",
        action="add docstring and type-hint placeholders",
    )


async def _refactor_code(turn: Turn, label: str, code: str) -> StopReason:
    try:
        result = edits.add_placeholders(code)
    except SyntaxError as exc:
        await turn.say(f"I could not parse {label} as Python (line {exc.lineno}: {exc.msg}).")
        return "end_turn"
    if not result.changed:
        await turn.say(
            f"Nothing to do: every function in {label} already has a docstring and type hints."
        )
        return "end_turn"
    changes = "\n".join(f"- {change}" for change in result.changes)
    await turn.say(
        f"A mechanical demonstration, not an AI refactoring: {label} has no file I could "
        "write, so here is the proposal instead (placeholder docstrings and `Any` type hints, "
        f"found with Python's `ast`):\n\n{changes}\n\n"
        + edits.fence(result.text, "python")
        + "\n\nAs a diff:\n\n"
        + edits.fence(edits.unified_diff(code, result.text, "cell.py"), "diff")
    )
    return "end_turn"


async def scene_prompt(turn: Turn, text: str) -> StopReason:
    """A prompt without a command: refactoring requests get the edit path, everything else
    a description of what arrived."""
    if _INTENT.search(text):
        path = _file_target(turn, text)
        if path is not None:
            return await _refactor_file(turn, path)
        code = _code_target(turn, text)
        if code is not None:
            return await _refactor_code(turn, *code)
    blocks = "\n".join(describe_block(i, b) for i, b in enumerate(turn.prompt, 1))
    count = len(turn.prompt)
    reply = (
        "I am a protocol demonstrator, not an AI: I do not understand your words. Here is "
        f"what I received in `session/prompt`, {count} content block{'s' * (count != 1)}:\n\n"
        f"{blocks}\n\n"
    )
    if turn.session.mcp_servers:
        names = ", ".join(f"`{name}`" for name in turn.session.mcp_servers)
        reply += f"The session was given MCP servers ({names}); I list them but do not connect to them.\n\n"
    reply += (
        "To see a feature, send a command: `/read PATH` (file reads), `/edit PATH` (diff and "
        "permission), `/run COMMAND` (terminals), `/plan`, `/think`, `/slow` (then cancel), "
        "`/image`, or `/help` for all of them. `refactor utils.py` proposes a mechanical edit."
    )
    if _INTENT.search(text):
        reply += (
            "\n\nIt sounds like you asked for a refactoring, but I found no file name or Python "
            "code in your prompt: name a file (`refactor utils.py`) or attach the code."
        )
    await turn.say(reply)
    return "end_turn"


# --- the table -----------------------------------------------------------------------------

Scene = Callable[[Turn, str], Awaitable[StopReason]]


@dataclass(frozen=True)
class Command:
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
        Command("run", "Run a shell command in a client terminal, after asking permission", scene_run, "COMMAND"),
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
        Command("unknown", "Send an update type and a content type no client knows", scene_unknown),
        Command("error", "Answer the prompt with a JSON-RPC error", scene_error),
        Command("stop", "End the turn with the given stop reason", scene_stop, "REASON"),
    ]
}  # fmt: skip

#: A protocol note per command, added to the reply when the `verbose` option is on.
NOTES: dict[str, str] = {
    "read": "`tool_call` (kind `read`, `locations`) → `fs/read_text_file` with `line`/`limit` → `tool_call_update` completed with a `content` item.",
    "edit": "`tool_call` (kind `edit`) with `diff` content → `session/request_permission` → `fs/write_text_file` only if allowed → `tool_call_update` completed or failed.",
    "write": "Like /edit; a `diff` with `oldText: null` means a new file.",
    "run": "`session/request_permission` → `terminal/create` → `terminal` content in the tool call → `terminal/wait_for_exit` → `terminal/output` → `terminal/release`.",
    "plan": "Each `plan` update carries every entry: clients replace the plan, they never merge.",
    "think": "`agent_thought_chunk` and `agent_message_chunk` carry different `messageId`s.",
    "slow": "`session/cancel` is a notification; the prompt still gets an answer: `stopReason: \"cancelled\"`.",
    "long": "Thousands of `session/update` notifications before the `session/prompt` answer.",
    "image": "Agents may send any content block type in a message chunk.",
    "ask": "`elicitation/create` (mode `form`, `requestedSchema`) → the client answers `accept` with `content`, `decline` or `cancel`.",
    "ask-url": "`elicitation/create` (mode `url`, `elicitationId`, `toolCallId`) → `accept` (consent only) → `elicitation/complete` when the flow is done.",
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


def _first_text(blocks: Sequence[Any]) -> str:
    return next((b.text for b in blocks if isinstance(b, m.TextContentBlock)), "")


async def run_prompt(turn: Turn) -> StopReason:
    """Dispatch a prompt to its scene: a leading ``/name`` picks a command (slash
    commands are plain text in ACP), anything else is a plain prompt."""
    text = _first_text(turn.prompt)
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
