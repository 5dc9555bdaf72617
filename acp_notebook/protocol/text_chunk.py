"""The overwhelmingly common `session/update`, read without the models: a text chunk.

A streamed reply is thousands of `agent_message_chunk` (or `agent_thought_chunk`)
notifications whose content is ``{"type": "text", "text": ...}``. Validating each one with
the generated models (two discriminated unions, three model instances) was about a third of
the client's whole cost per chunk. :func:`text_chunk` recognises exactly the shapes whose
validation can neither fail nor repair anything — every key one the models read, every value
of the exact JSON type they accept — and returns what the models would have read from it.
Anything else (another key such as ``_meta``, a block that is not text, a value of another
type, an unknown ``sessionUpdate``) returns None and takes the models' lenient path
(``SessionNotification.parse``), with its repairs and its errors, as before.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["CHUNK_UPDATES", "TextChunk", "text_chunk"]

#: The `sessionUpdate` tags of the `ContentChunk` variants (a message's or a thought's chunk).
CHUNK_UPDATES = frozenset({"user_message_chunk", "agent_message_chunk", "agent_thought_chunk"})


class TextChunk(NamedTuple):
    """What ``SessionNotification.parse`` reads from a text chunk's params, no more."""

    session_id: str
    #: The `sessionUpdate` tag: one of :data:`CHUNK_UPDATES`.
    session_update: str
    text: str
    message_id: str | None


def text_chunk(params: Any) -> TextChunk | None:
    """The text chunk ``params`` (a `session/update`'s) hold, if they hold exactly one.

    None unless the models would validate ``params`` as a ``SessionNotification`` holding a
    ``ContentChunk`` variant with a ``TextContentBlock`` and nothing else, without a repair."""
    # Exact types (type(x) is ...): what json.loads gives; anything else is the models' to judge.
    if type(params) is not dict or len(params) != 2:
        return None
    session_id = params.get("sessionId")
    update = params.get("update")
    if type(session_id) is not str or type(update) is not dict:
        return None
    kind = update.get("sessionUpdate")
    if type(kind) is not str or kind not in CHUNK_UPDATES:
        return None
    message_id = update.get("messageId")
    if message_id is not None and type(message_id) is not str:
        return None
    if len(update) != (3 if "messageId" in update else 2):
        return None
    content = update.get("content")
    if type(content) is not dict or len(content) != 2 or content.get("type") != "text":
        return None
    text = content.get("text")
    if type(text) is not str:
        return None
    return TextChunk(session_id, kind, text, message_id)
