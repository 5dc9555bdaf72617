"""Rendering a transcript as Markdown and plain text: deterministic, paths relative to cwd."""

from __future__ import annotations

import re
from typing import Any

import pytest

from acp_notebook.client.display import MAX_DIFF_LINES, unified_diff
from acp_notebook.client.formatting import code_span, fence, short_path
from acp_notebook.client.permissions import PermissionBroker
from acp_notebook.client.rawinput import FileDiff
from acp_notebook.client.render import (
    Renderer,
    summary_html,
    transcript_bundle,
    usage_tokens_line,
)
from acp_notebook.client.terminals import TerminalSnapshot
from acp_notebook.client.transcript import Transcript, TurnRecord
from acp_notebook.protocol import models as m

CWD = "/work/project"


def update(raw: dict[str, Any]) -> Any:
    return m.parse(m.SessionUpdate, raw)


def one_turn(*raws: dict[str, Any], stop: str | None = "end_turn", prompt: str = "do it",
             cwd: str = CWD) -> tuple[Transcript, TurnRecord]:  # fmt: skip
    transcript = Transcript(cwd)
    record = transcript.begin_turn([m.TextContentBlock(text=prompt)])
    for raw in raws:
        transcript.apply(update(raw))
    transcript.end_turn(record, stop_reason=stop)
    return transcript, record


def md(transcript: Transcript, record: TurnRecord, **kwargs: Any) -> str:
    return Renderer(transcript, **kwargs).turn(record)


def plain(transcript: Transcript, record: TurnRecord, **kwargs: Any) -> str:
    return Renderer(transcript, markdown=False, **kwargs).turn(record)


def chunk(value: str) -> dict[str, Any]:
    return {"sessionUpdate": "agent_message_chunk", "content": {"type": "text", "text": value}}


def call(tool_call_id: str = "t1", **fields: Any) -> dict[str, Any]:
    return {"sessionUpdate": "tool_call", "toolCallId": tool_call_id, **fields}


def diff(path: str, old: str | None, new: str) -> dict[str, Any]:
    return {"type": "diff", "path": path, "oldText": old, "newText": new}


FULL = [
    chunk("Let me **look**."),
    {"sessionUpdate": "agent_thought_chunk", "content": {"type": "text", "text": "pondering"}},
    call("t1", title="Edit a.py", kind="edit", status="completed",
         content=[diff(f"{CWD}/src/a.py", "x = 1\n", "x = 2\n")],
         locations=[{"path": f"{CWD}/src/a.py", "line": 4}]),
    {"sessionUpdate": "plan", "entries": [
        {"content": "Read", "priority": "high", "status": "completed"},
        {"content": "Edit", "priority": "medium", "status": "in_progress"},
        {"content": "Test", "priority": "low", "status": "pending"}]},
    {"sessionUpdate": "usage_update", "used": 50000, "size": 200000,
     "cost": {"amount": 0.0125, "currency": "USD"}},
    chunk("Done."),
]  # fmt: skip


def test_rendering_is_deterministic() -> None:
    first = transcript_bundle(*one_turn(*FULL))
    second = transcript_bundle(*one_turn(*FULL))
    assert first == second
    assert set(first) == {"text/markdown", "text/plain"}


def test_markdown_of_a_whole_turn() -> None:
    out = md(*one_turn(*FULL))
    assert out.startswith("**You:** do it\n\nLet me **look**.\n\n")
    assert (
        '<details style="margin-bottom: 0.6em"><summary>'
        "Thought</summary>\n\npondering\n\n</details>" in out
    )
    assert "✏️ **Edit a.py** · edit · ✅ completed" in out
    assert "Locations: `src/a.py:4`" in out
    assert "**Plan**\n- [x] Read (high)\n- [~] **Edit** (medium)\n- [ ] Test (low)" in out
    assert out.endswith(
        "*Stop reason: end_turn — the agent finished its turn.*\n\n"
        "*Context: 50,000 / 200,000 tokens (25%) · Cost: 0.0125 USD*\n"
    )


def test_plain_text_has_no_markdown_markup() -> None:
    out = plain(*one_turn(*FULL))
    assert out.startswith("You: do it\n")
    assert "✏️ Edit a.py · edit · ✅ completed" in out
    assert "Locations: src/a.py:4" in out
    assert "Thought:\n  pondering" in out
    assert "- [~] Edit (in progress) (medium)" in out
    assert "<details>" not in out and "**Edit a.py**" not in out
    assert "Stop reason: end_turn — the agent finished its turn." in out


