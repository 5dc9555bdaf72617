"""Pure text helpers of the demo agent: the mechanical edits it proposes, and generated content.

Nothing here talks to a client or touches the disk; every function is deterministic, so the
same input always gives the same proposal (transcripts of the demo agent can be compared).

* :func:`add_placeholders` — the "refactoring" of Python code: a placeholder docstring for
  every function without one, and ``Any`` type-hint placeholders for unannotated parameters
  and returns. Found with :mod:`ast`, applied as pure insertions, so every other byte of
  the text stays as it was. It is a mechanical demonstration, not an AI refactoring.
* :func:`append_marker` — the edit of any other text file: one clearly labelled line in
  the file's own comment syntax (or a plain line for prose); formats where a new line
  would change the data (JSON, notebooks, CSV, ...) are refused.
* :func:`demo_png`, :func:`long_markdown_pieces`, :func:`derive_title` — content of
  ``/image``, ``/long`` and of the session title; :func:`text_content`, Markdown as a tool
  call's content.
"""

from __future__ import annotations

import ast
import difflib
import io
import posixpath
import re
import struct
import tokenize
import zlib
from typing import Any, NamedTuple

from ...protocol import models as m

__all__ = [
    "KNOWN_EXTENSIONS",
    "MARKER_TEXT",
    "PlaceholderEdit",
    "add_placeholders",
    "append_marker",
    "count_lines",
    "demo_png",
    "derive_title",
    "fence",
    "language_for",
    "long_markdown_pieces",
    "shorten",
    "split_first",
    "text_content",
    "unified_diff",
]

#: The text of the labelled line :func:`append_marker` adds.
MARKER_TEXT = "edited by the acp_notebook demo agent"
#: The placeholder docstring; ``{name}`` is the function's name.
DOCSTRING = '"""TODO: describe {name}. (Placeholder added by the acp_notebook demo agent.)"""'

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


def derive_title(text: str, limit: int = 60) -> str:
    """A session title from a prompt: its first non-empty line, whitespace collapsed,
    cut at ``limit`` characters."""
    for line in text.splitlines():
        words = " ".join(line.split())
        if words:
            return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"
    return ""


