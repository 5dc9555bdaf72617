"""The prompt in a turn's live view when context was attached: the user's words, then
"Sent: cell [4] (5 lines) · `df` DataFrame 3×2" (what was cut said in amber), and the
attachments' text collapsed under it — shown before the reply starts, so the user sees
what the agent was given."""

from __future__ import annotations

import ipywidgets as w

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


class PromptView:
    """The user's prompt with its attachments (rendered once: a prompt does not stream)."""

    def __init__(
        self, blocks: list[m.ContentBlock], items: list[SentItem], cwd: str | None
    ) -> None:
        label = span("You", f"color: {INFO}; font-weight: 600; font-size: {SMALL_SIZE}")
        attached = [
            block_html(block, cwd)
            for block in blocks
            if is_attachment(block)
            and not isinstance(block, (m.ImageContentBlock, m.ResourceLinkContentBlock))
        ]
        parts = [
            label,
            render_markdown(prompt_words(blocks).strip()),
            sent_html(items),
            details(esc("What was sent"), "".join(attached)) if attached else "",
        ]
        self.widget = w.VBox(
            [w.HTML("".join(parts), layout=w.Layout(margin="0"))],
            layout=w.Layout(
                border_left=f"3px solid {INFO}", padding="0 0 0 8px", margin="4px 0 6px 0"
            ),
        )

    def refresh(self, active: bool = False) -> bool:
        return False
