"""A prompt's attachments without a kernel: the blocks follow the agent's prompt
capabilities, every attachment is listed ("Sent: …") in the transcript with what was cut,
and which cells count as code; plus how notebook tool calls are matched by rules."""

from __future__ import annotations

from acp_notebook.client.render import Renderer
from acp_notebook.client.rules import PermissionRules
from acp_notebook.client.sent import prompt_words, sent_items, sent_line
from acp_notebook.client.toolcall import ToolCallState
from acp_notebook.client.transcript import Transcript
from acp_notebook.notebook.prompt.cell_log import holds_no_code
from acp_notebook.notebook.prompt.cells import code_above
from acp_notebook.notebook.prompt.context import Attachment, NotebookPrompt, attach_variables
from acp_notebook.notebook.summaries import Summary, summarise
from acp_notebook.protocol import models as m

PNG = b"\x89PNG\r\n\x1a\n" + b"0" * 20
CELL = Attachment(
    "notebook://cells/4", Summary(None, "cell [4] (2 lines)", "```python\nx = 1\ny = 2\n```")
)
FIGURE = Attachment(
    "notebook://variables/fig", Summary("fig", "Figure 640×480 px, 1 axes", "a figure", png=PNG)
)
BIG = Attachment(
    "notebook://variables/big",
    Summary(
        "big",
        "DataFrame 1,000,000×1",
        "rows…",
        "text/markdown",
        notes=("first 50 of 1,000,000 rows shown",),
    ),
)
PROMPT = NotebookPrompt("look at `fig` and `big`", (CELL, FIGURE, BIG))


def test_a_named_value_is_attached_as_its_summary_itself() -> None:
    _, (attached,), _ = attach_variables("look at {rows}", {"rows": [1, 2, 3]})

    assert attached.uri == "notebook://variables/rows"
    assert attached.summary == summarise([1, 2, 3], "rows")


def test_agents_with_embedded_context_and_images_get_resources_and_an_image() -> None:
    blocks = PROMPT.blocks(m.PromptCapabilities(embedded_context=True, image=True))

    assert [b.type for b in blocks] == ["text", "resource", "resource", "image", "resource"]
    assert [item.text() for item in sent_items(blocks)] == [
        "cell [4] (2 lines)",
        "`fig` Figure 640×480 px, 1 axes",
        "`big` DataFrame 1,000,000×1 (cut: first 50 of 1,000,000 rows shown)",
    ]


def test_other_agents_get_the_same_text_inline_and_no_image_with_a_note() -> None:
    blocks = PROMPT.blocks(m.PromptCapabilities())

    assert all(isinstance(b, m.TextContentBlock) for b in blocks)
    assert "x = 1" in blocks[1].text and "notebook://cells/4" in blocks[1].text
    figure = sent_items(blocks)[1]
    assert figure.notes == ("its picture was left out: the agent does not accept images",)


def test_the_transcript_shows_the_words_and_lists_the_attachments() -> None:
    transcript = Transcript()
    record = transcript.begin_turn(PROMPT.blocks(m.PromptCapabilities(embedded_context=True)))
    transcript.end_turn(record, stop_reason="end_turn")

    plain = Renderer(transcript, markdown=False).turn(record)
    assert plain.startswith("You: look at `fig` and `big`\n\nSent: cell [4] (2 lines) · fig")
    assert "(cut: first 50 of 1,000,000 rows shown)" in plain
    markdown = Renderer(transcript).turn(record)
    assert "*Sent:* cell \\[4\\]" in markdown and "<summary>What was sent</summary>" in markdown


def test_a_prompt_without_attachments_reads_as_before() -> None:
    blocks = NotebookPrompt("hello").blocks(m.PromptCapabilities(embedded_context=True))
    assert [b.to_wire() for b in blocks] == [{"type": "text", "text": "hello"}]
    assert sent_line(sent_items(blocks)) == ""


def test_code_above_the_prompt_and_cells_without_code() -> None:
    above = code_above("import pandas as pd\nx = 3\n%acp what is x?\n")
    assert above is not None and "x = 3" in above.text and "%acp" not in above.text
    assert above.lines == 2
    assert code_above("%acp hello") is None and code_above("%%acp\nbody") is None
    assert holds_no_code("%acp one\n\n%acp two") and holds_no_code("%load_ext acp_notebook")
    assert holds_no_code("# a note\n%acp -t 2 /slow")
    assert not holds_no_code("x = 1\n%acp hi") and not holds_no_code("%%time\nx = 1")


def test_notebook_rules_name_the_tool_and_command_rules_never_match_python() -> None:
    call = ToolCallState("notebook-run_code-1", None, title="Run: rm -rf x", kind="execute")
    call.notebook_tool = "run_code"
    shell = ToolCallState("c1", None, title="rm -rf x", kind="execute")

    rules = PermissionRules.parse(["deny execute rm*", "allow notebook run_code"])
    match = rules.match(call, "/work")
    assert match is not None and match.rule == "allow notebook run_code"
    denied = rules.match(shell, "/work")
    assert denied is not None and denied.action == "deny"
    assert PermissionRules.parse(["allow notebook edit_*"]).match(call, "/work") is None
    assert PermissionRules.parse(["allow notebook"]).match(shell, "/work") is None


def test_the_open_notebook_is_listed_by_its_name_once() -> None:
    prompt = NotebookPrompt("hello", (CELL,), "/work/notebook.ipynb")
    blocks = prompt.blocks(m.PromptCapabilities(embedded_context=True))

    assert blocks[-1].type == "resource_link"
    assert sent_line(sent_items(blocks)) == "Sent: cell [4] (2 lines) · link to notebook.ipynb"


def test_the_notebook_link_names_no_mime_type_an_agent_could_refuse() -> None:
    """opencode failed every prompt from a notebook: its provider refused the link's
    "file part media type application/x-ipynb+json" (-32603)."""
    prompt = NotebookPrompt("hello", (), "/work/notebook.ipynb")
    link = prompt.blocks(m.PromptCapabilities(embedded_context=True))[-1].to_wire()

    assert link["type"] == "resource_link" and "mimeType" not in link
    assert link["uri"] == "file:///work/notebook.ipynb" and link["name"] == "notebook.ipynb"


def test_an_agent_without_embedded_context_reads_the_notebook_path_as_text() -> None:
    prompt = NotebookPrompt("hello", (CELL,), "/work/notebook.ipynb")
    blocks = prompt.blocks(m.PromptCapabilities())

    assert [b.type for b in blocks] == ["text", "text", "text"]
    assert blocks[-1].to_wire()["text"].endswith(": /work/notebook.ipynb")
    assert sent_line(sent_items(blocks)) == "Sent: cell [4] (2 lines) · link to notebook.ipynb"
    assert prompt_words(blocks) == "hello"
