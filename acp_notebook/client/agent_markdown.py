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

from .display import safe_href

__all__ = ["agent_markdown"]

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


def agent_markdown(text: str) -> str:
    """``text`` (Markdown from the agent) with no raw HTML and no unsafe link."""
    if not any(mark in text for mark in ("<", "](", "]:", "```", "~~~")):
        return text
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        opener = _FENCE.match(line)
        if fence is not None:
            if (
                opener is not None
                and opener.group(1)[0] == fence[0]
                and len(opener.group(1)) >= len(fence)
            ):
                fence = None
            out.append(line)
        elif opener is not None:
            fence = opener.group(1)
            out.append(line)
        else:
            out.append(_line(line))
    if fence is not None:
        # A fence left open would swallow what follows this text (the transcript's own
        # blocks) and turn the next fence inside out.
        out.insert(len(out) - 1 if out[-1] == "" else len(out), fence)
    return "\n".join(out)
