"""Text helpers of the demo agent, and the edit it proposes for files that are not Python.

Nothing here talks to a client or touches the disk; every function is deterministic, so the
same input always gives the same proposal (transcripts of the demo agent can be compared).

The edit (:func:`append_marker`) is one clearly labelled line in the file's own comment
syntax (or a plain line for prose); formats where a new line would change the data (JSON,
notebooks, CSV, ...) are refused. Python files get :mod:`.refactors` instead.
"""

from __future__ import annotations

import difflib
import posixpath
import re

__all__ = [
    "KNOWN_EXTENSIONS",
    "MARKER_TEXT",
    "append_marker",
    "count_lines",
    "fence",
    "language_for",
    "shorten",
    "split_first",
    "unified_diff",
]

#: The text of the labelled line :func:`append_marker` adds.
MARKER_TEXT = "edited by the acp_notebook demo agent"

_LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript",
    ".ts": "typescript", ".tsx": "tsx", ".jsx": "jsx", ".json": "json", ".md": "markdown",
    ".sh": "bash", ".bash": "bash", ".toml": "toml", ".yaml": "yaml", ".yml": "yaml",
    ".html": "html", ".css": "css", ".rs": "rust", ".go": "go", ".c": "c", ".h": "c",
    ".cpp": "cpp", ".java": "java", ".rb": "ruby", ".sql": "sql", ".r": "r", ".ipynb": "json",
}  # fmt: skip

_HASH = {
    ".py", ".pyi", ".sh", ".bash", ".zsh", ".rb", ".pl", ".r", ".yaml", ".yml", ".toml",
    ".cfg", ".conf", ".mk", ".ps1", ".jl", ".ex", ".exs", ".nim", ".tcl", ".dockerfile",
}  # fmt: skip
_SLASHES = {
    ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".c", ".h", ".cpp", ".hpp", ".cc", ".java",
    ".go", ".rs", ".swift", ".kt", ".kts", ".scala", ".cs", ".dart", ".php", ".groovy",
    ".proto", ".zig", ".scss", ".less",
}  # fmt: skip
_DASHES = {".sql", ".lua", ".hs", ".elm"}
_PERCENT = {".tex", ".m", ".erl"}
_CSS = {".css"}
_MARKUP = {".html", ".htm", ".xml", ".svg", ".vue", ".xhtml"}
_HASH_NAMES = {"makefile", "dockerfile", "gemfile", "rakefile", ".gitignore", ".env"}
#: Formats where an extra line changes the data (or breaks it): the demo refuses them.
REFUSED = {
    ".json": "JSON has no comments, so any extra line would break it",
    ".ipynb": "a notebook is JSON; an extra line would break it (edit the cells instead)",
    ".jsonl": "every line of JSON Lines is a record; an extra line would add a broken record",
    ".csv": "every line of a CSV file is a row of data; an extra line would add a row",
    ".tsv": "every line of a TSV file is a row of data; an extra line would add a row",
    ".lock": "lock files are generated; an extra line would break them",
}
#: Extensions that make a word of a prompt a file name (``refactor utils.py``).
KNOWN_EXTENSIONS = {".py", ".pyi", ".txt", ".md", ".rst", ".ini", ".log"}.union(
    _LANGUAGES, _HASH, _SLASHES, _DASHES, _MARKUP, REFUSED
)


def language_for(path: str) -> str:
    """The Markdown fence language of a file name ("" when unknown)."""
    return _LANGUAGES.get(posixpath.splitext(path.lower())[1], "")


def fence(text: str, language: str = "") -> str:
    """``text`` in a fenced Markdown code block whose fence cannot clash with the text."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=2)
    marks = "`" * (longest + 1)
    body = text if text.endswith("\n") or not text else text + "\n"
    return f"{marks}{language}\n{body}{marks}"


def count_lines(text: str) -> int:
    """Lines in ``text`` as ``fs/read_text_file`` counts them: a last line without a
    newline still counts."""
    return text.count("\n") + (1 if text and not text.endswith("\n") else 0)


def split_first(text: str) -> tuple[str, str]:
    """The first word of ``text`` (double or single quotes allow spaces) and the rest.

    ``/write "my file.txt" hello`` names ``my file.txt``; the rest keeps its inner
    spacing and newlines (only the separating whitespace is dropped).
    """
    text = text.lstrip()
    if text[:1] in ("'", '"'):
        end = text.find(text[0], 1)
        if end > 0:
            return text[1:end], text[end + 1 :].lstrip(" \t").removeprefix("\n")
    match = re.match(r"(\S*)(?:[ \t]+|\n|$)", text)
    assert match is not None  # the pattern matches every string
    return match.group(1), text[match.end() :]


def shorten(text: str, limit: int = 80) -> str:
    """``text`` on one line (whitespace collapsed), cut at ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of two texts (for showing a proposal inside a message)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def append_marker(path: str, text: str) -> str:
    """``text`` plus one labelled line in the comment syntax of ``path``'s type.

    Raises :class:`ValueError` (saying why) for formats where an extra line would change
    or break the data.
    """
    name = posixpath.basename(path.replace("\\", "/")).lower()
    ext = posixpath.splitext(name)[1]
    if ext in REFUSED:
        raise ValueError(REFUSED[ext])
    if ext in _HASH or name in _HASH_NAMES:
        line = f"# {MARKER_TEXT}"
    elif ext in _CSS:
        line = f"/* {MARKER_TEXT} */"
    elif ext in _SLASHES:
        line = f"// {MARKER_TEXT}"
    elif ext in _DASHES:
        line = f"-- {MARKER_TEXT}"
    elif ext in _PERCENT:
        line = f"% {MARKER_TEXT}"
    elif ext in _MARKUP:
        line = f"<!-- {MARKER_TEXT} -->"
    else:  # prose (.txt, .md, .rst, unknown): a visible sentence
        line = MARKER_TEXT[0].upper() + MARKER_TEXT[1:] + "."
    newline = "\r\n" if "\r\n" in text else "\n"
    if text and not text.endswith("\n"):
        text += newline
    return text + line + newline
