"""The agent's Markdown as safe, self-styled HTML, and where a growing reply may be cut.

* CommonMark plus tables and strikethrough (markdown-it-py), with raw HTML **off**:
  the agent's text is untrusted and an ``HTML`` widget sets ``innerHTML`` unsanitised,
  so ``<script>``/``<img onerror>`` arrive as visible text.
* Code fences are highlighted by Pygments with **inline** styles whose colours are
  JupyterLab's own editor variables (``--jp-mirror-editor-*``): JupyterLab ships no
  Pygments CSS for widget HTML, and the variables follow the light and dark themes.
* Links open in a new tab (``target=_blank``) so a click never navigates JupyterLab away.
* :func:`split_frozen` finds where a streaming reply can be cut into a part that will not
  change any more (rendered once, sent once) and a live tail (re-rendered on each
  refresh): that is what keeps a long reply O(n) bytes on the wire, not O(n²).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_core import StateCore
from markdown_it.token import Token
from markdown_it.utils import EnvType, OptionsDict
from pygments import highlight as pygments_highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import get_lexer_by_name
from pygments.style import Style
from pygments.token import (
    Comment,
    Error,
    Generic,
    Keyword,
    Name,
    Number,
    Operator,
    String,
)
from pygments.util import ClassNotFound

from .style import BORDER, CODE_FONT, MUTED, PRE_STYLE, PROSE_STYLE, SOFT_BG, esc

#: Segments are frozen once the reply is this long past the last cut (~2 KB: measured
#: 110 KB of iopub for a 16 KB reply with 50 ms coalescing, vs 14.6 MB without either).
SEGMENT_CHARS = 2_000
#: A live tail longer than this is cut at a line end even without a blank line (a long
#: code block would otherwise be re-sent whole on every refresh).
MAX_LIVE_CHARS = 8_000
#: Past this size a code block is shown without highlighting (CPU, not bytes).
MAX_HIGHLIGHT_CHARS = 100_000
#: The space below every block (see ``_TAG_STYLES``).
BLOCK_GAP = "0.6em"


def _jp(name: str, fallback: str) -> str:
    # No space after the comma: Pygments splits style definitions on whitespace.
    return f"var(--jp-mirror-editor-{name}-color,{fallback})"


class JupyterLabStyle(Style):
    """Pygments colours taken from JupyterLab's editor theme variables (fallbacks are its
    light theme), so highlighted code looks like a code cell in either theme.

    Punctuation is left uncoloured: it is the most frequent token, and every coloured
    token costs ~70 bytes of inline style on every refresh of a streaming reply."""

    background_color = "transparent"
    styles = {  # noqa: RUF012  (Pygments reads this class attribute)
        Keyword: "bold " + _jp("keyword", "#008000"),
        Keyword.Constant: _jp("atom", "#8888ff"),
        Keyword.Type: _jp("variable-3", "#008855"),
        Operator: _jp("operator", "#7800c2"),
        Operator.Word: "bold " + _jp("keyword", "#008000"),
        Name.Builtin: _jp("builtin", "#008000"),
        Name.Function: _jp("def", "#0000ff"),
        Name.Class: _jp("def", "#0000ff"),
        Name.Decorator: _jp("meta", "#aa22ff"),
        Name.Attribute: _jp("attribute", "#0000cc"),
        Name.Tag: _jp("tag", "#117700"),
        Name.Variable: _jp("variable-2", "#00366d"),
        Name.Constant: _jp("atom", "#8888ff"),
        String: _jp("string", "#ba2121"),
        String.Escape: _jp("string-2", "#770088"),
        String.Interpol: _jp("string-2", "#770088"),
        String.Regex: _jp("string-2", "#770088"),
        Number: _jp("number", "#008800"),
        Comment: "italic " + _jp("comment", "#408080"),
        Comment.Preproc: _jp("meta", "#aa22ff"),
        Generic.Heading: "bold " + _jp("header", "#0000ff"),
        Generic.Subheading: "bold " + _jp("header", "#0000ff"),
        Generic.Inserted: "var(--jp-success-color1,#388e3c)",
        Generic.Deleted: "var(--jp-error-color1,#d32f2f)",
        Generic.Emph: "italic",
        Generic.Strong: "bold",
        Generic.Prompt: "bold " + _jp("meta", "#aa22ff"),
        Error: _jp("error", "#ff0000"),
    }


_FORMATTER = HtmlFormatter(style=JupyterLabStyle, noclasses=True, nowrap=True)


@functools.lru_cache(maxsize=64)
def _lexer(lang: str) -> Lexer | None:
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


def highlight_code(code: str, lang: str = "") -> str:
    """A ``<pre>`` block of ``code``, highlighted when Pygments knows ``lang``."""
    lexer = _lexer(lang.strip().lower()) if lang.strip() else None
    if lexer is None or len(code) > MAX_HIGHLIGHT_CHARS:
        body = esc(code)
    else:
        body = pygments_highlight(code, lexer, _FORMATTER)
    # The <code> is reset: JupyterLab's Markdown CSS gives `code` a background and padding,
    # which would box every line of a block.
    return (
        f'<pre style="{PRE_STYLE}; margin: 0 0 {BLOCK_GAP} 0"><code style="font-family: inherit; font-size: inherit; '
        f'background: none; padding: 0; border: 0">{body}</code></pre>'
    )


# ---------------------------------------------------------------------------- rendering


def _fence_highlight(content: str, lang: str, _attrs: str) -> str:
    return highlight_code(content, lang)


def _code_block(
    self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    # Indented code blocks get the same look as fences (no highlighting: no language).
    return highlight_code(tokens[idx].content)


def _code_inline(
    self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
) -> str:
    return (
        f'<code style="font-family: {CODE_FONT}; font-size: 0.92em; background: {SOFT_BG}; '
        f'padding: 0 3px; border-radius: 3px">{esc(tokens[idx].content)}</code>'
    )


_CELL_STYLE = f"padding: 3px 8px; border: 1px solid {BORDER}; text-align: left"
#: Every block carries its own margins: a reply is cut into segments that are separate
#: widgets (flex items, whose margins never collapse), and JupyterLab's Markdown CSS
#: trims the first and last child's margins. With explicit margins (0 on top, one gap
#: below) a cut between two paragraphs looks exactly like the gap between two paragraphs.
_BLOCK = f"margin: 0 0 {BLOCK_GAP} 0"
_TAG_STYLES = {
    "p": _BLOCK,
    "ul": f"{_BLOCK}; padding-left: 1.6em",
    "ol": f"{_BLOCK}; padding-left: 1.6em",
    "table": f"border-collapse: collapse; {_BLOCK}",
    "th": _CELL_STYLE + "; font-weight: 600",
    "td": _CELL_STYLE,
    "img": "max-width: 100%",
    "blockquote": f"{_BLOCK}; padding-left: 10px; border-left: 3px solid {BORDER}; color: {MUTED}",
    "hr": f"{_BLOCK}; border: 0; border-top: 1px solid {BORDER}",
    # Headings a notch smaller than a Markdown cell's: a reply is not a document title.
    "h1": f"font-size: 1.35em; margin: 0.9em 0 {BLOCK_GAP} 0",
    "h2": f"font-size: 1.2em; margin: 0.9em 0 {BLOCK_GAP} 0",
    "h3": f"font-size: 1.08em; margin: 0.8em 0 {BLOCK_GAP} 0",
    "h4": f"font-size: 1em; margin: 0.8em 0 {BLOCK_GAP} 0",
}


def _style_and_target(state: StateCore) -> None:
    """Core rule: inline styles on tables, images and quotes (outside JupyterLab there is
    no stylesheet for them), and links that open in a new tab."""

    def visit(tokens: list[Token]) -> None:
        for token in tokens:
            if token.children:
                visit(token.children)
            if token.type == "link_open":
                token.attrSet("target", "_blank")
                token.attrSet("rel", "noopener noreferrer")
                continue
            style = _TAG_STYLES.get(token.tag)
            if style is not None and token.nesting >= 0:
                own = token.attrGet("style")  # e.g. a column's text-align
                token.attrSet("style", f"{style}; {own}" if own else style)

    visit(state.tokens)


def _make_parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "highlight": _fence_highlight})
    md.enable(["table", "strikethrough"])
    md.core.ruler.push("acp_style", _style_and_target)
    md.add_render_rule("code_block", _code_block)
    md.add_render_rule("code_inline", _code_inline)
    return md


_MD = _make_parser()


def markdown_html(text: str) -> str:
    """The HTML of ``text`` (raw HTML in it escaped), without a container."""
    return _MD.render(text)


def render_markdown(text: str, *, muted: bool = False) -> str:
    """``text`` as a self-contained block: JupyterLab's Markdown class plus inline styles.
    ``muted`` text (the agent's thoughts) is greyed so it reads as secondary."""
    if not text:
        return ""
    style = PROSE_STYLE + (f"; color: {MUTED}" if muted else "")
    return f'<div class="jp-RenderedHTMLCommon" style="{style}">{markdown_html(text)}</div>'


def inline_markdown(text: str) -> str:
    """One line of Markdown (a tool call's title: `code` spans, emphasis), escaped."""
    return _MD.renderInline(text)


def render_muted_markdown(text: str) -> str:
    return render_markdown(text, muted=True)


# ---------------------------------------------------------------------------- splitting

_FENCE = re.compile(r"^( {0,3})(`{3,}|~{3,})(.*)$")
_LIST_ITEM = re.compile(r"^ {0,3}([-+*]|\d{1,9}[.)])(\s|$)")
_SETEXT_UNDERLINE = re.compile(r"^(=+|-+)\s*$")


@dataclass
class _Fence:
    char: str
    length: int
    opener: str  # the opening line, to reopen the fence after a forced cut


def _fence_step(line: str, fence: _Fence | None) -> _Fence | None:
    """The fence state after ``line`` (CommonMark: a fence closes with the same character,
    at least as many of them, nothing but spaces after, at most 3 spaces of indent)."""
    match = _FENCE.match(line.rstrip("\n"))
    if fence is None:
        if match is None:
            return None
        marks, info = match.group(2), match.group(3)
        if marks[0] == "`" and "`" in info:
            return None  # not a fence: backticks in a backtick fence's info string
        return _Fence(marks[0], len(marks), line if line.endswith("\n") else line + "\n")
    if (
        match is not None
        and match.group(2)[0] == fence.char
        and len(match.group(2)) >= fence.length
        and not match.group(3).strip()
    ):
        return None
    return fence


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line with its newline) for each line of ``text``."""
    out = []
    pos = 0
    for line in text.splitlines(keepends=True):
        out.append((pos, line))
        pos += len(line)
    return out


def split_frozen(text: str, min_size: int = SEGMENT_CHARS) -> tuple[str, str]:
    """``(frozen_prefix, live_rest)``: the last safe cut at or beyond ``min_size`` chars.

    A cut is safe where each side renders on its own as it does inside the whole: at
    the start of a line that follows a blank line, is not indented (an indented line
    may continue a list item or be code), is not inside a code fence and does not
    continue a list. No cut yields ``("", text)``. ``frozen_prefix + live_rest == text``.
    """
    if len(text) < min_size:
        return "", text
    best = 0
    fence: _Fence | None = None
    previous_blank = False
    in_list = False  # the last non-blank line belongs to a list
    for pos, line in _lines(text):
        blank = not line.strip()
        if (
            fence is None
            and previous_blank
            and pos >= min_size
            and not blank
            and not line[0].isspace()
            # Items on both sides of a blank line are one (loose) list: cut, they would
            # render as two tight lists.
            and not (in_list and _LIST_ITEM.match(line))
        ):
            best = pos
        if not blank:
            in_list = bool(_LIST_ITEM.match(line)) or (in_list and line[0].isspace())
        previous_blank = blank
        fence = _fence_step(line, fence)
    return text[:best], text[best:]


@dataclass
class Cut:
    """A cut of a live tail: ``head`` is rendered and frozen; ``carry + rest`` stays live.

    ``rest`` is always a suffix of the tail that was cut; ``carry`` is Markdown to put
    before it (a code fence's opening line when the cut fell inside that fence).
    """

    head: str
    rest: str
    carry: str = ""


def cut_markdown(
    tail: str, min_size: int = SEGMENT_CHARS, max_live: int = MAX_LIVE_CHARS
) -> Cut | None:
    """Where to cut a growing Markdown tail, or None to leave it whole for now.

    A safe cut (:func:`split_frozen`) when there is one. When the tail grew past
    ``max_live`` with none (one long code block, a long list), cut at the last line end:
    inside a fence the head gets a closing fence and the rest is reopened with the same
    opening line, so both halves still render as code.
    """
    head, rest = split_frozen(tail, min_size)
    if head:
        return Cut(head, rest)
    if len(tail) < max_live:
        return None
    best: tuple[int, _Fence | None] | None = None
    fence: _Fence | None = None
    for index, (pos, line) in enumerate(_lines(tail)):
        after = _fence_step(line, fence)
        if index > 0 and pos >= min_size:
            if fence is not None:
                # Inside a fence, any line but the closing one (that would leave an empty block).
                if after is not None:
                    best = (pos, fence)
            elif (
                line.strip()
                and not line[0].isspace()  # not a continuation
                and line[0] != "|"  # not a table row
                and not _SETEXT_UNDERLINE.match(line)
            ):
                best = (pos, None)
        fence = after
    if best is None:
        return None
    pos, open_fence = best
    if open_fence is None:
        return Cut(tail[:pos], tail[pos:])
    close = open_fence.char * open_fence.length + "\n"
    return Cut(tail[:pos] + close, tail[pos:], carry=open_fence.opener)


def cut_lines(tail: str, min_size: int = SEGMENT_CHARS) -> Cut | None:
    """Where to cut growing plain text (terminal output): after the last newline past
    ``min_size`` characters."""
    if len(tail) < min_size:
        return None
    end = tail.rfind("\n") + 1
    if end < min_size:
        return None
    return Cut(tail[:end], tail[end:])
