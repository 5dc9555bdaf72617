"""The agent's own Markdown, made safe to display as Markdown.

The transcript's Markdown is shown by JupyterLab as a trusted output (its HTML is not
sanitised) and saved into the notebook, and agent text is Markdown written by the agent.
So raw HTML in it (``<img onerror=…>``, ``</details><script>``, which would also close the
collapsed section around a thought) and links to ``javascript:`` must not survive as such:
outside code (fenced blocks and code spans, shown verbatim anyway) a ``<`` that would open a
tag is backslash-escaped (CommonMark shows it as a plain ``<``), and a link whose target
:func:`safe_href` refuses loses its link syntax. Everything else (emphasis, lists, code,
tables, safe links) renders as the agent wrote it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .display import safe_href

__all__ = ["KeepEnds", "agent_markdown"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
# A backtick run after a backslash opens no span (CommonMark reads it as a literal backtick).
_CODE_SPAN = re.compile(r"(?<!\\)(`+)(.*?[^`])\1(?!`)|`+", re.S)
#: ``<`` opening a tag, a comment, a declaration or a processing instruction; not a safe
#: autolink (``<https://…>``).
_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])(?!(?:https?|mailto):[^\s<>]*>)")
_INLINE_LINK = re.compile(r"\]\(\s*<?([^)\s>]*)")
_REFERENCE = re.compile(r"^( {0,3})\[([^\]]+)\]:\s*<?(\S*?)>?(?:\s|$)")


def _link(match: re.Match[str]) -> str:
    return match.group(0) if safe_href(match.group(1)) is not None else "]\\(" + match.group(0)[2:]


def _prose(text: str) -> str:
    """Text outside code: tags escaped, unsafe links unlinked."""
    return _INLINE_LINK.sub(_link, _TAG_OPEN.sub(r"\\<", text))


def _line(line: str) -> str:
    reference = _REFERENCE.match(line)
    if reference is not None and safe_href(reference.group(3)) is None:
        line = f"{reference.group(1)}\\[{line[len(reference.group(1)) + 1 :]}"
    out: list[str] = []
    kept = 0
    for span in _CODE_SPAN.finditer(line):
        if span.group(2) is None or "|" in span.group(2):
            # A lone run of backticks is not code; nor is a span with a pipe, which a table
            # row (GFM splits cells before it reads code) may cut into prose.
            continue
        out += [_prose(line[kept : span.start()]), span.group(0)]
        kept = span.end()
    out.append(_prose(line[kept:]))
    return "".join(out)


def _fence_after(line: str, fence: str | None) -> str | None:
    """The code fence open after ``line`` (its backticks or tildes), given the one open
    before it: a fence closes with a run of the same character at least as long."""
    opener = _FENCE.match(line)
    if fence is None:
        return opener.group(1) if opener is not None else None
    if opener is not None and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence):
        return None
    return fence


def agent_markdown(text: str) -> str:
    """``text`` (Markdown from the agent) with no raw HTML and no unsafe link."""
    if not any(mark in text for mark in ("<", "](", "]:", "```", "~~~")):
        return text
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        inside = fence is not None
        fence = _fence_after(line, fence)
        out.append(line if inside or fence is not None else _line(line))
    if fence is not None:
        # A fence left open would swallow what follows this text (the transcript's own
        # blocks) and turn the next fence inside out.
        out.insert(len(out) - 1 if out[-1] == "" else len(out), fence)
    return "\n".join(out)


@dataclass(frozen=True)
class KeepEnds:
    """How much of one long text a saved transcript keeps: all of it up to ``limit``
    characters; past that its first ``head`` and last ``tail`` (cut at line ends)."""

    limit: int
    head: int
    tail: int

    def apply(self, text: str) -> str:
        """``text``, or its two ends around a line saying how much was left out. A code
        fence open where the start ends is closed before that line, and one open where
        the end begins is opened again after it: the line is not read as code, nor the
        end's code as prose."""
        if len(text) <= self.limit:
            return text
        head_end = text.rfind("\n", 0, self.head) + 1 or self.head
        tail_start = text.find("\n", len(text) - self.tail) + 1 or len(text) - self.tail
        head, tail = text[:head_end], text[tail_start:]
        closing, _ = _open_fence(head)
        _, reopening = _open_fence(text[:tail_start])
        left_out = text[head_end:tail_start]
        note = (
            f"*[… {len(left_out):,} characters ({left_out.count(chr(10)):,} lines) of this "
            f"text are left out of the saved transcript here: it keeps the first "
            f"{len(head):,} and the last {len(tail):,}.]*"
        )
        if not head.endswith("\n"):
            head += "\n"
        close = f"{closing}\n" if closing is not None else ""
        reopen = f"{reopening}\n" if reopening is not None else ""
        return f"{head}{close}\n{note}\n\n{reopen}{tail}"


def _open_fence(text: str) -> tuple[str | None, str | None]:
    """The code fence open at the end of ``text``: its run of backticks or tildes and its
    opening line (without indentation); (None, None) when none is."""
    fence: str | None = None
    opener: str | None = None
    for line in text.split("\n"):
        was = fence
        fence = _fence_after(line, fence)
        if fence is not None and was is None:
            opener = line.lstrip()
    return (fence, opener) if fence is not None else (None, None)
