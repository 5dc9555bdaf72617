"""The protocol tour, as a course: the learner drives the demo agent one message at a time
with ``acp_notebook.lab`` (notebooks/protocol_tour.ipynb). Short cells, one idea each. An
exercise leaves ``...`` for the learner; its solution waits in a collapsed cell that fills in only
what was left as ``...`` (so nbval still runs the notebook top to bottom), and the check after it
says what it expects."""

from __future__ import annotations

import nbformat
from nbformat.v4 import new_notebook
from notebook_cells import KERNEL, code, md, workspace_cell

#: The first line of a solution cell, by how it fills in: values left as ``...``, or an
#: action the learner has not taken.
FILLS = (
    "# Solution (collapsed: open it once you have tried). It fills in only what you left as `...`."
)
ACTS = "# Solution (collapsed: open it once you have tried). It acts only if you have not."


def exercise(
    number: int, task: str, blank: str, solution: str, check: str
) -> list[nbformat.NotebookNode]:
    """A task; a cell for the learner (``blank``: ``...`` where the answer goes, or the call to
    make as a comment); the solution, collapsed (JupyterLab and Notebook 7 honour
    ``source_hidden``), filling in only what the learner left; a check cell whose asserts say
    what they expect."""
    hidden = code(solution)
    hidden.metadata.update({"jupyter": {"source_hidden": True}, "tags": ["solution"]})
    return [
        md(f"**Exercise {number}.** {task}"),
        code(f"# Exercise {number}: {blank}"),
        hidden,
        code(f"{check}\nprint('✓ exercise {number}')"),
    ]


