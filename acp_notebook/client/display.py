"""What each piece of content shows, decided once for every renderer.

The protocol's content types — content blocks (text, image, audio, resource link,
embedded resource), tool call content (content, diff, terminal) and anything unknown —
are turned here into small display facts: a label, a size, whether an image or a sound
may be inlined, the lines shown and how many were cut, a language, a note. The Markdown
and text renderer (``render.py``) and the HTML views (``ui/``) only format those facts,
so a live cell and its saved transcript always agree, and a limit, a MIME check or a
size is computed in one place.

Everything here is agent-controlled data made safe to show: an inline ``data:`` URI only
for a MIME type of the right kind and real base64 under the size limit, a link target
only for a scheme a browser may follow.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from ..protocol import models as m
from .formatting import capped, human_bytes, lang_of, portable, short_path, to_json
from .rawinput import DERIVED_NOTE, FileDiff
from .toolcall import CANCELLED, ToolCallState

if TYPE_CHECKING:
    from .terminals import TerminalSnapshot

#: ``Session.terminal_view``: a terminal's snapshot, also after `terminal/release`.
TerminalLookup = Callable[[str], "TerminalSnapshot | None"]

# ---------------------------------------------------------------------------- limits

#: How much of each kind of content is shown, in the live cell and the saved transcript.
#: Lines of one diff.
MAX_DIFF_LINES = 400
#: Characters of one diff (one minified line can be megabytes).
MAX_DIFF_CHARS = 200_000
#: Lines of each side of a change that difflib compares (it is quadratic at worst: one
#: 400 KB rewrite cost minutes of the agent loop). Unchanged lines at both ends are
#: taken off first, so an edit anywhere in a large file is still diffed exactly.
MAX_DIFF_INPUT_LINES = 1000
#: The last characters of a terminal's output.
MAX_TERMINAL_CHARS = 20_000
#: Decoded bytes of an image or a sound inlined as a ``data:`` URI.
MAX_INLINE_BYTES = 1 << 20
#: Lines of an embedded text resource.
MAX_RESOURCE_LINES = 60
#: Characters of the text content of a tool call (a whole file read back).
MAX_TEXT_CHARS = 50_000
#: Characters of raw JSON (a tool call's raw input and output, an unknown update).
MAX_RAW_CHARS = 50_000

# ---------------------------------------------------------------------------- icons

KIND_ICONS = {
    "read": "📖",
    "edit": "✏️",
    "delete": "🗑️",
    "move": "📦",
    "search": "🔎",
    "execute": "▶️",
    "think": "💭",
    "fetch": "🌐",
    "switch_mode": "🔀",
    "other": "🔧",
}
STATUS_ICONS = {
    "pending": "⏳",
    "in_progress": "⏳",
    "completed": "✅",
    "failed": "❌",
    CANCELLED: "⏹️",
}


def rejected_by(call: ToolCallState) -> str | None:
    """Who rejected the call ("you", "rule `deny execute rm *`", "policy deny"), when it
    failed because its permission was rejected, or ended after the client rejected what it
    asked (a cell edit rejected in the cell): that is no failure of the tool."""
    if call.client_rejection is not None and call.status in ("failed", "completed"):
        return call.client_rejection  # the client's own decision, whatever the agent says
    if call.status != "failed":
        return None
    for request in reversed(call.permissions):
        if request.state == "selected" and request.chosen is not None:
            if request.chosen.allows:
                return None
            return "you" if request.decided_by == "user" else request.decided_by
    return None


def status_text(call: ToolCallState) -> str:
    """The call's status as shown: "✅ completed", "⏹️ cancelled", or "🚫 rejected by you"
    (by a rule, by the policy) for a call whose permission was rejected."""
    who = rejected_by(call)
    if who is not None:
        return f"🚫 rejected by {who}"
    if call.sandbox_refused:
        return f"{STATUS_ICONS['failed']} failed: a write was refused, most likely by the sandbox"
    return f"{STATUS_ICONS.get(call.status, '')} {call.status.replace('_', ' ')}".strip()


def kind_icon(kind: str) -> str:
    return KIND_ICONS.get(kind, KIND_ICONS["other"])


def location_label(location: m.ToolCallLocation, cwd: str | None) -> str:
    """ "src/a.py:12": the path relative to the session, and the line when the agent gave one."""
    return short_path(location.path, cwd) + (f":{location.line}" if location.line else "")


# ---------------------------------------------------------------------------- checks

#: Content blocks shown as media: their kind is their wire ``type`` ("image", "audio"),
#: and only a MIME type of that kind (``image/…`` for an image) is ever inlined.
MEDIA_BLOCKS = (m.ImageContentBlock, m.AudioContentBlock)
MediaKind = Literal["image", "audio"]

_BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
_MEDIA_TYPE = re.compile(r"(?P<kind>[\w.+-]+)/[\w.+-]+")
_SAFE_SCHEMES = re.compile(r"^(https?|mailto|ftp|file):", re.IGNORECASE)
_ANY_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: What a browser removes from anywhere in a URL before parsing it.
_URL_IGNORED = re.compile(r"[\t\n\r]")


def base64_size(data: str) -> int:
    """Bytes encoded by a base64 string (padding taken into account)."""
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))


def inline_data_uri(kind: str, mime_type: str, data: str) -> str | None:
    """A ``data:`` URI for ``data`` when it may go into an attribute or a Markdown image:
    a MIME type of ``kind`` (``image/png`` for an image, nothing else), base64 and
    nothing else, at most :data:`MAX_INLINE_BYTES`. Anything else could break out of
    the attribute or the link, or bloat the notebook."""
    media = _MEDIA_TYPE.fullmatch(mime_type)
    if media is None or media.group("kind").lower() != kind or base64_size(data) > MAX_INLINE_BYTES:
        return None
    data = "".join(data.split())  # base64 wrapped in lines (MIME style) is still base64
    if len(data) % 4 or not _BASE64.fullmatch(data):
        return None
    return f"data:{mime_type};base64,{data}"


def safe_href(uri: str) -> str | None:
    """``uri`` if a browser may follow it (no ``javascript:`` and the like), else None.

    Checked as the browser parses it (URL standard): leading and trailing C0 controls and
    spaces stripped, tabs and newlines removed anywhere, so ``java\nscript:`` is seen as
    the ``javascript:`` it becomes; the returned form is the one checked."""
    uri = _URL_IGNORED.sub("", uri).strip("".join(map(chr, range(0x21))))
    if _SAFE_SCHEMES.match(uri) or not _ANY_SCHEME.match(uri):
        return uri
    return None


# ---------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class TextShown:
    """Text (Markdown), cut to :data:`MAX_TEXT_CHARS` with a note."""

    text: str


@dataclass(frozen=True)
class _Payload:
    """Bytes the agent sent (or named): their MIME type and decoded size."""

    mime_type: str
    size: int

    @property
    def type_and_size(self) -> str:
        """ "image/png, 2.0 KB"."""
        return f"{self.mime_type}, {human_bytes(self.size)}"


@dataclass(frozen=True)
class MediaShown(_Payload):
    """An image or a sound: its type and size, and the ``data:`` URI when it may be inlined."""

    kind: MediaKind
    data_uri: str | None
    #: Where the agent says it lives (images may name one).
    uri: str | None = None

    @property
    def label(self) -> str:
        """ "image image/png, 2.0 KB"."""
        return f"{self.kind} {self.type_and_size}"


@dataclass(frozen=True)
class LinkShown:
    """A resource link."""

    label: str
    uri: str
    #: The target when a browser may follow it (None: shown as text only).
    href: str | None
    #: "text/csv, 2.0 KB" ("" when the agent said neither).
    details: str
    description: str | None = None


@dataclass(frozen=True)
class FileShown(_Payload):
    """An embedded resource: a text file (its first lines) or a binary one (its size)."""

    #: The file, relative to the session's directory when inside it.
    name: str
    #: The lines shown; None for a binary resource.
    text: str | None = None
    #: Lines of the text not shown.
    more_lines: int = 0
    language: str = ""


@dataclass(frozen=True)
class RawShown:
    """Something this client does not know, kept and shown as raw JSON (never dropped)."""

    #: What it is: "content", "tool call content", "update"; or a whole phrase when ``kind``
    #: is None ("Embedded resource").
    what: str
    #: Its ``type`` as the agent sent it.
    kind: str | None
    raw: Any

    def summary(self, code: Callable[[str], str] = lambda text: f"`{text}`") -> str:
        """ "Unknown content `hologram` (shown raw)", with ``code`` formatting the kind."""
        if self.kind is None:
            return f"{self.what} (shown raw)"
        return f"Unknown {self.what} {code(self.kind)} (shown raw)"


@dataclass(frozen=True)
class DiffShown:
    """One diff as shown: a unified diff (or the agent's patch), cut to the limits."""

    label: str
    text: str
    new_file: bool
    derived: bool
    content_only: bool
    #: The text is the agent's patch, with its own file headers.
    patch: bool

    @property
    def note(self) -> str | None:
        """Why the diff is not the agent's own (None when it is)."""
        if not self.derived:
            return None
        return DERIVED_NOTE + (" · new content only" if self.content_only else "")

    @property
    def stats(self) -> tuple[int, int]:
        """(added, removed) line counts, file header lines excluded."""
        added = removed = 0
        for line in self.text.splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed


@dataclass(frozen=True)
class TerminalShown:
    """What a terminal shows now: command, the end of its output, how it ended."""

    terminal_id: str
    #: False when the session does not know the terminal (never created, or forgotten).
    known: bool
    command: str = ""
    output: str = ""
    #: Earlier output is not shown (the terminal dropped it, or it is past the limit).
    dropped: bool = False
    exited: bool = False
    exit_code: int | None = None
    signal: str | None = None
    #: It failed saying a write was refused, under the sandbox (``TerminalSnapshot``).
    sandbox_refused: bool = False

    @property
    def status(self) -> str | None:
        """ "exit code 0", "killed by SIGTERM"; None while it runs."""
        if not self.exited:
            return None
        if self.signal:
            return f"killed by {self.signal}"
        if self.sandbox_refused:
            return (
                f"exit code {self.exit_code}: a write was refused, most likely by the sandbox, "
                "which allows writes only to the session's folders and temp"
            )
        return f"exit code {self.exit_code}"


Shown = TextShown | MediaShown | LinkShown | FileShown | RawShown
ToolContentShown = Shown | DiffShown | TerminalShown


def raw_json(value: Any, cwd: str | None = None) -> str:
    """Raw JSON as shown: pretty, cut to :data:`MAX_RAW_CHARS`; with ``cwd``, the
    session's directory is left out of paths (saved transcripts stay portable)."""
    return capped(to_json(portable(value, cwd)), MAX_RAW_CHARS)


def unknown(what: str, value: Any) -> RawShown:
    """A value this client does not know (its wire form when it has one), as raw JSON."""
    raw = value.to_wire() if hasattr(value, "to_wire") else {"value": repr(value)}
    kind = raw.get("type", "?") if isinstance(raw, dict) else "?"
    return RawShown(what, str(kind), raw)


def block_shown(block: m.ContentBlock, cwd: str | None) -> Shown:
    """What a content block shows: the one place that reads content block types."""
    if isinstance(block, m.TextContentBlock):
        return TextShown(capped(block.text, MAX_TEXT_CHARS))
    if isinstance(block, MEDIA_BLOCKS):
        return MediaShown(
            mime_type=block.mime_type,
            size=base64_size(block.data),
            kind=block.type,
            data_uri=inline_data_uri(block.type, block.mime_type, block.data),
            uri=block.uri if isinstance(block, m.ImageContentBlock) else None,
        )
    if isinstance(block, m.ResourceLinkContentBlock):
        details = ", ".join(
            x
            for x in (block.mime_type, human_bytes(block.size) if block.size is not None else None)
            if x
        )
        label = block.title or block.name or short_path(block.uri.removeprefix("file://"), cwd)
        return LinkShown(label, block.uri, safe_href(block.uri), details, block.description)
    if isinstance(block, m.EmbeddedResourceContentBlock):
        return resource_shown(block.resource, cwd)
    return unknown("content", block)


def resource_shown(resource: Any, cwd: str | None) -> FileShown | RawShown:
    """An embedded resource: text (its first lines) or a blob (its size)."""
    if isinstance(resource, m.TextResourceContents):
        lines = resource.text.splitlines(keepends=True)
        return FileShown(
            mime_type=resource.mime_type or "text",
            size=len(resource.text.encode()),
            name=short_path(resource.uri.removeprefix("file://"), cwd),
            text="".join(lines[:MAX_RESOURCE_LINES]),
            more_lines=max(0, len(lines) - MAX_RESOURCE_LINES),
            language=lang_of(resource.uri),
        )
    if isinstance(resource, m.BlobResourceContents):
        return FileShown(
            mime_type=resource.mime_type or "binary",
            size=base64_size(resource.blob),
            name=short_path(resource.uri.removeprefix("file://"), cwd),
        )
    raw = resource.to_wire() if hasattr(resource, "to_wire") else {}
    return RawShown("Embedded resource", None, raw)


def tool_content_shown(
    item: m.ToolCallContent, cwd: str | None, terminals: TerminalLookup | None = None
) -> ToolContentShown:
    """What one item of a tool call's content shows: the one place that reads tool call
    content types. A terminal is read through ``terminals`` (``Session.terminal_view``)."""
    if isinstance(item, m.ContentToolCallContent):
        return block_shown(item.content, cwd)
    if isinstance(item, m.DiffToolCallContent):
        return diff_shown(FileDiff.of(item), cwd)
    if isinstance(item, m.TerminalToolCallContent):
        snapshot = terminals(item.terminal_id) if terminals is not None else None
        return terminal_shown(item.terminal_id, snapshot)
    return unknown("tool call content", item)


# ---------------------------------------------------------------------------- diffs


def _cut_lines(lines: list[str]) -> str:
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines\n"]
    text = "".join(lines)
    if len(text) > MAX_DIFF_CHARS:
        cut = text[:MAX_DIFF_CHARS]
        text = (
            cut[: cut.rfind("\n") + 1]
            + f"… {len(text) - MAX_DIFF_CHARS:,} more characters of diff\n"
        )
    return text


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def _changed_middle(old: list[str], new: list[str]) -> tuple[int, list[str], list[str]]:
    """Where the change starts (with 3 lines of context) and each side's changed lines
    (with their context): the unchanged ends need no diffing."""
    limit = min(len(old), len(new))
    prefix = 0
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    start = max(0, prefix - 3)
    end = max(0, suffix - 3)
    return start, old[start : len(old) - end], new[start : len(new) - end]


def _shifted(line: str, offset: int) -> str:
    """A hunk header of a diff of lines from ``offset`` on, numbered in the whole file."""
    match = _HUNK.match(line)
    if match is None or not offset:
        return line
    old_start, old_len, new_start, new_len = match.groups()
    return (
        f"@@ -{int(old_start) + offset}{old_len or ''} +{int(new_start) + offset}{new_len or ''} @@"
        + line[match.end() :]
    )


def unified_diff(diff: FileDiff, cwd: str | None) -> str:
    """A readable unified diff of old and new text, cut to the limits."""
    name = short_path(diff.path, cwd)
    start, old, new = _changed_middle(
        (diff.old_text or "").splitlines(keepends=True),
        (diff.new_text or "").splitlines(keepends=True),
    )
    note = ""
    if max(len(old), len(new)) > MAX_DIFF_INPUT_LINES:
        note = (
            f"… the change spans {len(old):,} old and {len(new):,} new lines "
            f"({human_bytes(len(''.join(old)))} → {human_bytes(len(''.join(new)))}); "
            f"the diff compares their first {MAX_DIFF_INPUT_LINES:,}\n"
        )
        old, new = old[:MAX_DIFF_INPUT_LINES], new[:MAX_DIFF_INPUT_LINES]
    lines = difflib.unified_diff(
        old,
        new,
        fromfile="/dev/null"
        if diff.old_text is None
        else f"a{name}"
        if name.startswith("/")
        else f"a/{name}",
        tofile=f"b{name}" if name.startswith("/") else f"b/{name}",
        n=3,
    )
    out = [
        _shifted(line, start) if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
        for line in lines
    ]
    text = _cut_lines(out)
    return text + note if text else f"(no changes to {name})\n"


def diff_shown(diff: FileDiff, cwd: str | None) -> DiffShown:
    """A diff of a tool call as shown: the agent's own, or one derived from rawInput."""
    if diff.patch is not None:
        text = _cut_lines(diff.patch.splitlines(keepends=True))
    else:
        text = unified_diff(diff, cwd)
    return DiffShown(
        short_path(diff.label, cwd),
        text,
        diff.new_file,
        diff.derived,
        diff.content_only,
        diff.patch is not None,
    )


# ---------------------------------------------------------------------------- terminals


def terminal_shown(terminal_id: str, snapshot: TerminalSnapshot | None) -> TerminalShown:
    """What a terminal shows: the last :data:`MAX_TERMINAL_CHARS` of its output."""
    if snapshot is None:
        return TerminalShown(terminal_id, known=False)
    output = snapshot.output[-MAX_TERMINAL_CHARS:]
    return TerminalShown(
        terminal_id,
        known=True,
        command=snapshot.command,
        output=output,
        dropped=snapshot.truncated or len(output) < len(snapshot.output),
        exited=snapshot.exited,
        exit_code=snapshot.exit_code,
        signal=snapshot.signal,
        sandbox_refused=snapshot.sandbox_refused,
    )
