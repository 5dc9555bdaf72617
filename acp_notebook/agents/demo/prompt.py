"""Prompts without a command: an attached error gets its fix (:mod:`.fix`), a
refactoring request goes the ``/edit`` way (with :mod:`.refactors`' rewrites), anything
else gets a description of the content blocks that arrived. The demo agent never pretends
to understand words.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import re
from collections.abc import Sequence
from typing import Any

from ...protocol import models as m
from .cells import edit_cell_holding
from .edits import KNOWN_EXTENSIONS, fence, shorten, unified_diff
from .fix import ERROR_URI, attached, scene_fix
from .refactors import PATTERNS, Refactoring, refactor
from .replies import StopReason, missing_capability
from .tools import Proposal, apply_edit, read_whole
from .turn import Turn

__all__ = ["describe_block", "prompt_chars", "scene_prompt"]

#: What every refactoring proposal says it is.
REFACTORED = (
    "A mechanical refactoring, found with Python's `ast` (I do not understand code the way a "
    "model does): each rewrite keeps what the code does and says it more directly; every "
    "other character stays as it was."
)

_INTENT = re.compile(
    r"\b(refactor\w*|clean\s*up|tidy|improve|document|docstrings?|type[- ]?hints?|annotate|"
    r"rewrite|modernize|polish|edit)\b",
    re.IGNORECASE,
)
_CODE_BLOCK = re.compile(r"```(?:python|py|python3)?[ \t]*\n(.*?)```", re.DOTALL)


def _file_names(text: str) -> list[str]:
    """Words of ``text`` that look like file names with a known extension."""
    found = []
    for word in text.split():
        word = word.strip("`'\"()[]{}<>,;:!?").rstrip(".")
        if posixpath.splitext(word.lower())[1] in KNOWN_EXTENSIONS and re.search(r"\w\.\w", word):
            found.append(word)
    return found


def _size(count: int) -> str:
    return f"{count:,} byte{'s' * (count != 1)}"


def _decoded_size(data: str) -> str:
    try:
        return _size(len(base64.b64decode(data, validate=True)))
    except (binascii.Error, ValueError):
        return f"{len(data):,} characters that are not valid base64"


def _attachment(block: Any) -> dict[str, Any] | None:
    """What the client said a block attaches (acp_notebook's ``_meta``: label, name, notes)."""
    meta = getattr(block, "field_meta", None)
    found = meta.get("acpNotebook") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else None


def describe_block(index: int, block: Any) -> str:
    """One line per received content block, for the reply to plain prompts; what the
    client said it attaches, and what it cut, after it."""
    line = _describe(index, block)
    attached = _attachment(block)
    if attached is not None:
        name = attached.get("name")
        what = f"`{name}` {attached.get('label')}" if name else str(attached.get("label"))
        line += f" — the client attached it as “{what}”"
        notes = attached.get("notes")
        if isinstance(notes, list) and notes:
            line += "; it says it cut: " + "; ".join(str(note) for note in notes)
    return line


def _describe(index: int, block: Any) -> str:
    if isinstance(block, m.TextContentBlock):
        preview = shorten(block.text, 60)
        return f"{index}. `text`, {len(block.text):,} characters: “{preview}”"
    if isinstance(block, m.ImageContentBlock):
        return f"{index}. `image`, {block.mime_type}, {_decoded_size(block.data)}"
    if isinstance(block, m.AudioContentBlock):
        return (
            f"{index}. `audio`, {block.mime_type}, {_decoded_size(block.data)} (I did not "
            "advertise audio in `promptCapabilities`, so a client should not have sent it)"
        )
    if isinstance(block, m.ResourceLinkContentBlock):
        details = [f"uri `{block.uri}`", f"name `{block.name}`"]
        if block.mime_type:
            details.append(f"MIME type {block.mime_type}")
        if block.size is not None:
            details.append(_size(block.size))
        return f"{index}. `resource_link` (a reference; I would read it myself): " + ", ".join(
            details
        )
    if isinstance(block, m.EmbeddedResourceContentBlock):
        resource = block.resource
        if isinstance(resource, m.TextResourceContents):
            size = _size(len(resource.text.encode("utf-8")))
            kind, mime, uri = "text", resource.mime_type, resource.uri
        elif isinstance(resource, m.BlobResourceContents):
            size = _decoded_size(resource.blob)
            kind, mime, uri = "binary", resource.mime_type, resource.uri
        else:
            return f"{index}. `resource` of a shape I do not know"
        return (
            f"{index}. `resource` (embedded {kind} contents): uri `{uri}`, "
            f"{size}, MIME type {mime or 'not given'}"
        )
    kind = getattr(block, "type", None) or "unknown"
    return f"{index}. `{kind}`: a content type I do not know (ignored, as clients and agents must)"


def _block_chars(block: Any) -> int:
    if isinstance(block, m.TextContentBlock):
        return len(block.text)
    if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
        block.resource, m.TextResourceContents
    ):
        return len(block.resource.text)
    if isinstance(block, m.ResourceLinkContentBlock):
        return len(block.uri)
    return 1000  # images, audio and blobs: a flat, deterministic price


def prompt_chars(blocks: Sequence[Any]) -> int:
    return sum(_block_chars(block) for block in blocks)


