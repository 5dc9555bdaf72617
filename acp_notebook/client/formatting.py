"""Small text helpers every renderer shares: paths relative to the session, sizes, code
fences, languages, JSON, and the one way any agent- or file-controlled string enters
Markdown.

Markdown escaping: such a string reaches Markdown only through :func:`md_escape` (text),
:func:`code_span` (inline code), :func:`fence` (a block), :func:`md_cell` (a table cell),
:func:`one_line` (before an inline construct) or :func:`md_url` (a link target); text meant
as Markdown (an agent's reply, a sentence quoting one) through
:func:`~acp_notebook.client.agent_markdown.agent_markdown`. JupyterLab renders an output's Markdown as trusted HTML,
so a string that slipped past them (a backtick closing a code span early, a pipe or a
newline ending a table cell) would put its own ``<img onerror=…>`` on the page.

Deterministic by design (no clock, no machine paths where ``cwd`` can stand in), because
saved notebooks are compared with re-run ones.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any

__all__ = [
    "capped",
    "code_span",
    "fence",
    "human_bytes",
    "lang_of",
    "md_cell",
    "md_escape",
    "md_url",
    "one_line",
    "portable",
    "short_path",
    "to_json",
]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]()<>!#|~&])")
# Every line break CommonMark or a table row knows, and the ones str.splitlines() does.
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]")
_URL_UNSAFE = {" ": "%20", "(": "%28", ")": "%29", "<": "%3C", ">": "%3E", "\n": "%0A"}


def short_path(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when it lies inside it."""
    if cwd and os.path.isabs(path):
        try:
            if os.path.commonpath([os.path.abspath(path), os.path.abspath(cwd)]) == os.path.abspath(
                cwd
            ):
                return os.path.relpath(path, cwd)
        except ValueError:
            pass
    return path


def human_bytes(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    if size < 1 << 20:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1 << 20):.1f} MB"


def capped(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n\n… {len(text) - limit:,} more characters not shown\n"


def first_line(text: str, limit: int = 60) -> str:
    """The first non-empty line of ``text``, whitespace collapsed, cut at ``limit``
    characters (a heading made from a prompt)."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"
    return ""


def fence(text: str, lang: str = "") -> str:
    """A fenced code block that survives backticks inside ``text``."""
    ticks = "```"
    while ticks in text:
        ticks += "`"
    body = text if text.endswith("\n") else text + "\n"
    return f"{ticks}{lang}\n{body}{ticks}"


def code_span(text: str) -> str:
    """Inline code that survives backticks inside ``text`` (it cannot end the span early)
    and line breaks (a blank line would end it: they become spaces)."""
    text = _LINE_BREAKS.sub(" ", text)
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_escape(text: str) -> str:
    """Agent text as Markdown text: no character of it can start a link, an image,
    emphasis, an entity or raw HTML (each is backslash-escaped)."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def one_line(text: str) -> str:
    """``text`` with its line breaks as spaces: for inline places (a title in bold, a
    list item), where a blank line or a fence in it would end the construct."""
    return _LINE_BREAKS.sub(" ", text)


def md_cell(text: str, *, code: bool = False) -> str:
    """``text`` as one Markdown table cell: on one line, escaped (or as a code span with
    ``code``), its pipes escaped so no column ends inside it."""
    if code:
        return code_span(text).replace("|", "\\|") if text else ""
    return md_escape(_LINE_BREAKS.sub(" ", text))


def md_url(url: str) -> str:
    """A URL as a Markdown link target: spaces, parentheses and angle brackets encoded,
    so the target cannot end early and start another link."""
    return "".join(_URL_UNSAFE.get(ch, ch) for ch in url)


def to_json(value: Any) -> str:
    """Pretty JSON as transcripts show it (sorted keys, real Unicode)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


#: A field's value shown on one line, at most this many characters.
FIELD_CHARS = 100
#: Fields shown of one value (the rest are counted).
MAX_FIELDS = 40


def fields_text(value: Any) -> str:
    """A JSON value as a person reads it on a terminal: an object as ``key: value`` lines
    (a string as it is, anything else as compact JSON), each on one line and cut at
    :data:`FIELD_CHARS` with "…"; anything that is not an object as one such value."""
    if not isinstance(value, dict):
        return _field_value(value)
    lines = [f"{key}: {_field_value(item)}" for key, item in list(value.items())[:MAX_FIELDS]]
    if len(value) > MAX_FIELDS:
        lines.append(f"… {len(value) - MAX_FIELDS:,} more fields")
    return "\n".join(lines)


def _field_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    lines = text.splitlines() or [""]
    shown = lines[0]
    if len(lines) > 1:
        shown += f" … (+{len(lines) - 1} line{'s' * (len(lines) > 2)})"
    return shown if len(shown) <= FIELD_CHARS else shown[: FIELD_CHARS - 1] + "…"


def portable(value: Any, cwd: str | None, placeholder: str = ".") -> Any:
    """``value`` with the session's directory replaced by ``placeholder`` in every string,
    so raw JSON shown in a transcript is the same on every machine."""
    if not cwd:
        return value
    if isinstance(value, str):
        if value == cwd:
            return placeholder
        value = value.replace(cwd + os.sep, "" if placeholder == "." else placeholder + os.sep)
        return value.replace(cwd, placeholder)
    if isinstance(value, list):
        return [portable(v, cwd, placeholder) for v in value]
    if isinstance(value, dict):
        return {k: portable(v, cwd, placeholder) for k, v in value.items()}
    return value


_LANGS = {
    ".py": "python",
    ".js": "javascript",
    ".ts": "typescript",
    ".json": "json",
    ".md": "markdown",
    ".csv": "csv",
    ".sh": "bash",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".html": "html",
    ".css": "css",
    ".rs": "rust",
}


def lang_of(uri: str) -> str:
    """The Pygments/Markdown language name for a file path or URI, or ""."""
    return _LANGS.get(os.path.splitext(uri)[1].lower(), "")
