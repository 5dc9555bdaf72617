"""What a received line may become: JSON bounded in depth, text that can leave the process.

Every agent-controlled value enters through :func:`decode_line` (the peer's reader), so the
layers above (models and their repair pass, renderers, the redactor, the inspector, trace
writers) never see a value nested deeper than :data:`MAX_DEPTH` or a lone UTF-16 surrogate:

* **Depth.** A deeper container is replaced by the string :data:`CUT_NOTE`, where it was,
  so the message keeps its id and everything else (a ``rawInput`` nested 900 deep shows its
  first 64 levels and a note). Without the cut, ``json.loads`` raises ``RecursionError`` at
  about 1000 levels, and every recursive consumer (pydantic, renderers, ``json.dumps``)
  near there.
* **Surrogates.** JSON may escape a lone surrogate (``"\\ud800"``), which Python decodes
  into a ``str`` that cannot be encoded as UTF-8: every writer (the JSON-RPC reply echoing
  it, stdout, traces, widgets, saved notebooks) would crash on it. The policy is to replace
  it with U+FFFD at the reader, once, as a UTF-8 decoder replaces an invalid byte; writers
  still encode through :func:`encode_message`/:func:`scrub` for values that did not come
  from the wire.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

__all__ = ["CUT_NOTE", "MAX_DEPTH", "abridged", "bounded", "decode_line", "encode_message", "scrub"]

#: Containers nested deeper than this are cut (the message object itself is level 1).
MAX_DEPTH = 64
#: What a cut container becomes.
CUT_NOTE = f"… (nested deeper than {MAX_DEPTH} levels; cut)"
#: The token cutter runs in Python per token: lines longer than this that json cannot
#: parse for their depth are rejected instead.
_MAX_CUT_BYTES = 8 << 20

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)
_OPEN = frozenset(b"[{")
_QUOTE = ord('"')
_SURROGATE = re.compile("[\ud800-\udfff]")
_DECODER = json.JSONDecoder()
# The decoder's scanner (set in its __init__, which typeshed does not declare).
_SCAN: Callable[[str, int], tuple[Any, int]] = _DECODER.scan_once  # type: ignore[attr-defined]
#: JSON's whitespace (what may follow the value on its line).
_JSON_SPACE = " \t\n\r"


def scrub(text: str) -> str:
    """``text`` with every lone UTF-16 surrogate replaced by U+FFFD (it cannot be encoded)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return _SURROGATE.sub("\ufffd", text)
    return text


def bounded(value: Any, depth: int = MAX_DEPTH) -> Any:
    """A copy of a JSON value with containers deeper than ``depth`` cut and text scrubbed.

    Recursion stops at ``depth``, so this is safe on values of any depth."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        if depth <= 0:
            return CUT_NOTE
        return {
            scrub(key) if isinstance(key, str) else key: bounded(item, depth - 1)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        if depth <= 0:
            return CUT_NOTE
        return [bounded(item, depth - 1) for item in value]
    return value


def _cut_text(line: bytes, depth: int) -> bytes:
    """``line`` with every container deeper than ``depth`` replaced by :data:`CUT_NOTE`,
    on the text (for JSON too deep for ``json.loads`` to parse at all)."""
    note = json.dumps(CUT_NOTE).encode()
    out: list[bytes] = []
    level = 0
    kept = 0  # end of the text copied so far
    start = -1  # where the container being cut opened
    for match in _TOKEN.finditer(line):
        first = line[match.start()]
        if first == _QUOTE:
            continue
        if first in _OPEN:
            level += 1
            if level == depth + 1:
                start = match.start()
            continue
        level -= 1
        if level < 0:
            raise ValueError("unbalanced brackets")
        if level == depth:
            out += [line[kept:start], note]
            kept = match.end()
    if level:
        raise ValueError("unbalanced brackets")
    out.append(line[kept:])
    return b"".join(out)


def _object(text: str) -> Any:
    """``json.loads(text)`` for a ``text`` that starts with ``{``, with the same errors."""
    try:
        value, end = _SCAN(text, 0)
    except StopIteration as exc:  # as json.JSONDecoder.raw_decode reports it
        raise json.JSONDecodeError("Expecting value", text, exc.value) from None
    if end != len(text):
        rest = text[end:].lstrip(_JSON_SPACE)
        if rest:
            raise json.JSONDecodeError("Extra data", text, len(text) - len(rest))
    return value


def decode_line(line: bytes) -> Any:
    """The JSON value of one received line, bounded (see the module's docstring).

    Raises ``ValueError`` when the line is not JSON (whatever the reason: bad syntax, bad
    UTF-8, nesting too deep to parse and too long to cut)."""
    deep = line.count(b"[") + line.count(b"{") > MAX_DEPTH
    try:
        if line[:1] == b"{" and line[1:2] != b"\x00":
            # What json.loads does with bytes it detects as UTF-8 (every object line is),
            # without the detection and the leading-whitespace match (there is none): each
            # costs about as much as parsing a small message.
            value = _object(line.decode("utf-8", "surrogatepass"))
        else:
            value = json.loads(line)
    except RecursionError:
        if len(line) > _MAX_CUT_BYTES:
            raise ValueError(f"JSON nested too deep in a line of {len(line)} bytes") from None
        value = json.loads(_cut_text(line, MAX_DEPTH))
    if deep or b"\\ud" in line or b"\\uD" in line or b"\xed" in line:
        # Only then can it be too deep or hold a surrogate (escaped, or passed through by
        # json's 'surrogatepass' decoding of UTF-8); ordinary lines skip the walk.
        return bounded(value)
    return value


def encode_message(message: Any) -> bytes:
    """One JSON line (UTF-8, with its newline) for any message, even one built from
    values that did not come through :func:`decode_line`."""
    try:
        text = json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        return text.encode() + b"\n"
    except (UnicodeEncodeError, RecursionError):
        text = json.dumps(bounded(message), separators=(",", ":"), ensure_ascii=False)
        return text.encode() + b"\n"


def abridged(value: Any, budget: int) -> Any:
    """A copy of a JSON value in about ``budget`` characters: strings, lists and objects
    are cut where the budget runs out, each cut saying how much it left out.

    For keepers of many messages (the notebook's message log), so one huge message (a
    32 MB ``terminal/output``) costs them ``budget``, not its size."""
    remaining = budget

    def cut_text(text: str) -> str:
        nonlocal remaining
        keep = max(0, min(len(text), remaining))
        remaining -= keep
        if keep == len(text):
            return text
        return f"{text[:keep]}… ({len(text) - keep} characters cut)"

    def walk(item: Any, depth: int) -> Any:
        nonlocal remaining
        if isinstance(item, str):
            return cut_text(item)
        if isinstance(item, (dict, list, tuple)) and depth <= 0:
            return CUT_NOTE
        if isinstance(item, dict):
            kept: dict[Any, Any] = {}
            for key, member in item.items():
                if remaining <= 0:
                    kept["…"] = f"{len(item) - len(kept)} more members cut"
                    break
                remaining -= len(key) if isinstance(key, str) else 8
                kept[key] = walk(member, depth - 1)
            return kept
        if isinstance(item, (list, tuple)):
            out: list[Any] = []
            for member in item:
                if remaining <= 0:
                    out.append(f"… {len(item) - len(out)} more items cut")
                    break
                out.append(walk(member, depth - 1))
            return out
        remaining -= 8
        return item

    return walk(value, MAX_DEPTH)