def test_paths_inside_cwd_are_relative_and_others_stay_absolute() -> None:
    assert short_path(f"{CWD}/src/a.py", CWD) == "src/a.py"
    assert short_path("/etc/hosts", CWD) == "/etc/hosts"
    assert short_path(f"{CWD}-other/x.py", CWD) == f"{CWD}-other/x.py"
    assert short_path("relative.py", CWD) == "relative.py"
    out = md(*one_turn(
        call(title="Look", locations=[{"path": f"{CWD}/a.py"}, {"path": "/etc/hosts", "line": 2}]),
    ))  # fmt: skip
    assert "Locations: `a.py`, `/etc/hosts:2`" in out


def test_the_same_turn_renders_the_same_in_another_directory() -> None:
    def events(root: str) -> list[dict[str, Any]]:
        return [
            call(title="Edit", kind="edit", content=[diff(f"{root}/pkg/m.py", "a\n", "b\n")],
                 locations=[{"path": f"{root}/pkg/m.py", "line": 1}]),
        ]  # fmt: skip

    here = md(*one_turn(*events("/home/alice/proj"), cwd="/home/alice/proj"))
    there = md(*one_turn(*events("/tmp/ci/build"), cwd="/tmp/ci/build"))
    assert here == there


def test_every_diff_is_shown() -> None:
    out = md(*one_turn(
        call(title="Refactor", kind="edit", content=[
            diff(f"{CWD}/a.py", "a = 1\n", "a = 2\n"),
            {"type": "content", "content": {"type": "text", "text": "and also"}},
            diff(f"{CWD}/b.py", None, "print('new')\n"),
            diff(f"{CWD}/c.py", "same\n", "same\n"),
        ]),
    ))  # fmt: skip
    assert "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n" in out
    assert "--- /dev/null\n+++ b/b.py\n@@ -0,0 +1 @@\n+print('new')\n" in out
    assert "(no changes to c.py)" in out
    assert "and also" in out
    assert out.count("```diff") == 3


def test_a_missing_final_newline_is_marked_and_long_diffs_are_cut() -> None:
    text = unified_diff(FileDiff(f"{CWD}/x", "a", "b"), CWD)
    assert "\\ No newline at end of file" in text
    big = unified_diff(
        FileDiff(f"{CWD}/big", "", "".join(f"{n}\n" for n in range(1000))),
        CWD,
    )
    assert big.splitlines()[-1].endswith("more diff lines")
    assert len(big.splitlines()) == MAX_DIFF_LINES + 1


def test_terminal_output_comes_from_the_lookup() -> None:
    def snapshot(command: str, output: str, **status: Any) -> TerminalSnapshot:
        fields: dict[str, Any] = {
            "truncated": False,
            "exit_code": None,
            "signal": None,
            "exited": True,
        }
        return TerminalSnapshot(
            command=command, cwd=CWD, output=output, released=False, **{**fields, **status}
        )

    views = {
        "done": snapshot("make test", "ok\n", exit_code=0),
        "killed": snapshot("sleep 99", "", signal="SIGKILL"),
        "running": snapshot("tail -f log", "line 1", truncated=True, exited=False),
    }
    transcript, record = one_turn(
        call(title="Run", kind="execute", content=[
            {"type": "terminal", "terminalId": tid} for tid in ("done", "killed", "running", "gone")
        ]),
    )  # fmt: skip
    out = md(transcript, record, terminals=views.get)
    assert "```console\n$ make test\nok\n[exit code 0]\n```" in out
    assert "$ sleep 99\n[killed by SIGKILL]\n" in out
    assert "$ tail -f log\n… (earlier output dropped)\nline 1\n```" in out
    assert "[terminal gone]" in out
    assert "[terminal done]" in md(transcript, record)  # no lookup: only the id


def test_refusal_is_explained() -> None:
    transcript, record = one_turn(chunk("No."), stop="refusal")
    line = Renderer(transcript).stop_line(record)
    assert line.startswith("Stop reason: refusal — the agent refused to continue.")
    assert "will not be part of the next turn's context" in line
    assert line in plain(transcript, record)


