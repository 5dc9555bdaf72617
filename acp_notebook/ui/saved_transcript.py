"""What a finished turn leaves in the notebook: the display bundle that replaces its live view.

That bundle travels once more after the live view has sent the whole text, in a single
``update_display_data``, and each MIME type in it is one more copy (the budget: a
streamed reply's whole widget traffic, live view and saved transcript, at most 3× the reply). So:

- ``text/markdown``, always: JupyterLab, Notebook 7, VS Code, GitHub and nbviewer render
  it themselves; the agent's text in it is made safe by ``client/agent_markdown.py`` (no
  raw HTML, no unsafe link), as it is for the CLI. The whole turn, but for a text longer
  than :data:`KEPT_TEXT` allows (a reply of a megabyte would make a megabyte notebook):
  its start and end are kept around a line saying how much was left out. The live view
  showed it whole.
- ``text/html`` (``transcript_html.py``: tinted cards and diffs, the plan's checklist,
  terminals, what the live view showed) while it costs at most :data:`HTML_LIMIT`
  characters: a turn's cards and a few pages of text, every notebook we ship. Past that the
  turn is mostly the agent's prose, which the Markdown shows as well, while its HTML with
  inline styles (JupyterLab's sanitiser drops a saved output's ``<style>``) is about five
  times the text.
- ``text/plain``, what nbval compares and a terminal shows: the whole turn up to
  :data:`PLAIN_LIMIT` characters; a longer one keeps its beginning and its end (how it
  ended) around a line saying how much was left out and where the whole turn is.
"""

from __future__ import annotations

from ..client.agent_markdown import KeepEnds
from ..client.display import TerminalLookup
from ..client.render import transcript_bundle
from ..client.transcript import CompactionEntry, MessageEntry, TextRun, Transcript, TurnRecord
from .transcript_html import turn_html

#: The longest ``text/html`` kept (characters); the 14.5 KB of the largest turn in the
#: shipped notebooks fits twice.
HTML_LIMIT = 32_000
#: The longest ``text/plain`` kept whole, and what a longer one keeps of its start and end.
PLAIN_LIMIT = 8_000
PLAIN_HEAD = 5_000
PLAIN_TAIL = 2_000
#: What the Markdown keeps of one text (a message's run of text): whole up to 80,000
#: characters (about 20,000 tokens); past that its first 60,000 and last 15,000.
KEPT_TEXT = KeepEnds(limit=80_000, head=60_000, tail=15_000)


def saved_bundle(
    transcript: Transcript, record: TurnRecord, terminals: TerminalLookup | None = None
) -> dict[str, str]:
    """The bundle a finished turn leaves in its cell (see the module docstring)."""
    bundle = transcript_bundle(transcript, record, terminals, keep_ends=KEPT_TEXT)
    whole = not any(run.length > KEPT_TEXT.limit for run in _texts(transcript, record))
    bundle["text/plain"] = short_plain(bundle["text/plain"], markdown_whole=whole)
    # The HTML (inline styles on every element) is longer than the Markdown: a long turn
    # skips rendering it.
    if len(bundle["text/markdown"]) <= HTML_LIMIT:
        html = turn_html(transcript, record, terminals, KEPT_TEXT)
        if len(html) <= HTML_LIMIT:
            return {"text/html": html, **bundle}
    return bundle


def _texts(transcript: Transcript, record: TurnRecord) -> list[TextRun]:
    """The runs of text of the turn's messages (and compaction summaries)."""
    runs: list[TextRun] = []
    for entry in transcript.entries_of(record.index):
        message = entry.summary if isinstance(entry, CompactionEntry) else entry
        if isinstance(message, MessageEntry):
            runs += [item for item in message.items if isinstance(item, TextRun)]
    return runs


def short_plain(text: str, *, markdown_whole: bool = True) -> str:
    """``text`` whole up to :data:`PLAIN_LIMIT`; longer, its first and last lines (cut at
    line ends) around one saying how many characters were left out, and how much of the
    turn the Markdown beside it holds."""
    if len(text) <= PLAIN_LIMIT:
        return text
    head_end = text.rfind("\n", 0, PLAIN_HEAD) + 1 or PLAIN_HEAD
    tail_start = text.find("\n", len(text) - PLAIN_TAIL) + 1 or len(text) - PLAIN_TAIL
    left_out = tail_start - head_end
    holds = "the whole turn" if markdown_whole else "more of the turn"
    note = (
        f"[… {left_out:,} characters left out here; the cell's Markdown output "
        f"(text/markdown) holds {holds}]\n"
    )
    return text[:head_end] + note + text[tail_start:]
