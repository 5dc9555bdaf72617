"""Tool call cards: everything the user approves is shown — every diff, a diff rebuilt
from rawInput when the agent sent none, the raw input — and terminals stay visible."""

from __future__ import annotations

import ipywidgets as w

from acp_notebook.client.display import MAX_DIFF_LINES, MAX_TERMINAL_CHARS, diff_shown
from acp_notebook.client.rawinput import DERIVED_NOTE, FileDiff, command_of, edits_from_raw_input
from acp_notebook.client.render import Renderer
from acp_notebook.client.terminals import TerminalSnapshot
from acp_notebook.client.transcript import Transcript
from acp_notebook.ui.context import ViewContext
from acp_notebook.ui.toolcall import DiffView, TerminalOutputView, ToolCallCard
from acp_notebook.ui.toolcall_html import WAITING

from .conftest import (
    CWD,
    FakeSession,
    Poster,
    Wire,
    all_html,
    diff_item,
    text,
    tool_call,
    tool_update,
)


def snapshot(
    command: str, output: str, *, exit_code: int | None = None, signal: str | None = None
) -> TerminalSnapshot:
    """A terminal as ``Session.terminal_view`` returns it (exited once it has a status)."""
    return TerminalSnapshot(
        command=command,
        cwd=CWD,
        output=output,
        truncated=False,
        exit_code=exit_code,
        signal=signal,
        released=False,
        exited=exit_code is not None or signal is not None,
    )


def card_for(transcript: Transcript, tool_call_id: str, **ctx: object) -> ToolCallCard:
    return ToolCallCard(
        transcript.tool_calls[tool_call_id],
        ViewContext(post=Poster(), cwd=CWD, **ctx),  # type: ignore[arg-type]
    )


def new_transcript() -> Transcript:
    transcript = Transcript(CWD)
    transcript.begin_turn([text("go")])
    return transcript


def test_the_header_shows_kind_icon_title_kind_and_a_coloured_status():
    transcript = new_transcript()
    transcript.apply(tool_call("t1", "Read `src/app.py`", "read", status="in_progress"))
    card = card_for(transcript, "t1")
    assert "📖" in card.header and ">src/app.py</code>" in card.header
    assert "· read" in card.header and "in progress" in card.header
    assert "var(--jp-brand-color1" in card.header
    transcript.apply(tool_update("t1", status="failed"))
    card.refresh()
    assert "failed" in card.header and "var(--jp-error-color1" in card.header
    assert "var(--jp-error-color1" in card.widget.layout.border_left


def test_locations_are_shown_relative_to_the_session_directory():
    transcript = new_transcript()
    transcript.apply(
        tool_call(
            "t1",
            "Search",
            "search",
            locations=[{"path": f"{CWD}/src/a.py", "line": 12}, {"path": "/etc/hosts"}],
        )
    )
    html = all_html(card_for(transcript, "t1").widget)
    assert "src/a.py:12" in html and CWD not in html and "/etc/hosts" in html


def test_every_diff_of_a_call_is_shown_in_order():
    transcript = new_transcript()
    transcript.apply(
        tool_call(
            "t1",
            "Refactor",
            "edit",
            content=[
                diff_item(f"{CWD}/a.py", "x = 1\n", "x = 2\n"),
                {"type": "content", "content": {"type": "text", "text": "and also"}},
                diff_item(f"{CWD}/b.py", "old\n", "new\n"),
                diff_item(f"{CWD}/new.py", None, "print('new')\nprint('file')\n"),
            ],
        )
    )
    card = card_for(transcript, "t1")
    labels = [view.label for view in card.diff_views]
    assert labels == ["a.py", "b.py", "new.py"]
    html = all_html(card.widget)
    assert html.index("a.py") < html.index("and also") < html.index("b.py") < html.index("new.py")
    assert (
        "x = 1" in html
        and "x = 2" in html
        and "rgba(248, 81, 73" in html
        and "rgba(46, 160, 67" in html
    )
    new_file = card.diff_views[2]
    assert new_file.new_file and new_file.stats == (2, 0) and "new file" in new_file.html
    assert card.derived == []  # the agent sent diffs: nothing is derived


def test_a_large_diff_is_capped_with_a_note():
    old = "".join(f"line {i}\n" for i in range(2000))
    new = "".join(f"LINE {i}\n" for i in range(2000))
    transcript = new_transcript()
    transcript.apply(
        tool_call("t1", "Rewrite", "edit", content=[diff_item(f"{CWD}/big.txt", old, new)])
    )
    view = card_for(transcript, "t1").diff_views[0]
    assert "more diff lines" in view.html
    assert view.html.count("display: block") <= MAX_DIFF_LINES + 1


