"""The demonstrations that go through the client's tools: ``/read``, ``/edit``, ``/write``
(``fs/*``, with a ``diff`` and a permission request before any write) and ``/run``
(``terminal/*``, after a permission request).

Each is a ``read``, ``edit`` or ``execute`` tool call whose status follows what really
happened; a capability the client did not advertise is never used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel

from ...protocol import models as m
from ...protocol.errors import RESOURCE_NOT_FOUND, RpcError
from .content import text_content
from .edits import append_marker, count_lines, fence, language_for, shorten, split_first
from .refactors import refactor
from .replies import StopReason, error_text, missing_capability, usage
from .risk import command_risk, path_risk
from .turn import Permission, Turn

__all__ = [
    "Proposal",
    "apply_edit",
    "read_to_change",
    "read_whole",
    "scene_edit",
    "scene_read",
    "scene_run",
    "scene_write",
]

#: ``terminal/create`` output limit: enough for any demo command, small enough to replay.
OUTPUT_BYTE_LIMIT = 64 * 1024
#: Seconds to wait for the ``terminal/create`` answer (it should come at once).
CREATE_TIMEOUT = 30.0
#: How many lines ``/read`` shows when no LIMIT is given.
READ_LIMIT = 20


async def read_whole(turn: Turn, path: str) -> str | None:
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
        await call.fail(f"Could not read `{shown}`: {error_text(exc)}")
        if exc.code == RESOURCE_NOT_FOUND:
            await turn.say(f"I asked the client for `{shown}`; it does not exist.")
        else:
            await turn.say(f"The client could not read `{shown}`: {error_text(exc)}.")
        return None
    lines = count_lines(text)
    await call.update(
        status="completed",
        content=[text_content(f"Read {lines} line{'s' * (lines != 1)} of `{shown}`.")],
        raw_output={"lines": lines},
    )
    return text


async def read_to_change(turn: Turn, name: str, what: str) -> tuple[str, str] | StopReason:
    """The path ``name`` resolves to and its whole text, read before changing it; when
    it cannot be read, the turn's end (the reason is already said)."""
    if not turn.caps.read:
        return await turn.reply(missing_capability("fs.readTextFile", what))
    path = turn.resolve(name)
    text = await read_whole(turn, path)
    if text is None:
        return "end_turn"
    return path, text


@dataclass
class Proposal:
    """A change to a file: the new text and what it is, in words."""

    new_text: str
    summary: str
    changes: list[str] = field(default_factory=list)


def _propose_edit(path: str, text: str) -> Proposal:
    """What ``/edit`` changes: a refactoring for Python that has something to refactor,
    a labelled line otherwise.

    Raises :class:`ValueError` for formats the demo will not edit.
    """
    if path.endswith((".py", ".pyi")):
        try:
            result = refactor(text)
        except (SyntaxError, ValueError) as exc:
            line = getattr(exc, "lineno", None)
            where = f" (line {line})" if line else ""
            return Proposal(
                append_marker(path, text),
                f"The file is not valid Python{where}, so instead of refactoring it I add one "
                "labelled comment line at the end.",
            )
        if result.changes:
            return Proposal(
                result.text,
                "A mechanical refactoring, found with Python's `ast`: each rewrite keeps what "
                "the code does and says it more directly; every other character stays as it was.",
                result.changes,
            )
        return Proposal(
            append_marker(path, text),
            "I found nothing to refactor, so I add one labelled comment line at the end instead.",
        )
    return Proposal(
        append_marker(path, text),
        "A demonstration edit: one clearly labelled line at the end of the file.",
    )