@pytest.mark.parametrize(
    ("stop", "words"),
    [
        ("cancelled", "the turn was cancelled."),
        ("max_tokens", "token limit"),
        ("max_turn_requests", "limit of requests"),
    ],
)
def test_every_stop_reason_is_said_in_words(stop: str, words: str) -> None:
    transcript, record = one_turn(stop=stop)
    assert words in Renderer(transcript).stop_line(record)


def test_an_unknown_stop_reason_an_error_and_a_running_turn() -> None:
    transcript, record = one_turn(stop="future_reason")
    assert Renderer(transcript).stop_line(record) == "Stop reason: future_reason"

    transcript = Transcript(CWD)
    record = transcript.begin_turn([m.TextContentBlock(text="x")])
    assert Renderer(transcript).stop_line(record) == "Running…"
    transcript.end_turn(record, error="The agent exited with code 3.")
    assert md(transcript, record).endswith("**Error:** The agent exited with code 3.\n")
    assert plain(transcript, record).endswith("Error: The agent exited with code 3.\n")


def test_a_cancel_that_ended_otherwise_says_so() -> None:
    transcript = Transcript(CWD)
    record = transcript.begin_turn([m.TextContentBlock(text="x")])
    record.cancel_requested = True
    transcript.end_turn(record, stop_reason="end_turn")
    assert Renderer(transcript).stop_line(record).endswith("(a cancel was requested)")


def test_unknown_content_and_updates_are_collapsed_json() -> None:
    transcript, record = one_turn(
        {"sessionUpdate": "agent_message_chunk", "content": {"type": "hologram", "z": 1, "a": 2}},
        {"sessionUpdate": "teleport", "to": "mars"},
        call(title="T", content=[{"type": "widget", "id": 7}]),
    )
    out = md(transcript, record)
    assert (
        '<details style="margin-bottom: 0.6em"><summary>'
        "Unknown content <code>hologram</code> (shown raw)</summary>\n\n"
        '```json\n{\n  "a": 2,\n  "type": "hologram",\n  "z": 1\n}\n```\n\n</details>'
    ) in out
    assert "<summary>Unknown update <code>teleport</code> (shown raw)</summary>" in out
    assert "<summary>Unknown tool call content <code>widget</code> (shown raw)</summary>" in out
    text = plain(transcript, record)
    assert 'Unknown update `teleport` (shown raw):\n  ```json\n  {\n    "sessionUpdate"' in text


def test_a_diff_derived_from_raw_input_is_shown_and_labelled() -> None:
    transcript, record = one_turn(
        call(title="Edit", kind="edit", rawInput={
            "file_path": f"{CWD}/a.py", "old_string": "x = 1\n", "new_string": "x = 2\n"}),
        call("t2", title="Write", kind="edit",
             rawInput={"path": f"{CWD}/new.txt", "content": "hello\n"}),
        call("t3", title="Run", kind="execute", rawInput={"command": "ls"}),
    )  # fmt: skip
    out = md(transcript, record)
    assert out.count("*Diff derived from rawInput:*") == 2
    assert "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n" in out
    assert "+++ b/new.txt" in out and "+hello" in out
    assert '<details style="margin-bottom: 0.6em"><summary>Raw input</summary>' in out


def test_no_derived_diff_when_the_agent_sent_a_real_one() -> None:
    transcript, record = one_turn(
        call(title="Edit", kind="edit", content=[diff(f"{CWD}/a.py", "1\n", "2\n")],
             rawInput={"file_path": f"{CWD}/a.py", "old_string": "1\n", "new_string": "2\n"}),
    )  # fmt: skip
    out = md(transcript, record)
    assert "derived from rawInput" not in out
    assert out.count("```diff") == 1


def test_permission_decisions_are_shown_on_the_tool_call() -> None:
    transcript = Transcript(CWD)
    record = transcript.begin_turn([m.TextContentBlock(text="x")])
    broker = PermissionBroker("ask", interactive=True)
    request = broker.open(
        {"toolCallId": "t1"}, [{"optionId": "ok", "name": "Allow once", "kind": "allow_once"}]
    )
    transcript.merge_permission_tool_call(
        m.ToolCallUpdate.parse({"toolCallId": "t1", "title": "Write x"}), request
    )
    assert "Permission: waiting for permission" in md(transcript, record)
    broker.choose(request.key, "ok")
    transcript.end_turn(record, stop_reason="end_turn")
    assert "Permission: Allow once (chosen by user)" in md(transcript, record)


