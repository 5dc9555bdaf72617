"""The acp_notebook demo agent: an ACP agent on stdio that demonstrates the protocol.

It is not a fake AI. It never pretends to understand a prompt: it shows what a real agent
would send and why, and it really reads, writes and runs things through the client
(``fs/*``, ``terminal/*``), always after asking where a real agent would ask. Everything
it sends is deterministic (counters instead of random ids, no timestamps in message
text), so the same prompts give the same transcript.

Run it with ``python -m acp_notebook.agents.demo`` (or ``acp-notebook demo-agent``), or in
the same process with :func:`serve` over any pair of byte streams. The pieces:
:mod:`.server` (an :class:`~acp_notebook.agents.interface.Agent`: one typed handler per
ACP method), :mod:`.store` and :mod:`.session` (sessions,
their modes and options, the state file), :mod:`.turn` (the API the demonstrations are
written in), :mod:`.history` (what ``session/load`` replays), :mod:`.scenes` (the command
table and the simple demonstrations), :mod:`.tools`, :mod:`.elicitation` and
:mod:`.prompt` (the other demonstrations), :mod:`.risk` (which actions it asks about
again), :mod:`.refactors`, :mod:`.repairs`, :mod:`.edits` and
:mod:`.content` (the edits it proposes, text helpers, generated content), :mod:`.command`
(the command line, on :mod:`acp_notebook.protocol.stdio`).

Slash commands (ACP slash commands are plain prompt text; the list is sent as an
``available_commands_update`` after ``session/new``, ``session/load`` and
``session/resume``):

``/help``
    Lists the commands.
``/read PATH [LINE [LIMIT]]``
    A ``read`` tool call (``pending`` → ``in_progress`` → ``completed``, with
    ``locations``): ``fs/read_text_file`` with one ``line``/``limit`` window (default the
    first 20 lines, plus one line to learn whether more follow), the way agents read around
    what they need instead of a whole file. The tool call's content shows the lines read.
``/edit PATH``
    Reads the file, proposes a change as ``diff`` content (full old and new text), asks
    with ``session/request_permission`` (Allow once / Allow always / Reject) and writes
    with ``fs/write_text_file`` only when allowed; the tool call ends ``completed``, or
    ``failed`` when rejected or cancelled (the file is then unchanged). The change is
    mechanical: placeholder docstrings and ``Any`` type hints for Python functions that
    lack them (found with ``ast``; every other byte kept), one clearly labelled comment
    line for other text files; JSON, notebooks and CSV are refused (an extra line would
    break them).
``/write PATH TEXT``
    The same flow, creating or overwriting PATH with TEXT (everything after PATH, newlines
    included, plus a final newline; quote a PATH with spaces). A new file's diff has
    ``oldText: null``.
``/run COMMAND``
    An ``execute`` tool call: permission, then ``terminal/create`` (``sh -c COMMAND`` in
    the session cwd, 64 KiB output limit), the terminal embedded in the tool call while
    it runs, ``terminal/wait_for_exit``, ``terminal/output``, ``terminal/release``;
    ``completed`` or ``failed`` by exit code.
``/plan``
    A five-step ``plan`` whose entries go ``pending`` → ``in_progress`` → ``completed``
    (each update carries the whole plan), interleaved with message chunks.
``/think``
    ``agent_thought_chunk`` updates, then the answer as a new message.
``/slow``
    Streams one word every 0.1 s for five seconds; ``session/cancel`` stops it at once and
    the prompt is answered with ``stopReason: "cancelled"``.
``/refuse``
    Ends the turn with ``stopReason: "refusal"``.
``/long [N]``
    N message chunks (default 3,000, about 120 KB of Markdown: headings, lists, code
    blocks) as fast as possible, for streaming tests.
``/image``
    An ``image`` content block (a 64×64 PNG generated with zlib and struct).
``/usage``
    Explains the ``usage_update`` that ends every turn (4 characters a token, out of the
    selected model's context window; no ``cost``: the demo costs nothing).
``/mode ask|code``
    The agent switches the session mode itself (``current_mode_update``).
``/title TEXT``
    Renames the session (``session_info_update``); the first prompt of a session names it.
``/fail``
    A tool call that ends ``failed``.
``/ask``
    A form ``elicitation/create`` (name: required text; age: whole number 0–150;
    language: one of Python, Rust, Julia, Other; newsletter: yes/no, default no; topics:
    any of four), then says what came back: the values (``accept``), ``decline`` or
    ``cancel``. Only when the client advertised ``elicitation.form``.
``/ask-url``
    A URL ``elicitation/create`` inside a tool call (a pretend device sign-in at
    ``https://example.com/device?code=DEMO-1234``); once the user accepted (consented to
    open it), ``elicitation/complete`` and the tool call completes. Only when the client
    advertised ``elicitation.url``. The agent never opens or fetches the URL.
``/unknown``
    Sends a ``session/update`` type and a content block type that no client knows, to
    show that clients must tolerate them (these two messages are outside the schema).
``/error``
    Answers the prompt with a JSON-RPC error instead of a stop reason.
``/stop REASON``
    Ends the turn with the given stop reason.

Any other prompt gets a description of the content blocks received (text with its length,
resource links, embedded resources with size and MIME type, images). A refactoring
request (``refactor utils.py``, or "refactor this" with attached Python code) goes the
``/edit`` way with the mechanical Python change; attached code without a file gets the
proposal in the reply instead (the agent never writes a file the user did not name).

Sessions: ``session/new`` answers with modes ``ask`` (asks before every edit and command,
unless the user chose "Allow always" for that kind, at that risk or a higher one, earlier
in the session; a destructive command is always asked, without "Allow always") and
``code`` (the same), and config options ``mode``, ``model`` (a grouped select: ``demo-small``,
``demo-large``) and the boolean ``verbose`` (adds protocol notes to replies; only offered
to clients that advertise ``session.configOptions.boolean``). ``session/load`` replays
the history before answering; ``session/list`` (``cwd`` filter, opaque cursor),
``session/resume``, ``session/close`` (cancels running work) and ``session/delete`` are
supported. The agent never touches the disk itself, except its own ``--state-file``.

Paths in prompts may be relative to the session cwd; the agent always sends absolute
paths. A capability the client did not advertise (``fs.readTextFile``,
``fs.writeTextFile``, ``terminal``) is never used: the reply says so and skips the step.
Each turn ends with a ``usage_update``; the first prompt of a session sends a
``session_info_update`` with a title taken from the prompt. ``session/cancel`` stops any
demonstration at its next step: a pending ``session/request_permission`` or other request
to the client is withdrawn with ``$/cancel_request``, unfinished tool calls end
``failed``, a running terminal is killed and released, and the prompt is answered
``cancelled``.

Options: ``--require-auth`` (or ``ACP_DEMO_REQUIRE_AUTH=1``): ``session/new``, ``load``
and ``resume`` answer ``-32000`` until ``authenticate`` with ``demo-login`` (which needs no
credentials). ``--state-file PATH`` (or ``ACP_DEMO_STATE_FILE``): keep sessions in a JSON
file (written atomically) so that a later process can list and load them.
``--page-size N``: ``session/list`` page size (default 50). ``--log-level LEVEL``: what
to log to stderr (default ``WARNING``); nothing but protocol messages ever goes to stdout.
When stdin ends the agent still answers the requests it received (within ten seconds),
then exits with code 0.
"""

from .command import main
from .server import DemoAgent, DemoOptions, serve

__all__ = ["DemoAgent", "DemoOptions", "main", "serve"]
