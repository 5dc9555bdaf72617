"""What a prompt sent besides its words, as the turn lists it: "Sent: cell [4] (5 lines) ·
`df` DataFrame 3×2 (first 50 of 1,000 rows shown)".

A client that attaches context (the notebook: cells, variables, the last error) marks the
first block of each attachment with ``_meta["acpNotebook"]`` = ``{"label", "name",
"notes"}``; blocks without it are the prompt's own. Read here once, for the transcript
(``render.py``) and the live view alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..protocol import models as m

#: What a prompt may be given as: text, a content block, its dict, or a list of those.
PromptInput = (
    str | m.ContentBlock | dict[str, Any] | Sequence[str | m.ContentBlock | dict[str, Any]]
)


def prompt_blocks(prompt: PromptInput) -> list[m.ContentBlock]:
    """Content blocks from a string, a block, a dict, or a list of those."""
    items = (
        [prompt]
        if isinstance(prompt, (str, dict)) or not isinstance(prompt, Sequence)
        else list(prompt)
    )
    blocks: list[m.ContentBlock] = []
    for item in items:
        if isinstance(item, str):
            blocks.append(m.TextContentBlock(text=item))
        elif isinstance(item, dict):
            blocks.append(m.parse(m.ContentBlock, item))
        else:
            blocks.append(item)
    return blocks


#: The ``_meta`` key of an attachment's first block.
ATTACHMENT_META = "acpNotebook"


@dataclass(frozen=True)
class SentItem:
    """One attachment of a prompt."""

    label: str
    #: The name the user gave it (``df``), for a variable.
    name: str | None = None
    #: One sentence per thing left out.
    notes: tuple[str, ...] = ()

    def text(self) -> str:
        """ "`df` DataFrame 3×2 (cut: first 50 of 1,000 rows shown)" as plain text."""
        what = f"`{self.name}` {self.label}" if self.name else self.label
        return what + (f" (cut: {'; '.join(self.notes)})" if self.notes else "")


def _meta(block: m.ContentBlock) -> dict[str, Any] | None:
    meta = getattr(block, "field_meta", None)
    value = meta.get(ATTACHMENT_META) if isinstance(meta, dict) else None
    return value if isinstance(value, dict) else None


def is_attachment(block: m.ContentBlock) -> bool:
    """The block is (part of) an attachment, not the prompt's own words."""
    return _meta(block) is not None or (
        # an attachment's picture follows it, unmarked
        isinstance(block, m.ImageContentBlock)
    )


def sent_items(blocks: Iterable[m.ContentBlock]) -> list[SentItem]:
    """The attachments of a prompt, in order."""
    items = []
    for block in blocks:
        meta = _meta(block)
        if meta is None:
            continue
        notes = meta.get("notes")
        name = meta.get("name")
        items.append(
            SentItem(
                str(meta.get("label", "attachment")),
                name if isinstance(name, str) else None,
                tuple(str(n) for n in notes) if isinstance(notes, list) else (),
            )
        )
    return items


def prompt_words(blocks: Iterable[m.ContentBlock]) -> str:
    """The prompt's own text (its attachments left out)."""
    return "".join(
        block.text
        for block in blocks
        if isinstance(block, m.TextContentBlock) and not is_attachment(block)
    )


def sent_line(items: list[SentItem]) -> str:
    """ "Sent: cell [4] (5 lines) · `df` DataFrame 3×2" (plain text; "" for none)."""
    return "Sent: " + " · ".join(item.text() for item in items) if items else ""