def test_content_blocks_in_messages() -> None:
    transcript, record = one_turn(
        {"sessionUpdate": "agent_message_chunk", "content": {
            "type": "resource_link", "uri": "https://x.org/r", "name": "r", "title": "Report",
            "mimeType": "text/html", "size": 2048}},
        {"sessionUpdate": "agent_message_chunk", "content": {
            "type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}},
        {"sessionUpdate": "agent_message_chunk", "content": {
            "type": "image", "data": "not base64!", "mimeType": "image/png"}},
        {"sessionUpdate": "agent_message_chunk", "content": {
            "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"}},
        {"sessionUpdate": "agent_message_chunk", "content": {
            "type": "resource", "resource": {"uri": f"file://{CWD}/cell.py", "text": "x = 1\n",
                                              "mimeType": "text/x-python"}}},
    )  # fmt: skip
    out = md(transcript, record)
    assert "🔗 [Report](https://x.org/r) (text/html, 2.0 KB)" in out
    assert "![image (image/png, " in out
    assert "](data:image/png;base64,iVBORw0KGgo=)" in out
    assert "[image image/png, " in out  # not base64: never put into a data: URI
    assert "base64,not base64!" not in out
    assert "[audio audio/wav, 4 B]" in out  # "UklGRg==" is the 4 bytes "RIFF"
    assert "📎 <code>cell.py</code> (text/x-python, 6 B)" in out and "```python\nx = 1\n```" in out
    text = plain(transcript, record)
    assert "🔗 Report <https://x.org/r>" in text
    assert "data:image" not in text


def test_a_session_renders_entries_before_the_first_turn_then_each_turn() -> None:
    transcript = Transcript(CWD)
    transcript.apply(update({"sessionUpdate": "user_message_chunk",
                             "content": {"type": "text", "text": "replayed question"}}))  # fmt: skip
    transcript.apply(update(chunk("replayed answer")))
    for prompt in ("first", "second"):
        record = transcript.begin_turn([m.TextContentBlock(text=prompt)])
        transcript.apply(update(chunk(f"answer to {prompt}")))
        transcript.end_turn(record, stop_reason="end_turn")
    out = Renderer(transcript, markdown=False).session()
    order = [out.index(s) for s in ("replayed question", "replayed answer", "You: first",
                                      "answer to first", "You: second", "answer to second")]  # fmt: skip
    assert order == sorted(order)
    assert out.count("Stop reason: end_turn") == 2
    # One turn on its own holds only its entries.
    alone = Renderer(transcript, markdown=False).turn(transcript.turns[1])
    assert "first" not in alone and "replayed" not in alone


def test_usage_lines() -> None:
    assert usage_tokens_line(None) == ""
    assert (
        usage_tokens_line({"inputTokens": 1200, "outputTokens": 340})
        == "Tokens: 1,200 in · 340 out"
    )
    transcript, record = one_turn({"sessionUpdate": "usage_update", "used": None, "size": 1000})
    assert Renderer(transcript).usage_line() == ""
    transcript, record = one_turn({"sessionUpdate": "usage_update", "used": 10, "size": 0})
    assert Renderer(transcript).usage_line() == "Context: 10 tokens"
    record.usage = {"inputTokens": 5, "outputTokens": 7}
    assert "*Tokens: 5 in · 7 out*" in md(transcript, record)


def test_fences_survive_backticks_inside() -> None:
    assert fence("a ``` b") == "````\na ``` b\n````"
    assert fence("x", "py") == "```py\nx\n```"


def test_notes_render_in_italics() -> None:
    out = md(*one_turn({"sessionUpdate": "session_info_update", "title": "Bug hunt"}))
    assert "*Session title: Bug hunt.*" in out


def message_with(*blocks: dict[str, Any]) -> str:
    return md(*one_turn(*({"sessionUpdate": "agent_message_chunk", "content": b} for b in blocks)))


def test_an_agent_mime_type_never_breaks_out_of_a_saved_image() -> None:
    out = message_with(
        {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png)[x](javascript:alert(1)"},
        {"type": "image", "data": "UklGRg==", "mimeType": "audio/wav"},
    )
    assert "data:" not in out and "](javascript:" not in out
    assert r"[image image/png\)\[x\]\(javascript:alert\(1\), 8 B]" in out  # text, not a link
    assert "[image audio/wav, 4 B]" in out  # not an image type: not inlined either


def test_a_link_a_browser_must_not_follow_is_saved_as_text() -> None:
    link = {"type": "resource_link", "uri": "javascript:alert(1)", "name": "click",
            "mimeType": "x)[y](javascript:alert(2)"}  # fmt: skip
    turn = one_turn({"sessionUpdate": "agent_message_chunk", "content": link})
    out = md(*turn)
    assert r"🔗 click \<javascript:alert\(1\)\> (x\)\[y\]\(javascript:alert\(2\))" in out
    assert not re.search(r"(?<!\\)(\]\(|<)javascript:", out), "nothing unescaped starts a link"
    assert "🔗 click <javascript:alert(1)> (x)[y](javascript:alert(2))" in plain(*turn)


def test_long_tool_text_is_cut_like_the_live_view() -> None:
    text = "x" * 60_000
    out = md(*one_turn(call(title="Read", kind="read", content=[
        {"type": "content", "content": {"type": "text", "text": text}}])))  # fmt: skip
    assert "… 10,000 more characters not shown" in out and "x" * 60_000 not in out


def test_a_derived_patch_is_cut_like_any_diff() -> None:
    patch = "--- a/big\n+++ b/big\n@@ -1,900 +1,900 @@\n" + "".join(f"+{n}\n" for n in range(900))
    out = md(*one_turn(call(title="Patch", kind="edit", rawInput={"patch": patch})))
    assert "*Diff derived from rawInput:*" in out
    assert f"… {903 - MAX_DIFF_LINES} more diff lines" in out


def test_terminal_output_past_the_limit_says_the_start_is_not_shown() -> None:
    output = "".join(f"line {n}\n" for n in range(5000))
    snapshot = TerminalSnapshot(command="seq", cwd=CWD, output=output, truncated=False,
                                exit_code=0, signal=None, released=True, exited=True)  # fmt: skip
    transcript, record = one_turn(
        call(title="Run", kind="execute", content=[{"type": "terminal", "terminalId": "t"}])
    )
    out = md(transcript, record, terminals={"t": snapshot}.get)
    assert "$ seq\n… (earlier output dropped)\n" in out and "line 4999\n[exit code 0]" in out
    assert "line 0\n" not in out


def test_base64_wrapped_in_lines_is_still_inlined_without_the_breaks() -> None:
    out = message_with({"type": "image", "data": "iVBORw0K\nGgo=", "mimeType": "image/png"})
    assert "](data:image/png;base64,iVBORw0KGgo=)" in out


def test_a_collapsed_sections_summary_shows_code_without_backticks() -> None:
    # Markdown is not read inside <summary>: the code spans become <code>, the rest escaped.
    assert summary_html("📎 " + code_span("a`b<i>.py") + " (text, 2 B) <b>") == (
        "📎 <code>a`b&lt;i&gt;.py</code> (text, 2 B) &lt;b&gt;"
    )
    assert summary_html("Unknown update " + code_span("`x") + " (shown raw)") == (
        "Unknown update <code>`x</code> (shown raw)"
    )


@pytest.mark.parametrize("confined", [True, False])
def test_a_write_a_confined_agent_reports_refused_reads_as_the_sandbox_s(confined: bool) -> None:
    # Claude Code's Write fails inside the sandbox with Node's error, as tool output.
    transcript = Transcript(CWD)
    transcript.confined = confined
    record = transcript.begin_turn([m.TextContentBlock(text="write it")])
    error = "EACCES: permission denied, open '/home/me/x'"
    failed = call(
        title="Write /home/me/x",
        kind="edit",
        status="failed",
        content=[{"type": "content", "content": {"type": "text", "text": error}}],
    )
    transcript.apply(update(failed))
    transcript.end_turn(record, stop_reason="end_turn")
    refused = "failed: a write was refused, most likely by the sandbox"
    assert (refused in md(transcript, record)) is confined
    assert (refused in plain(transcript, record)) is confined
    assert "❌ failed" in md(transcript, record)