def unified_diff(old: str, new: str, name: str) -> str:
    """A unified diff of two texts (for showing a proposal inside a message)."""
    lines = difflib.unified_diff(
        old.splitlines(keepends=True),
        new.splitlines(keepends=True),
        fromfile=f"a/{name}",
        tofile=f"b/{name}",
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


# --- the mechanical Python edit --------------------------------------------------------------


class PlaceholderEdit(NamedTuple):
    """What :func:`add_placeholders` did: the new text and one note per change (none: the
    text is unchanged)."""

    text: str
    changes: list[str]


def _lines(text: str) -> list[str]:
    # Split only at "\n" (keeping it): ast and tokenize number lines the same way, and a
    # "\r\n" file keeps its "\r" at the end of each line.
    # (str.splitlines would also split at form feeds and other separators.)
    return re.findall(r"[^\n]*\n|[^\n]+$", text)


def _char_col(line: str, byte_col: int) -> int:
    # ast columns are UTF-8 byte offsets; the edit works on characters.
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", "replace"))


def _signature_end(
    tokens: list[tokenize.TokenInfo], start: tuple[int, int]
) -> tuple[tuple[int, int], int]:
    """(position right after the ``)`` closing the parameters, line of the header's ``:``)
    for the ``def`` that starts at ``start``."""
    index = next(i for i, tok in enumerate(tokens) if tok.start >= start)
    depth = 0
    close: tuple[int, int] | None = None
    for tok in tokens[index:]:
        if tok.type != tokenize.OP:
            continue
        if tok.string in "([{":
            depth += 1
        elif tok.string in ")]}":
            depth -= 1
            if depth == 0 and close is None and tok.string == ")":
                close = tok.end
        elif tok.string == ":" and depth == 0 and close is not None:
            return close, tok.start[0]
    raise ValueError("no function header found")  # cannot happen for code ast accepted


def add_placeholders(source: str) -> PlaceholderEdit:
    """Add a placeholder docstring and ``Any`` type-hint placeholders to every function
    that lacks them; every other character of ``source`` stays as it was.

    ``self`` / ``cls`` (the first parameter of a method) are left alone, ``__init__``
    gets ``-> None``, one-line functions get no docstring (there is no line for it), and
    ``from typing import Any`` is added when a placeholder needs it and the module does
    not import ``Any`` yet. Raises :class:`SyntaxError` for text that is not Python.
    """
    tree = ast.parse(source)
    lines = _lines(source)
    newline = "\r\n" if "\r\n" in source else "\n"
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    inline: dict[int, list[tuple[int, str]]] = {}  # 0-based row -> [(char col, text)]
    before: dict[int, list[str]] = {}  # 0-based row -> lines inserted before it
    changes: list[str] = []
    uses_any = False

    parents: dict[ast.AST, ast.AST] = {}
    for parent in ast.walk(tree):
        for child in ast.iter_child_nodes(parent):
            parents[child] = parent

    functions = [
        node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    functions.sort(key=lambda node: (node.lineno, node.col_offset))
    for node in functions:
        notes: list[str] = []
        is_method = isinstance(parents.get(node), ast.ClassDef) and not any(
            isinstance(d, ast.Name) and d.id == "staticmethod" for d in node.decorator_list
        )
        args = node.args
        params = [*args.posonlyargs, *args.args]
        if is_method and params:
            params = params[1:]  # self / cls: their type is obvious
        params += [a for a in (args.vararg, *args.kwonlyargs, args.kwarg) if a is not None]
        unannotated = [a for a in params if a.annotation is None]
        for arg in unannotated:
            row = (arg.end_lineno or arg.lineno) - 1
            col = _char_col(lines[row], arg.end_col_offset or arg.col_offset)
            if lines[row][col : col + 1] == "=":
                # PEP 8: an annotated parameter's default gets spaces around "=".
                inline.setdefault(row, []).append((col, ": Any "))
                if lines[row][col + 1 : col + 2] not in (" ", "\n", "\r"):
                    inline.setdefault(row, []).append((col + 1, " "))
            else:
                inline.setdefault(row, []).append((col, ": Any"))
            uses_any = True
        if unannotated:
            notes.append("type hints for " + ", ".join(f"`{a.arg}`" for a in unannotated))
        start = (node.lineno, _char_col(lines[node.lineno - 1], node.col_offset))
        close, colon_row = _signature_end(tokens, start)
        if node.returns is None:
            returns = "None" if node.name == "__init__" else "Any"
            uses_any = uses_any or returns == "Any"
            inline.setdefault(close[0] - 1, []).append((close[1], f" -> {returns}"))
            notes.append("a return type")
        first = node.body[0]
        if ast.get_docstring(node) is None and first.lineno > colon_row:
            # Right below the header (above any comment), indented like the body.
            body_line = lines[first.lineno - 1]
            indent = body_line[: len(body_line) - len(body_line.lstrip(" \t"))]
            docstring = indent + DOCSTRING.format(name=node.name) + newline
            before.setdefault(colon_row, []).append(docstring)
            notes.insert(0, "a docstring")
        if notes:
            changes.append(f"`{node.name}` (line {node.lineno}): " + ", ".join(notes))

    if uses_any and not _imports_any(tree):
        row = _import_row(tree)
        if row == 0:
            row = _skip_header_comments(lines)
        elif row < len(lines) and not lines[row].strip():
            row += 1  # keep the blank line after the module docstring where it is
        line = "from typing import Any" + newline
        following = lines[row] if row < len(lines) else ""
        if following.strip() and not following.startswith(("import ", "from ")):
            line += newline  # keep the import apart from the code it precedes
        if row > 0 and not lines[row - 1].endswith("\n"):
            lines[row - 1] += newline
        before.setdefault(row, []).insert(0, line)
        changes.append("`from typing import Any` for the placeholders")

    out: list[str] = []
    for row, text in enumerate(lines):
        out.extend(before.get(row, []))
        for col, piece in sorted(inline.get(row, []), reverse=True):
            text = text[:col] + piece + text[col:]
        out.append(text)
    out.extend(before.get(len(lines), []))
    return PlaceholderEdit("".join(out), changes)


def _imports_any(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(
            (alias.asname or alias.name) == "Any" for alias in node.names
        ):
            return True
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "Any" for t in targets):
                return True
    return False


def _import_row(tree: ast.Module) -> int:
    """0-based row where a new import goes: after the module docstring and any
    ``from __future__`` imports (which must stay first)."""
    row = 0
    for index, node in enumerate(tree.body):
        is_docstring = (
            index == 0
            and isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        )
        is_future = isinstance(node, ast.ImportFrom) and node.module == "__future__"
        if not (is_docstring or is_future):
            break
        row = node.end_lineno or node.lineno
    return row


def _skip_header_comments(lines: list[str]) -> int:
    # A shebang and an encoding declaration only work on the first two lines.
    row = 0
    while row < min(2, len(lines)) and lines[row].startswith("#"):
        row += 1
    return row


# --- the labelled line for other files -------------------------------------------------------


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


# --- generated content ----------------------------------------------------------------------


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def text_content(text: str) -> dict[str, Any]:
    """A tool call ``content`` item holding Markdown text."""
    return m.ContentToolCallContent(content=m.TextContentBlock(text=text)).to_wire()


def demo_png(size: int = 64) -> bytes:
    """A small valid RGB PNG, the same bytes every time: four coloured quadrants with a
    diagonal gradient (built with zlib and struct, no imaging library)."""
    rows = []
    half = size // 2
    for y in range(size):
        row = bytearray([0])  # filter type 0: the raw pixels follow
        for x in range(size):
            shade = (x + y) * 255 // (2 * size - 2)
            if y < half:
                pixel = (40, 90 + shade // 2, 200) if x < half else (250, 180, shade // 3)
            else:
                pixel = (60 + shade // 2, 180, 90) if x < half else (230, 70, 70 + shade // 2)
            row += bytes(pixel)
        rows.append(bytes(row))
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + _png_chunk(b"IHDR", header)
        + _png_chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + _png_chunk(b"IEND", b"")
    )


def long_markdown_pieces(count: int) -> list[str]:
    """``count`` pieces of Markdown that concatenate into one long document (headings,
    paragraphs, lists, code blocks), about 40 bytes a piece; one piece per streamed chunk."""
    pieces: list[str] = []
    section = 0
    while len(pieces) < count:
        section += 1
        pieces.append(f"\n## Section {section}\n\n")
        pieces.append(f"This is section {section} of a long streamed reply, sent as ")
        pieces.append("many small `agent_message_chunk` updates in a row.\n\n")
        for item in range(1, 6):
            pieces.append(f"- Item {item} of section {section}: one chunk per list item.\n")
        pieces.append("\n```python\n")
        pieces.append(f"def section_{section}() -> int:\n")
        pieces.append(f"    return {section} * {section}  # code fences survive streaming\n")
        pieces.append("```\n")
        pieces.append(f"> Quote {section}: a client should render this while it streams.\n")
    del pieces[count:]
    if pieces and not pieces[-1].endswith("\n"):
        pieces[-1] += "\n"
    # A fence left open by the cut would swallow whatever the client shows next.
    if sum(piece.count("```") for piece in pieces) % 2:
        pieces[-1] += "```\n"
    return pieces