def _file_target(turn: Turn, text: str) -> str | None:
    """The file a refactoring prompt names: an attached link or file resource first, then
    a file name in the text (resolved against the session cwd)."""
    for block in turn.prompt:
        uri = None
        if isinstance(block, m.ResourceLinkContentBlock):
            uri = block.uri
        elif isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            uri = block.resource.uri
        if uri and uri.startswith("file://") and "#" not in uri and uri.endswith((".py", ".pyi")):
            return turn.resolve(uri)
    names = _file_names(text)
    return turn.resolve(names[0]) if names else None


def _code_target(turn: Turn, text: str) -> tuple[str, str] | None:
    """(label, code) of Python code attached without a file: an embedded resource that is
    Python, or a fenced code block in the text, then in an attachment (a notebook cell)."""
    for block in turn.prompt:
        if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            resource = block.resource
            is_python = "python" in (resource.mime_type or "") or resource.uri.split("#")[
                0
            ].endswith(".py")
            if is_python:
                return f"the embedded resource `{resource.uri}`", resource.text
    match = _CODE_BLOCK.search(text)
    if match:
        return "the code block in your prompt", match.group(1)
    for block in turn.prompt:
        attached = _attachment(block)
        if attached is None:
            continue
        if isinstance(block, m.EmbeddedResourceContentBlock) and isinstance(
            block.resource, m.TextResourceContents
        ):
            body = block.resource.text
        elif isinstance(block, m.TextContentBlock):
            body = block.text
        else:
            continue
        match = _CODE_BLOCK.search(body)
        if match:
            return f"the attached {attached.get('label')}", match.group(1)
    return None


async def _refactored(turn: Turn, code: str, label: str) -> Refactoring | None:
    """The refactoring of ``code``; None, after saying why, when there is none."""
    try:
        result = refactor(code)
    except SyntaxError as exc:
        await turn.say(
            f"I could not parse {label} as Python (line {exc.lineno}: {exc.msg}), so I leave "
            "it alone."
        )
        return None
    if not result.changes:
        await turn.say(
            f"I found nothing to refactor in {label}, so I leave it as it is. I look for "
            f"{PATTERNS}; a real agent would look further."
        )
        return None
    return result


def _listed(result: Refactoring) -> str:
    return "\n".join(f"- {change}" for change in result.changes)


async def _refactor_file(turn: Turn, path: str) -> StopReason:
    shown = turn.display(path)
    if not path.endswith((".py", ".pyi")):
        return await turn.reply(
            f"My mechanical refactoring only knows Python, and `{shown}` is not a Python file. "
            f"`/edit {shown}` shows an edit of any text file."
        )
    if not turn.caps.read:
        return await turn.reply(missing_capability("fs.readTextFile", f"read `{shown}`"))
    text = await read_whole(turn, path)
    if text is None:
        return "end_turn"
    result = await _refactored(turn, text, f"`{shown}`")
    if result is None:
        return "end_turn"
    proposal = Proposal(result.text, REFACTORED, result.changes)
    return await apply_edit(
        turn, path, text, proposal, title=f"Refactor {shown}", action=result.what
    )


async def _refactor_code(turn: Turn, label: str, code: str) -> StopReason:
    result = await _refactored(turn, code, label)
    if result is None:
        return "end_turn"
    await turn.say(f"{REFACTORED}\n\n{_listed(result)}\n\n")
    in_cell = await edit_cell_holding(turn, code, result.text, result.what)
    if in_cell is not None:
        return in_cell
    return await turn.reply(
        f"{label[:1].upper()}{label[1:]} has no file or cell I could edit, so here is the "
        "refactored code instead:\n\n"
        + fence(result.text, "python")
        + "\n\nAs a diff:\n\n"
        + fence(unified_diff(code, result.text, "cell.py"), "diff")
    )


async def scene_prompt(turn: Turn, text: str) -> StopReason:
    """A prompt without a command: refactoring requests get the edit path, everything else
    a description of what arrived; an attached error gets its fix."""
    error = next((a for a in attached(turn) if a.uri == ERROR_URI), None)
    if error is not None:
        return await scene_fix(turn, error)
    if _INTENT.search(text):
        path = _file_target(turn, text)
        if path is not None:
            return await _refactor_file(turn, path)
        code = _code_target(turn, text)
        if code is not None:
            return await _refactor_code(turn, *code)
    blocks = "\n".join(describe_block(i, b) for i, b in enumerate(turn.prompt, 1))
    count = len(turn.prompt)
    reply = (
        "I am a protocol demonstrator, not an AI: I do not understand your words. Here is "
        f"what I received in `session/prompt`, {count} content block{'s' * (count != 1)}:\n\n"
        f"{blocks}\n\n"
    )
    if turn.session.mcp_servers:
        names = ", ".join(f"`{name}`" for name in turn.session.mcp_servers)
        reply += f"The session was given MCP servers ({names})"
        if "notebook" in turn.session.mcp_stdio:
            reply += "; `/tools` shows me using the `notebook` one (your kernel's variables and code).\n\n"
        else:
            reply += "; I list them but do not connect to them.\n\n"
    reply += (
        "To see a feature, send a command: `/read PATH` (file reads), `/edit PATH` (diff and "
        "permission), `/run COMMAND` (terminals), `/plan`, `/think`, `/slow` (then cancel), "
        "`/image`, or `/help` for all of them. `refactor utils.py` proposes a mechanical refactoring."
    )
    if _INTENT.search(text):
        reply += (
            "\n\nIt sounds like you asked for a refactoring, but I found no file name or Python "
            "code in your prompt: name a file (`refactor utils.py`) or attach the code."
        )
    return await turn.reply(reply)