def test_a_diff_is_derived_from_raw_input_when_the_agent_sent_none():
    transcript = new_transcript()
    transcript.apply(
        tool_call(
            "t1",
            "Edit app.py",
            "edit",
            rawInput={
                "file_path": f"{CWD}/app.py",
                "old_string": "debug = True\n",
                "new_string": "debug = False\n",
            },
        )
    )
    card = card_for(transcript, "t1")
    assert len(card.derived) == 1
    derived = card.derived[0]
    assert derived.label == "app.py" and derived.note and DERIVED_NOTE in derived.note
    assert "debug = True" in derived.html and "debug = False" in derived.html
    assert DERIVED_NOTE in all_html(card.widget)
    # When the agent later sends its own diff, the derived one goes.
    transcript.apply(
        tool_update("t1", content=[diff_item(f"{CWD}/app.py", "debug = True\n", "debug = False\n")])
    )
    card.refresh()
    assert card.derived == [] and len(card.diff_views) == 1


def test_raw_input_shapes_of_known_agents_are_recognised():
    multi = edits_from_raw_input(
        {
            "file_path": "/p/a.py",
            "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "c", "new_string": "d"},
            ],
        }
    )
    assert [e.label for e in multi] == ["/p/a.py", "/p/a.py"]
    opencode = edits_from_raw_input(
        {"filePath": "/p/x.ts", "oldString": "let", "newString": "const"}
    )
    assert opencode[0].new_text == "const" and opencode[0].derived
    codex = edits_from_raw_input(
        {"changes": {"/p/m.rs": {"type": "update", "unified_diff": "@@ -1 +1 @@\n-a\n+b\n"}}}
    )
    assert codex[0].label == "/p/m.rs" and codex[0].patch is not None
    assert codex[0].paths == ["/p/m.rs"]
    patch = edits_from_raw_input(
        {"patch": "*** Begin Patch\n*** Update File: f.py\n@@\n-a\n+b\n*** End Patch"}
    )
    assert patch[0].patch is not None and patch[0].label == "patch"
    assert patch[0].paths == ["f.py"]
    write = edits_from_raw_input({"file_path": "/p/new.md", "content": "# Title\n"}, "edit")
    assert write[0].content_only and write[0].old_text is None and not write[0].new_file
    assert edits_from_raw_input({"file_path": "/p/new.md", "content": "x"}, "read") == []
    assert edits_from_raw_input({"diff": "not a diff at all"}) == []
    assert command_of({"command": ["bash", "-lc", "make test"]}) == "make test"
    assert command_of({"cmd": ["git", "commit", "-m", "a b"]}) == "git commit -m 'a b'"


def test_raw_input_and_output_are_collapsed_pretty_json():
    transcript = new_transcript()
    transcript.apply(tool_call("t1", "Run", "execute", rawInput={"command": "ls -la", "cwd": CWD}))
    card = card_for(transcript, "t1")
    accordion = next(c for c in card.widget.children if isinstance(c, w.Accordion))
    assert accordion.selected_index is None
    assert accordion.titles == ("Raw input",)
    assert "&quot;command&quot;: &quot;ls -la&quot;" in card.raw_sections["Raw input"]
    accordion.selected_index = 0  # the user opens it
    transcript.apply(tool_update("t1", status="completed", rawOutput={"exit": 0}))
    card.refresh()
    assert accordion.titles == ("Raw input", "Raw output") and accordion.selected_index == 0
    assert "&quot;exit&quot;: 0" in card.raw_sections["Raw output"]


def test_a_pending_permission_shows_as_waiting_for_permission():
    session = FakeSession()
    turn = session.submit()
    session.start(turn)
    session.transcript.apply(
        tool_call("t1", "Run tests", "execute", rawInput={"command": "make test"})
    )
    session.request_permission({"toolCallId": "t1"})
    card = card_for(session.transcript, "t1", broker=session.permissions)
    assert WAITING in card.header and "var(--jp-warn-color1" in card.header
    assert len(card.prompts) == 1
    # The prompt comes after everything it is about (here: the raw input).
    html = all_html(card.widget)
    assert html.index("&quot;make test&quot;") < html.index("Permission requested")


def test_unknown_tool_call_content_is_shown_raw():
    transcript = new_transcript()
    transcript.apply(tool_call("t1", "Odd", "other", content=[{"type": "hologram", "beam": 7}]))
    html = all_html(card_for(transcript, "t1").widget)
    assert (
        "Unknown tool call content" in html and "hologram" in html and "&quot;beam&quot;: 7" in html
    )


def test_tool_text_content_that_grows_is_updated_in_place(wire: Wire):
    transcript = new_transcript()
    transcript.apply(
        tool_call(
            "t1",
            "Fetch",
            "fetch",
            content=[{"type": "content", "content": {"type": "text", "text": "part one"}}],
        )
    )
    card = card_for(transcript, "t1")
    first = card.widget.children[2].children[0]
    transcript.apply(
        tool_update(
            "t1",
            content=[
                {"type": "content", "content": {"type": "text", "text": "part one, part two"}}
            ],
        )
    )
    card.refresh()
    assert card.widget.children[2].children[0] is first
    assert "part two" in all_html(card.widget)


# ---------------------------------------------------------------------------- terminals