async def apply_edit(
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
        return await turn.reply(missing_capability("fs.writeTextFile", "write files"))
    permission = await turn.permit(call, "edit", risk=path_risk([path], turn.cwd))
    if permission.how == "cancelled":
        await call.fail(call.cancel_note)
        return "cancelled"
    if not permission.allowed:
        await call.fail(f"Not allowed: `{shown}` was not changed.")
        return await turn.reply(
            f"{permission.why}, so I did not write `{shown}`: the file was not changed."
        )
    await call.update(status="in_progress")
    call.cancel_note = f"Cancelled while the write was in flight: the client may or may not have written `{shown}`."
    try:
        await turn.write_text(path, proposal.new_text)
    except RpcError as exc:
        await call.fail(f"The client could not write `{shown}`: {error_text(exc)}")
        return await turn.reply(
            f"The write failed: {error_text(exc)}. `{shown}` was not changed by me."
        )
    await call.update(status="completed")
    reply = [
        f"I wrote `{shown}` through the client (`fs/write_text_file`), {_how(permission, 'edits')}"
    ]
    reply.append(proposal.summary)
    if proposal.changes:
        reply.append("\n".join(f"- {change}" for change in proposal.changes))
    return await turn.reply("\n\n".join(reply))


def _how(permission: Permission, kind: str) -> str:
    return {
        "once": "after you allowed it once.",
        "always": f"after you chose Allow always: I will not ask again in this session for "
        f"{kind} as risky as this or less (a riskier one is asked). The client decides for "
        "itself too.",
        "remembered": f"without asking: earlier in this session you chose Allow always for "
        f"{kind} at least as risky as this.",
    }.get(permission.how, ".")


async def scene_read(turn: Turn, arg: str) -> StopReason:
    name, rest = split_first(arg)
    numbers = rest.split()
    if not name or len(numbers) > 2 or not all(n.isdigit() and int(n) > 0 for n in numbers):
        return await usage(turn, "/read PATH [LINE [LIMIT]]  (LINE and LIMIT are positive numbers)")
    if not turn.caps.read:
        return await turn.reply(missing_capability("fs.readTextFile", "read files"))
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
    try:
        # One line more than shown: whether the file goes on, without reading the rest.
        window = await turn.read_text(path, line=line, limit=limit + 1)
    except RpcError as exc:
        await call.fail(f"Could not read `{shown}`: {error_text(exc)}")
        return await turn.reply(
            f"The client answered `fs/read_text_file` with an error: {error_text(exc)}."
        )
    lines = window.splitlines(keepends=True)
    more = len(lines) > limit
    got = min(len(lines), limit)
    window = "".join(lines[:got])
    #: The file's length when this window reached its end; unknown (None) otherwise.
    total = None if more or (not got and line > 1) else line - 1 + got
    if got:
        preview = lines[: min(got, 40)]
        end = line + got - 1
        summary = f"Lines {line}–{end} of `{shown}`" + (
            " (more follow):" if more else f" (the end; {total:,} lines):"
        )
        body = "\n\n" + fence("".join(preview), language_for(path))
        if len(preview) < got:
            body += f"\n\n({got - len(preview)} more lines read, not shown.)"
        showing = f"the tool call above shows lines {line}–{end}"
    else:
        summary = f"`{shown}` is empty." if total == 0 else f"`{shown}` has no line {line}."
        body = ""
        showing = "there is nothing to show from that line on"
    await call.update(
        status="completed",
        content=[text_content(summary + body)],
        raw_output={"lines": got, "moreFollow": more},
    )
    after = (
        f"Lines after {line + got - 1} exist; I did not read them (`/read {name} {line + got}` "
        "would read the next window)."
        if more
        else "That window reached the end of the file."
    )
    return await turn.reply(
        f"I read `{shown}` through the client with `fs/read_text_file` (one window: line "
        f"{line} limit {limit + 1}, one line more than I show, to learn whether the file goes "
        f"on); {showing}. {after} A real agent reads a big file in windows around what it "
        "needs, so that it never pulls a whole file into its context."
    )


async def scene_edit(turn: Turn, arg: str) -> StopReason:
    name, _ = split_first(arg)
    if not name:
        return await usage(turn, "/edit PATH")
    read = await read_to_change(turn, name, "read the file I would edit")
    if not isinstance(read, tuple):
        return read
    path, text = read
    try:
        proposal = _propose_edit(path, text)
    except ValueError as exc:
        return await turn.reply(f"I will not edit `{turn.display(path)}`: {exc}.")
    return await apply_edit(
        turn, path, text, proposal, title=f"Edit {turn.display(path)}", action=proposal.summary
    )


async def scene_write(turn: Turn, arg: str) -> StopReason:
    name, content = split_first(arg)
    if not name or not content:
        return await usage(turn, "/write PATH TEXT")
    path = turn.resolve(name)
    shown = turn.display(path)
    if not content.endswith("\n"):
        content += "\n"  # a text file ends with a newline
    old: str | None = None
    note = ""
    if turn.caps.read:
        try:
            old = await turn.read_text(path)
            lines = count_lines(old)
            note = f"The new text replaced the {lines} line{'s' * (lines != 1)} `{shown}` had."
        except RpcError as exc:
            if exc.code == RESOURCE_NOT_FOUND:
                note = f"`{shown}` did not exist, so the diff had no old text (`oldText: null`, a new file)."
            else:
                note = f"I could not read the old `{shown}` first ({error_text(exc)})."
    else:
        note = "The client cannot read files, so the diff could not show the old text."
    proposal = Proposal(content, note)
    return await apply_edit(
        turn, path, old, proposal, title=f"Write {shown}", action="write the given text"
    )


async def scene_run(turn: Turn, arg: str) -> StopReason:
    command = arg.strip()
    if not command:
        return await usage(turn, "/run COMMAND")
    if not turn.caps.terminal:
        return await turn.reply(missing_capability("terminal", "run commands"))
    call = await turn.start_tool_call(
        f"Run {shorten(command)}", "execute", raw_input={"command": command, "cwd": turn.cwd}
    )
    call.cancel_note = "Cancelled before the command started."
    # A destructive command gets no "Allow always" (nor is one remembered for it): what
    # is allowed always must be safe to allow again unseen.
    risk = command_risk(command)
    permission = await turn.permit(call, "execute", always=risk < 2, risk=risk)
    if permission.how == "cancelled":
        await call.fail(call.cancel_note)
        return "cancelled"
    if not permission.allowed:
        await call.fail("Not allowed: the command was not run.")
        return await turn.reply(f"{permission.why}, so I did not run `{shorten(command)}`.")
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
            created = await turn.request("terminal/create", create)
    except RpcError as exc:
        await call.fail(f"The client could not start it: {error_text(exc)}")
        return await turn.reply(f"`terminal/create` failed: {error_text(exc)}.")
    if created is None:
        await call.fail(f"The client did not answer `terminal/create` within {CREATE_TIMEOUT:g} s.")
        return await turn.reply(
            "The client did not answer `terminal/create`; I gave up on the command."
        )
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
        await call.fail(f"The client's terminal failed: {error_text(exc)}")
        return await turn.reply(
            f"The client answered a `terminal/*` request with an error: {error_text(exc)}."
        )
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
    reply = f"`{shorten(command)}` {outcome} ({_how(permission, 'commands').rstrip('.')})."
    if tail:
        reply += "\n\nThe last lines of its output:\n\n" + fence("\n".join(tail))
    else:
        reply += " It printed nothing."
    reply += (
        "\n\nI ran it in a client terminal (`terminal/create` with `sh -c`), embedded the "
        "terminal in the tool call, waited with `terminal/wait_for_exit`, read "
        "`terminal/output` and released it with `terminal/release`."
    )
    return await turn.reply(reply)
