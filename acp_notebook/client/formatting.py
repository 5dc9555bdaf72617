"""Small text helpers every renderer shares: paths relative to the session, sizes, code
fences, languages, JSON.

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
    "md_escape",
    "md_url",
    "portable",
    "short_path",
    "to_json",
]

_MD_SPECIAL = re.compile(r"([\\`*_\[\]()<>!#|~])")
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
    """Inline code that survives backticks inside ``text`` (it cannot end the span early)."""
    ticks = "`"
    while ticks in text:
        ticks += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def md_escape(text: str) -> str:
    """Agent text that goes into Markdown syntax (a link's label): no character of it can
    start a link, an image or emphasis."""
    return _MD_SPECIAL.sub(r"\\\1", text)


def md_url(url: str) -> str:
    """A URL as a Markdown link target: spaces, parentheses and angle brackets encoded,
    so the target cannot end early and start another link."""
    return "".join(_URL_UNSAFE.get(ch, ch) for ch in url)


def to_json(value: Any) -> str:
    """Pretty JSON as transcripts show it (sorted keys, real Unicode)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)


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