def test_an_embedded_terminal_streams_and_stays_after_release(wire: Wire):
    terminals: dict[str, TerminalSnapshot] = {"term-1": snapshot("pytest -q", "collecting…\n")}
    transcript = new_transcript()
    transcript.apply(
        tool_call(
            "t1", "Run tests", "execute", content=[{"type": "terminal", "terminalId": "term-1"}]
        )
    )
    card = card_for(transcript, "t1", terminals=terminals.get)
    html = all_html(card.widget)
    assert "pytest -q" in html and "collecting…" in html and "running…" in html
    terminals["term-1"] = snapshot("pytest -q", "collecting…\n3 passed\n", exit_code=0)
    card.refresh()
    assert "3 passed" in all_html(card.widget) and "[exit code 0]" in all_html(card.widget)
    # Released and gone from the manager: the card keeps what it showed.
    del terminals["term-1"]
    transcript.apply(tool_update("t1", status="completed"))
    card.refresh()
    assert "3 passed" in all_html(card.widget) and "[exit code 0]" in all_html(card.widget)
    mark = wire.mark()
    card.refresh()
    assert wire.since(mark) == []


def test_terminal_output_is_segmented_then_capped_like_the_transcript(wire: Wire):
    output = ""
    view: dict[str, TerminalSnapshot] = {}
    terminal = TerminalOutputView("t", view.get)
    sizes = []
    for i in range(600):
        output += f"line {i:05d} " + "x" * 40 + "\n"
        view["t"] = snapshot("make", output)
        mark = wire.mark()
        terminal.refresh()
        sizes.append(wire.bytes_since(mark))
        if len(output) > MAX_TERMINAL_CHARS:
            break
    # While under the cap, a refresh costs about the new output plus a short tail.
    assert max(sizes[:-1]) < 6_000
    view["t"] = snapshot("make", output + "tail\n", signal="SIGTERM")
    terminal.refresh()
    html = all_html(terminal.widget)
    assert "earlier output dropped" in html and "tail" in html and "[killed by SIGTERM]" in html
    assert len(html) < MAX_TERMINAL_CHARS * 1.5


def test_an_unknown_terminal_says_so():
    view = TerminalOutputView("nope", lambda _id: None)
    assert "no output available" in all_html(view.widget)


def test_diff_view_of_a_patch_string_tints_lines():
    patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-old\n+new\n"
    view = DiffView(diff_shown(FileDiff("", patch=patch, derived=True), CWD))
    assert view.stats == (1, 1) and view.label == "patch" and view.note == DERIVED_NOTE
    assert "+++ b/f" in view.html, "a patch keeps its own file lines"
    assert "rgba(46, 160, 67" in view.html and "rgba(248, 81, 73" in view.html


def test_a_cell_edit_the_user_rejected_reads_rejected_not_failed_everywhere():
    """The agent reports its call failed; the client's own report says the user rejected
    the edit in the cell: the live card, the saved Markdown and the plain text say so."""
    transcript = new_transcript()
    transcript.apply(tool_call("a1", "Read cell 1", "read", status="in_progress"))
    transcript.apply(
        tool_call("e1", "Rename result", "edit", status="in_progress", rawInput={"id": "cell-7"})
    )
    transcript.apply(tool_call("a2", "Something else", "other", status="in_progress"))
    card = card_for(transcript, "e1")

    rejected = transcript.reject_running_call("you", mentions="cell-7")
    transcript.apply(tool_update("e1", status="failed"))
    transcript.apply(tool_update("a2", status="failed"))
    card.refresh()

    assert rejected is transcript.tool_calls["e1"]
    assert "🚫 rejected by you" in card.header and "failed" not in card.header
    record = transcript.turns[-1]
    plain = Renderer(transcript, markdown=False).turn(record)
    markdown = Renderer(transcript).turn(record)
    for saved in (plain, markdown):
        assert "Rename result" in saved and "🚫 rejected by you" in saved
        assert "❌ failed" in saved  # only the other call failed
        assert saved.count("🚫") == 1


def test_a_cell_edit_made_stale_by_the_users_typing_reads_refused_not_failed():
    """A proposal the user's own typing made stale ended as "❌ failed" on its card,
    though the notebook refused it: the card says so, and why."""
    from types import SimpleNamespace

    from acp_notebook.client.checkpoints import Checkpoints
    from acp_notebook.notebook.changes.revert import record_cell_change
    from acp_notebook.notebook.tools.registry import CellChangeReport

    transcript = new_transcript()
    transcript.apply(
        tool_call("e1", "Rename result", "edit", status="in_progress", rawInput={"id": "cell-7"})
    )
    card = card_for(transcript, "e1")
    session = SimpleNamespace(transcript=transcript, checkpoints=Checkpoints())
    report = CellChangeReport("edit", "cell-7", 1, "stale", "you", "nb.ipynb", "x = 1\n")
    record_cell_change(session, report)  # type: ignore[arg-type]
    transcript.apply(tool_update("e1", status="failed"))
    card.refresh()

    refused = "🚫 rejected by the notebook: the cell changed after the agent read it"
    assert refused in card.header and "failed" not in card.header
    plain = Renderer(transcript, markdown=False).turn(transcript.turns[-1])
    assert refused in plain and "❌" not in plain