def protocol_tour() -> nbformat.NotebookNode:
    cells = [
        md("""
# A course in the Agent Client Protocol

ACP is JSON-RPC 2.0, one JSON object per line, over the stdin/stdout of an agent subprocess. In
this course **you are the client**: you send each message to the demo agent yourself with
`acp_notebook.lab`, and every message is shown as it goes, with its kind:

* `→` is a message you sent, `←` one the agent sent;
* a *request* gets exactly one answer (a *result* or an *error*) with the same id; a
  *notification* gets none; `session/update` notifications carry a kind (`agent_message_chunk`, …).

The lab checks each of your messages before it goes: a step out of order, or a message the schema
rejects, is refused with one sentence saying why, and nothing is sent. Each exercise leaves `...`
for you to fill in, and the cell after it checks your answer and says what it expects. Between the
two, a collapsed cell holds the solution: open it once you have tried; it fills in only what you
left as `...`, so the notebook still runs top to bottom."""),
        workspace_cell("tour-workspace", {"notes.txt": "ACP tour\nline two\nline three\n"}),
        code(
            "import acp_notebook.lab\n"
            "from acp_notebook.lab import StepError\n"
            "from acp_notebook.protocol.errors import RpcError\n\n"
            '# "brief": one line per message (lab.messages[n].json() shows one in full)\n'
            'lab = await acp_notebook.lab.connect("demo", show="brief")'
        ),
        md("""
## 1. The order of things

The agent is running, but nothing has been said. Try to open a session right away:"""),
        code("try:\n    await lab.new_session()\nexcept StepError as error:\n    print(error)"),
        md("""
## 2. The handshake: `initialize`

The client speaks first: its protocol version (`1`), what it can do (`clientCapabilities`: files,
terminals, …) and who it is (`clientInfo`). The agent answers with the version it speaks, its
capabilities and its auth methods. Neither side uses what the other did not advertise."""),
        code("hello = await lab.initialize()"),
        code('print(lab.messages[0].json()[:400], "…")'),
        code('sorted(hello["agentCapabilities"])'),
        *exercise(
            1,
            "Which protocol version did the agent answer, and does it accept images in prompts "
            "(`promptCapabilities`)?",
            "replace each ... (the check below says what it expects)\n"
            "version = ...\naccepts_images = ...",
            f"{FILLS}\n"
            "if version is ...:\n"
            '    version = hello["protocolVersion"]\n'
            "if accepts_images is ...:\n"
            '    accepts_images = hello["agentCapabilities"]["promptCapabilities"]["image"]',
            'assert version == 1, "version: the protocolVersion the agent answered initialize with '
            '(in `hello`)."\n'
            "assert accepts_images is True, \"accepts_images: the `image` flag of the agent's "
            'promptCapabilities (in `hello`)."',
        ),
        md("""
## 3. `authenticate`

An agent that needs a login lists `authMethods` in its answer; the client calls `authenticate` with
one of their ids. The demo offers one that needs no credentials. An id it did not offer is refused
before it is sent:"""),
        code('[method["id"] for method in hello["authMethods"]]'),
        code(
            'try:\n    await lab.authenticate("github")\nexcept StepError as error:\n    print(error)'
        ),
        code('await lab.authenticate("demo-login")'),
        md("""
## 4. A session: `session/new`

A session is one conversation, in an **absolute** working directory (`cwd`), with the MCP servers
the agent may use. The answer carries the `sessionId` that every later message names. Right after
it, the agent announces its slash commands (`available_commands_update`)."""),
        code(
            'try:\n    await lab.new_session(cwd="tour-workspace")\n'
            "except StepError as error:\n    print(error)"
        ),
        code(
            "try:\n"
            '    await lab.request("session/new", {"cwd": str(workspace), "mcp_servers": []})\n'
            "except StepError as error:\n    print(error)"
        ),
        code('session = await lab.new_session()\nawait lab.until("available_commands_update");'),
        code('print(session["sessionId"], session["modes"]["currentModeId"])'),
        md("""
## 5. A prompt turn

`session/prompt` stays pending for the whole turn. Meanwhile the agent streams `session/update`
notifications — thoughts, message chunks, the session's title, the context used — and the turn
ends with the answer to `session/prompt`, which carries a `stopReason`."""),
        code('turn = await lab.prompt("/think")\nturn'),
        *exercise(
            2,
            "Which update kinds did the agent send during that turn? Collect them in a set from "
            "`lab.messages` (each message has `.update_kind`).",
            "replace ... with the set of the update kinds in lab.messages\nkinds = ...",
            f"{FILLS}\n"
            "if kinds is ...:\n"
            "    kinds = {m.update_kind for m in lab.messages if m.update_kind}",
            'assert isinstance(kinds, set), "kinds: a set ({m.update_kind for m in ...}), '
            'leaving out messages without one."\n'
            'assert {"agent_thought_chunk", "agent_message_chunk", "usage_update"} <= kinds, '
            'f"kinds misses some the turn sent: {kinds}"',
        ),
        md("""
## 6. Be the file system

The agent reads files through the client (`fs/read_text_file`, a request from the agent): the
client answers with the text, and what the client says is what the agent sees."""),
        code(
            'turn = lab.start_prompt("/read notes.txt")\nrequest = await lab.next_request()\nrequest'
        ),
        *exercise(
            3,
            "Answer with a text of your own (`content=`), then wait for the turn to end.",
            "answer `request` with a text of your own, then wait for the turn:\n"
            "#   request.answer(content=...)\n#   await turn",
            f"{ACTS}\n"
            "if not request.answered:\n"
            '    request.answer(content="Written by hand\\n")\n'
            "await turn",
            'assert isinstance(request.answered, dict), "Answer the request first: '
            "request.answer(content='any text'), then await turn.\"\n"
            'mine = request.answered["content"].strip().splitlines()[0]\n'
            'assert any(mine in m.json() for m in lab.messages if m.direction == "recv"), '
            '"The agent\'s reply quotes your text once the turn ends: await turn."',
        ),
        md("""
## 7. You answer a permission request

Before anything risky the agent sends the client a **request**, `session/request_permission`, with
options. This time nobody answers for you. The files the agent reads and writes are served by the
client's normal handlers (`lab.auto("fs")`; the agent first reads the file to see whether it
exists, and the client answers that it does not, with an error); the permission waits for you."""),
        code(
            'lab.auto("fs")\nturn = lab.start_prompt("/write hello.txt Hello from the agent")\nrequest = await lab.next_request()\nrequest'
        ),
        code('request.params["toolCall"]["title"], request.options'),
        *exercise(
            4,
            "Allow it once, then wait for the turn to end (`await turn`).",
            'answer with the id of the "allow once" option (see request.options), then wait:\n'
            "#   request.answer(option_id=...)\n#   await turn",
            f"{ACTS}\n"
            "if not request.answered:\n"
            '    request.answer(option_id="allow-once")\n'
            "await turn",
            'assert turn.result() == {"stopReason": "end_turn"}, "The turn ends normally once '
            'you answer with an option that allows: await turn."\n'
            'assert pathlib.Path("hello.txt").read_text().strip() == "Hello from the agent", '
            '"Allowed, the agent writes hello.txt."',
        ),
        md("Your answer, as it went over the wire:"),
        code(
            'print(next(m for m in lab.messages if m.direction == "send" and m.method == "session/request_permission").json())'
        ),
        code(
            'try:\n    request.answer(option_id="reject-once")\nexcept StepError as error:\n    print(error)'
        ),
        md("""
## 9. Error answers

A request the other side cannot serve is answered with an error object: a `code` and a
`message`. `-32601` means the method does not exist (also the answer to an unknown `_extension`
method), `-32602` invalid params, `-32000` authentication required."""),
        code(
            'try:\n    await lab.request("_acme/unknown", {})\n'
            "except RpcError as error:\n    print(error.code, error.message)"
        ),
        code(
            'try:\n    await lab.prompt("/error")\n'
            "except RpcError as error:\n    print(error.code, error.message)"
        ),
        md("""
## 10. Modes

A session may offer modes (the demo: `ask`, `code`). `session/set_mode` switches; the agent
confirms with a `current_mode_update` (and the demo with the `config_option_update` that mirrors
it)."""),
        code('await lab.set_mode("code")\nawait lab.until("config_option_update");'),
        *exercise(
            6,
            "Switch the session back to `ask` mode.",
            "switch back to `ask`, then wait for the agent to confirm:\n"
            '#   await lab.set_mode(...)\n#   await lab.until("config_option_update")',
            f"{ACTS}\n"
            'modes = [m.payload["update"]["currentModeId"] for m in lab.messages '
            'if m.update_kind == "current_mode_update"]\n'
            'if modes[-1] != "ask":\n'
            '    await lab.set_mode("ask")\n'
            '    await lab.until("config_option_update");',
            'last = [m for m in lab.messages if m.update_kind == "current_mode_update"][-1]\n'
            'assert last.payload["update"]["currentModeId"] == "ask", "The agent\'s last '
            "current_mode_update names the mode it is in: lab.set_mode('ask') and wait for it.\"",
        ),
        md("""
## 11. Load and resume

An agent that advertises `loadSession` can reopen a saved session: it **replays** the whole
conversation as `session/update` notifications, then answers. `session/resume` reopens it without
a replay."""),
        code(
            'second = (await lab.new_session())["sessionId"]\nawait lab.until("available_commands_update")\n'
            'await lab.prompt("Hello")'
        ),
        code(
            'mark = len(lab.messages)\nawait lab.load_session(second)\nawait lab.until("available_commands_update");'
        ),
        *exercise(
            7,
            "Which update kinds did the load replay? Look at the messages after `mark`.",
            "replace ... with the set of the update kinds in lab.messages[mark:]\nreplayed = ...",
            f"{FILLS}\n"
            "if replayed is ...:\n"
            "    replayed = {m.update_kind for m in lab.messages[mark:] if m.update_kind}",
            'assert isinstance(replayed, set), "replayed: a set of the update_kind of the '
            'messages after `mark`."\n'
            'assert {"user_message_chunk", "agent_message_chunk"} <= replayed, '
            'f"The replay holds both sides of the conversation; you have {replayed}"',
        ),
        code('await lab.resume_session(second)\nawait lab.until("available_commands_update");'),
        md("""
## 8. Cancellation in full

`session/cancel` is a notification. The client MUST answer every permission request still pending
with the `cancelled` outcome, and the agent MUST answer the prompt with `stopReason: "cancelled"`
(not an error). `lab.cancel()` does both sides of the client's part. The agent may also withdraw
its request itself with `$/cancel_request` as soon as it reads `session/cancel` — crossing your
answer on the wire, so whether that line shows depends on timing (and the message numbers differ
from here on)."""),
        code(
            'turn = lab.start_prompt("/write bye.txt Goodbye")\nrequest = await lab.next_request()\nrequest.method'
        ),
        code("# NBVAL_IGNORE_OUTPUT\nanswered = await lab.cancel()\nawait turn"),
        code("[r.method for r in answered], request.answered, turn.result()"),
        *exercise(
            5,
            "Was `bye.txt` written?",
            "replace ... with True or False (pathlib can tell)\nwritten = ...",
            f'{FILLS}\nif written is ...:\n    written = pathlib.Path("bye.txt").exists()',
            'assert written is not ..., "written: True if bye.txt exists, else False."\n'
            'assert written is False, "Cancelled before it was allowed, the agent wrote nothing: '
            "look again (pathlib.Path('bye.txt').exists()).\"",
        ),
        md("""
## 12. Cancelling a long turn

A turn cancelled while it streams. How far it got depends on timing, so from here on the message
numbers differ from run to run."""),
        code(
            "# NBVAL_IGNORE_OUTPUT\n"
            'turn = lab.start_prompt("/slow")\nawait lab.until("agent_message_chunk")\n'
            "await lab.cancel()\nawait turn;"
        ),
        code("turn.result()"),
        md("""
## 13. `$/cancel_request`: stop waiting for one request

Any request can be abandoned: the client sends the `$/cancel_request` notification with its id,
and the other side answers that request with error `-32800` (or its result, if it was already
done). `lab.start_request` sends any request in a task; `lab.cancel_request(task)` abandons it."""),
        code(
            "# NBVAL_IGNORE_OUTPUT\n"
            'pending = lab.start_request("session/prompt", {"sessionId": lab.session_id, '
            '"prompt": [{"type": "text", "text": "/slow"}]})\n'
            'await lab.until("agent_message_chunk")\nlab.cancel_request(pending)\n'
            'reply = await lab.until("session/prompt")'
        ),
        code(
            '[m.method for m in lab.messages if m.direction == "send" and m.method == "$/cancel_request"], reply.kind, reply.payload["code"]'
        ),
        md("""
## 14. Goodbye

Closing ends the connection: the agent and everything it started are stopped."""),
        code("await lab.close()\nlab.process_ids"),
        md("""
## 15. Grade an agent

The same checks, run for you against any agent: `acp.report("demo", "claude")` shows agents side
by side (`acp-notebook doctor --report` in a terminal). Each check passes, fails, does not apply
(the agent does not claim what it needs), or is inconclusive."""),
        code('import acp_notebook as acp\nacp.report("demo")'),
    ]
    return new_notebook(
        cells=cells, metadata={"kernelspec": KERNEL, "language_info": {"name": "python"}}
    )
