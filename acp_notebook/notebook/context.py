"""The user's live data as prompt context: ``%acp what stands out in {sales}?``.

A ``{name}`` naming a variable of the notebook becomes an embedded resource
(``notebook://variables/name``) holding the value as text — CSV for data frames,
JSON for plain containers, ``repr`` otherwise — so the agent sees the data the
user is looking at, not a copy it has to rebuild. Names that are not variables
stay as typed; ``{{name}}`` keeps literal braces. Agents that do not accept
embedded resources get the same text inline.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..protocol import models as m

MAX_CHARS = 200_000
MAX_ROWS = 2_000
_VARIABLE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


@dataclass(frozen=True)
class Attachment:
    name: str
    mime_type: str
    text: str
    note: str = ""

    @property
    def uri(self) -> str:
        return f"notebook://variables/{self.name}"

    def resource_block(self) -> m.EmbeddedResourceContentBlock:
        return m.EmbeddedResourceContentBlock(
            resource=m.TextResourceContents(uri=self.uri, mime_type=self.mime_type, text=self.text)
        )

    def inline_block(self) -> m.TextContentBlock:
        fence = "```"
        while fence in self.text:
            fence += "`"
        note = f" ({self.note})" if self.note else ""
        return m.TextContentBlock(
            text=f"Variable `{self.name}` ({self.mime_type}){note}:\n{fence}\n{self.text}\n{fence}"
        )


def describe_value(name: str, value: Any) -> Attachment:
    """The value as text with a MIME type, capped in size."""
    note = ""
    to_csv = getattr(value, "to_csv", None)
    if callable(to_csv) and hasattr(value, "shape"):  # a pandas DataFrame or Series
        rows = value.shape[0]
        shown = value.head(MAX_ROWS) if rows > MAX_ROWS else value
        if rows > MAX_ROWS:
            note = f"first {MAX_ROWS} of {rows} rows"
        mime, text = "text/csv", str(to_csv(shown))
    elif isinstance(value, str):
        mime, text = "text/plain", value
    elif isinstance(value, (dict, list, tuple, int, float, bool)) or value is None:
        try:
            mime, text = (
                "application/json",
                json.dumps(value, indent=2, ensure_ascii=False, default=repr),
            )
        except (TypeError, ValueError):
            mime, text = "text/plain", repr(value)
    else:
        mime, text = "text/plain", repr(value)
    if len(text) > MAX_CHARS:
        text = text[:MAX_CHARS]
        note = ", ".join(filter(None, [note, f"cut at {MAX_CHARS:,} characters"]))
    return Attachment(name, mime, text, note)


def attach_variables(prompt: str, namespace: Mapping[str, Any]) -> tuple[str, list[Attachment]]:
    """Replace ``{name}`` of existing variables by `` `name` `` and describe their values."""
    found: dict[str, Attachment] = {}

    def replace(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name.startswith("_") or name not in namespace:
            return token
        if name not in found:
            found[name] = describe_value(name, namespace[name])
        return f"`{name}`"

    return _VARIABLE.sub(replace, prompt), list(found.values())


def prompt_with_context(prompt: str, namespace: Mapping[str, Any] | None) -> list[m.ContentBlock]:
    """The prompt's content blocks: its text, then one embedded resource per variable."""
    if namespace is None:
        return [m.TextContentBlock(text=prompt)]
    text, attachments = attach_variables(prompt, namespace)
    return [m.TextContentBlock(text=text), *(a.resource_block() for a in attachments)]


def inline_resources(blocks: list[m.ContentBlock]) -> list[m.ContentBlock]:
    """For agents without ``promptCapabilities.embeddedContext``: the same text, inline."""
    out: list[m.ContentBlock] = []
    for block in blocks:
        if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            resource = block.resource
            name = resource.uri.rsplit("/", 1)[-1]
            out.append(
                Attachment(name, resource.mime_type or "text/plain", resource.text).inline_block()
            )
        else:
            out.append(block)
    return out
