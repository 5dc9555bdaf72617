"""The prompt in a turn's live view when context was attached: the user's words, then
"Sent: cell [4] (5 lines) · `df` DataFrame 3×2" (what was cut said in amber), and the
attachments' text collapsed under it — shown before the reply starts, so the user sees
what the agent was given. The live view (``PromptView``) is in ``message.py``; this
module has no widgets."""

from __future__ import annotations

from ..client.sent import SentItem, is_attachment, prompt_words
from ..protocol import models as m
from .content import block_html
from .markdown import render_markdown
from .style import INFO, MUTED, SMALL_SIZE, WARN, code, details, esc, span


def sent_html(items: list[SentItem]) -> str:
    listed = [
        (code(item.name) + " " if item.name else "")
        + esc(item.label)
        + (span(esc(f" (cut: {'; '.join(item.notes)})"), f"color: {WARN}") if item.notes else "")
        for item in items
    ]
    return span(
        span("Sent: ", "font-weight: 600") + " · ".join(listed),
        f"color: {MUTED}; font-size: {SMALL_SIZE}; line-height: 1.6",
    )


def prompt_html(blocks: list[m.ContentBlock], items: list[SentItem], cwd: str | None) -> str:
    """The user's words, the "Sent: …" line and the attachments' text collapsed: the live
    view and the saved transcript (``transcript_html.py``) show the same."""
    label = span("You", f"color: {INFO}; font-weight: 600; font-size: {SMALL_SIZE}")
    attached = [
        block_html(block, cwd)
        for block in blocks
        if is_attachment(block)
        and not isinstance(block, (m.ImageContentBlock, m.ResourceLinkContentBlock))
    ]
    return "".join(
        [
            label,
            render_markdown(prompt_words(blocks).strip()),
            sent_html(items),
            details(esc("What was sent"), "".join(attached)) if attached else "",
        ]
    )
