"""The agent's Markdown as safe HTML, self-styled or styled by one stylesheet, and where a
growing reply may be cut.

* CommonMark plus tables and strikethrough (markdown-it-py), with raw HTML **off**:
  the agent's text is untrusted and an ``HTML`` widget sets ``innerHTML`` unsanitised,
  so ``<script>``/``<img onerror>`` arrive as visible text.
* Code fences are highlighted by Pygments with styles whose colours are JupyterLab's
  own editor variables (``--jp-mirror-editor-*``): JupyterLab ships no Pygments CSS for
  widget HTML, and the variables follow the light and dark themes.
* Every look is defined once (``_TAG_STYLES``, the ``_*_STYLE`` constants, the Pygments
  style) and used either inline (HTML that must stand alone: a saved transcript, a card)
  or as the rules of :data:`MARKDOWN_SHEET` (``sheet=True``: what the live views stream;
  inline styles made the HTML four times the size of the text it shows).
* Links open in a new tab (``target=_blank``) so a click never navigates JupyterLab away.
* :func:`split_frozen` finds where a streaming reply can be cut into a part that will not
  change any more (rendered once, sent once) and a live tail (re-rendered on each
  refresh): that is what keeps a long reply O(n) bytes on the wire, not O(n²).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
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
    _TokenType,
)
from pygments.util import ClassNotFound

from .style import BORDER, CODE_FONT, MUTED, PRE_STYLE, PROSE_STYLE, SOFT_BG, esc

#: Segments are frozen once the reply is this long past the last cut (~2 KB: measured
#: 110 KB of iopub for a 16 KB reply with 50 ms coalescing, vs 14.6 MB without either).
SEGMENT_CHARS = 400
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


class _SheetFormatter(HtmlFormatter):
    """Pygments' class formatter, but a span only for the tokens :class:`JupyterLabStyle`
    colours (Pygments would wrap every token, punctuation and names too, in one)."""

    def _get_css_classes(self, ttype: _TokenType) -> str:
        while ttype not in self.ttype2class:
            ttype = ttype.parent
        return str(self.ttype2class[ttype])


_FORMATTER = HtmlFormatter(style=JupyterLabStyle, noclasses=True, nowrap=True)
_SHEET_FORMATTER = _SheetFormatter(style=JupyterLabStyle, nowrap=True)


@functools.lru_cache(maxsize=64)
def _lexer(lang: str) -> Lexer | None:
    try:
        return get_lexer_by_name(lang, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


#: The class of Markdown rendered for a page that holds :data:`MARKDOWN_SHEET` (what the
#: live views stream): its blocks carry no inline style, so a frozen segment costs about
#: its text on the wire instead of four times that.
SHEET_CLASS = "acp-md"
MUTED_CLASS = "acp-md-muted"

# The looks, in one place: inline (self-styled HTML) and in the sheet alike.
_PRE_STYLE = f"{PRE_STYLE}; margin: 0 0 {BLOCK_GAP} 0"
# The <code> in a <pre> is reset: JupyterLab's Markdown CSS gives `code` a background and
# padding, which would box every line of a block.
_PRE_CODE_STYLE = (
    "font-family: inherit; font-size: inherit; background: none; padding: 0; border: 0"
)
_CODE_STYLE = (
    f"font-family: {CODE_FONT}; font-size: 0.92em; background: {SOFT_BG}; "
    "padding: 0 3px; border-radius: 3px"
)


def highlight_code(code: str, lang: str = "", *, sheet: bool = False) -> str:
    """A ``<pre>`` block of ``code``, highlighted when Pygments knows ``lang``; ``sheet``:
    styled by :data:`MARKDOWN_SHEET` instead of inline."""
    lexer = _lexer(lang.strip().lower()) if lang.strip() else None
    if lexer is None or len(code) > MAX_HIGHLIGHT_CHARS:
        body = esc(code)
    else:
        body = pygments_highlight(code, lexer, _SHEET_FORMATTER if sheet else _FORMATTER)
    if sheet:
        return f"<pre><code>{body}</code></pre>"
    return f'<pre style="{_PRE_STYLE}"><code style="{_PRE_CODE_STYLE}">{body}</code></pre>'


# ---------------------------------------------------------------------------- rendering


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


def _important(style: str) -> str:
    # An inline style wins over JupyterLab's Markdown CSS (which trims first and last
    # margins with more specific selectors); in the sheet, !important does the same. Not
    # for text-align: a table column's own alignment is inline and must win.
    rules = (rule.strip() for rule in style.split(";") if rule.strip())
    return "; ".join(r if r.startswith("text-align") else f"{r} !important" for r in rules)


def _token_rules(scope: str) -> list[str]:
    """Pygments' rules for the sheet formatter's classes, one per distinct look."""
    selectors: dict[str, list[str]] = {}
    for line in _SHEET_FORMATTER.get_token_style_defs(scope):
        match = re.match(r"(.+?) \{ (.*) \}", line)
        if match:
            selectors.setdefault(match.group(2), []).append(match.group(1))
    return [f"{', '.join(names)} {{ {body} }}" for body, names in selectors.items()]


def _sheet() -> str:
    scope = f".{SHEET_CLASS}"
    rules = [
        f"{scope} {{ {PROSE_STYLE} }}",
        f".{MUTED_CLASS} {{ color: {MUTED} }}",
        *(f"{scope} {tag} {{ {_important(style)} }}" for tag, style in _TAG_STYLES.items()),
        f"{scope} pre {{ {_important(_PRE_STYLE)} }}",
        f"{scope} pre > code {{ {_important(_PRE_CODE_STYLE)} }}",
        f"{scope} :not(pre) > code {{ {_important(_CODE_STYLE)} }}",
        *_token_rules(scope),
    ]
    return "<style>" + "\n".join(rules) + "</style>"


#: The stylesheet that :func:`render_markdown` with ``sheet=True`` needs on the page once
#: (a ``<style>`` element: it applies wherever it sits, even in a hidden widget).
MARKDOWN_SHEET = _sheet()


def _style_and_target(sheet: bool) -> Callable[[StateCore], None]:
    def rule(state: StateCore) -> None:
        """Core rule: inline styles on every block unless the page has the sheet (outside
        JupyterLab there is no stylesheet for them), and links that open in a new tab."""

        def visit(tokens: list[Token]) -> None:
            for token in tokens:
                if token.children:
                    visit(token.children)
                if token.type == "link_open":
                    token.attrSet("target", "_blank")
                    token.attrSet("rel", "noopener noreferrer")
                    continue
                style = None if sheet else _TAG_STYLES.get(token.tag)
                if style is not None and token.nesting >= 0:
                    own = token.attrGet("style")  # e.g. a column's text-align
                    token.attrSet("style", f"{style}; {own}" if own else style)

        visit(state.tokens)

    return rule


def _make_parser(*, sheet: bool) -> MarkdownIt:
    def fence_highlight(content: str, lang: str, _attrs: str) -> str:
        return highlight_code(content, lang, sheet=sheet)

    def code_block(
        self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        # Indented code blocks get the same look as fences (no highlighting: no language).
        return highlight_code(tokens[idx].content, sheet=sheet)

    def code_inline(
        self: RendererHTML, tokens: Sequence[Token], idx: int, _options: OptionsDict, _env: EnvType
    ) -> str:
        style = "" if sheet else f' style="{_CODE_STYLE}"'
        return f"<code{style}>{esc(tokens[idx].content)}</code>"

    md = MarkdownIt("commonmark", {"html": False, "highlight": fence_highlight})
    md.enable(["table", "strikethrough"])
    md.core.ruler.push("acp_style", _style_and_target(sheet))
    md.add_render_rule("code_block", code_block)
    md.add_render_rule("code_inline", code_inline)
    return md


_MD = _make_parser(sheet=False)
_SHEET_MD = _make_parser(sheet=True)


def markdown_html(text: str, *, sheet: bool = False) -> str:
    """The HTML of ``text`` (raw HTML in it escaped), without a container."""
    return (_SHEET_MD if sheet else _MD).render(text)


def render_markdown(text: str, *, muted: bool = False, sheet: bool = False) -> str:
    """``text`` as a block: JupyterLab's Markdown class plus inline styles, or with
    ``sheet`` plus :data:`MARKDOWN_SHEET`'s class (the page must hold the sheet).
    ``muted`` text (the agent's thoughts) is greyed so it reads as secondary."""
    if not text:
        return ""
    if sheet:
        classes = f"jp-RenderedHTMLCommon {SHEET_CLASS}" + (f" {MUTED_CLASS}" if muted else "")
        return f'<div class="{classes}">{markdown_html(text, sheet=True)}</div>'
    style = PROSE_STYLE + (f"; color: {MUTED}" if muted else "")
    return f'<div class="jp-RenderedHTMLCommon" style="{style}">{markdown_html(text)}</div>'


def render_sheet_markdown(text: str) -> str:
    """What a live view streams (the turn view holds the sheet)."""
    return render_markdown(text, sheet=True)


def render_sheet_muted_markdown(text: str) -> str:
    return render_markdown(text, muted=True, sheet=True)


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
