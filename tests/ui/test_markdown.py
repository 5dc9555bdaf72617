"""The agent's Markdown: escaped, highlighted inline, cut only where it is safe."""

from __future__ import annotations

import random
import re

from markdown_it import MarkdownIt

from acp_notebook.ui.markdown import (
    MARKDOWN_SHEET,
    MAX_LIVE_CHARS,
    cut_markdown,
    highlight_code,
    markdown_html,
    render_markdown,
    split_frozen,
)


def test_raw_html_in_the_agents_text_is_shown_as_text_not_run():
    html = render_markdown(
        'Hi <script>alert(1)</script> <img src=x onerror="alert(2)">\n\n<div onclick="x()">block</div>'
    )
    assert "<script" not in html and "<img" not in html and "<div onclick" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in html


def test_links_open_in_a_new_tab_and_javascript_links_are_not_links():
    html = markdown_html("[docs](https://example.org) and [evil](javascript:alert(1))")
    assert (
        '<a href="https://example.org" target="_blank" rel="noopener noreferrer">docs</a>' in html
    )
    assert "javascript:" not in html.split("[evil]")[0]
    assert 'href="javascript' not in html


def test_code_fences_are_highlighted_with_inline_styles_from_jupyterlab_variables():
    html = render_markdown("```python\ndef f(x):\n    return 'hi'  # note\n```\n")
    assert "<pre style=" in html
    assert "var(--jp-mirror-editor-keyword-color,#008000)" in html  # `def`, `return`
    assert "var(--jp-mirror-editor-string-color,#ba2121)" in html
    assert 'class="' not in html.split("<pre", 1)[1]  # no Pygments classes: no CSS for them
    assert "&#39;hi&#39;" in html or "&#x27;hi&#x27;" in html or "'hi'" in html


def test_streamed_markdown_is_styled_by_the_sheet_not_inline():
    source = (
        "## Title\n\nSome `code` and a [link](https://example.org).\n\n- item\n\n> quote\n\n"
        "| a | b |\n|---|--:|\n| 1 | 2 |\n\n```python\ndef f(x):\n    return 'hi'  # note\n```\n"
    )
    html = render_markdown(source, sheet=True)
    inline = render_markdown(source)
    assert html.startswith('<div class="jp-RenderedHTMLCommon acp-md">')
    # Only a table column's own alignment stays inline: it is the text's, not our look.
    assert html.count("style=") == html.count('style="text-align:right"') == 2
    assert len(html) < len(inline) / 2
    # Every class the HTML uses has its rule in the sheet.
    classes = set(re.findall(r'class="([\w-]+)"', html.split(">", 1)[1]))
    assert {"k", "nf", "s1", "c1"} <= classes
    assert all(f".acp-md .{name}" in MARKDOWN_SHEET for name in classes)
    for tag in ("p", "h2", "ul", "blockquote", "table", "td", "pre"):
        assert f".acp-md {tag} {{" in MARKDOWN_SHEET
    # Tokens the style leaves uncoloured (names, punctuation) get no span.
    assert '<span class="n">' not in html and '<span class="p">' not in html
    muted = render_markdown("thought", sheet=True, muted=True)
    assert 'class="jp-RenderedHTMLCommon acp-md acp-md-muted"' in muted


def test_unknown_languages_and_indented_code_get_the_same_block_unhighlighted():
    assert highlight_code("<b>x</b>", "no-such-lang").count("&lt;b&gt;") == 1
    html = render_markdown("text\n\n    indented <code>\n")
    assert "<pre style=" in html and "&lt;code&gt;" in html


def test_tables_and_strikethrough_are_on():
    html = markdown_html("| a | b |\n|---|--:|\n| 1 | 2 |\n\n~~gone~~\n")
    assert "<table" in html and "<s>gone</s>" in html
    assert "text-align:right" in html  # the column's own alignment survives our styling


def _paragraphs(n: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    words = ["agent", "notebook", "kernel", "widget", "diff", "turn", "plan", "cell"]
    out = []
    for i in range(n):
        if i % 7 == 3:
            out.append("```python\n" + "\n\n".join(f"x{j} = {j}" for j in range(30)) + "\n```")
        elif i % 7 in (5, 6):  # two lists in a row: one loose list
            out.append("\n".join(f"- item {j} " + rng.choice(words) for j in range(5)))
        else:
            out.append(" ".join(rng.choice(words) for _ in range(60)) + ".")
    return "\n\n".join(out) + "\n"


def _inside_fence(text: str, pos: int) -> bool:
    """markdown-it itself is the oracle: is the line at ``pos`` inside a fenced block?"""
    line = text[:pos].count("\n")
    for token in MarkdownIt("commonmark").parse(text):
        if token.type == "fence" and token.map and token.map[0] < line < token.map[1]:
            return True
    return False


def test_split_frozen_leaves_short_text_whole():
    assert split_frozen("short\n\ntext") == ("", "short\n\ntext")


def test_split_frozen_cuts_at_the_last_blank_line_past_the_minimum():
    text = _paragraphs(30)
    frozen, live = split_frozen(text)
    assert frozen + live == text
    assert len(frozen) >= 2000 and frozen.endswith("\n\n")
    assert not _inside_fence(text, len(frozen))
    # The last cut point: no safe cut is left in the live part.
    assert split_frozen(live, min_size=1)[0] == "" or "```" in live


def test_split_frozen_never_splits_inside_a_code_fence():
    # Every blank line past 2,000 characters is inside one long fence.
    head = "intro paragraph.\n\n" * 10
    fence = "```python\n" + "\n\n".join(f"line_{i} = {i}" for i in range(400)) + "\n"
    text = head + fence  # unclosed: the agent is still streaming it
    frozen, live = split_frozen(text, min_size=100)
    assert frozen + live == text
    assert frozen == head  # the last safe cut is before the fence
    assert split_frozen(fence + "```\n\nafter\n", min_size=10)[0].startswith(fence + "```\n\n")


def test_split_frozen_respects_tilde_fences_longer_fences_and_indented_lines():
    text = (
        "a" * 2100
        + "\n\n~~~~\ncode\n\n```\nstill code\n\n~~~~\n\n- item\n\n  continuation\n\n  more\n"
    )
    frozen, _live = split_frozen(text)
    assert frozen.endswith("~~~~\n\n")  # after the fence closed; not before indented lines
    for point in range(2000, len(text)):
        f, _ = split_frozen(text[:point])
        assert not _inside_fence(text, len(f))


def test_streaming_cuts_render_like_the_whole_text():
    """Segments rendered one by one give the same HTML as the whole reply rendered at
    once (for text whose blocks are separated by blank lines)."""
    text = _paragraphs(60, seed=7)
    segments = []
    rest = ""
    for index in range(0, len(text), 37):  # arriving in chunks
        rest += text[index : index + 37]
        cut = cut_markdown(rest)
        while cut is not None:
            segments.append(cut.head)
            rest = cut.carry + cut.rest
            cut = cut_markdown(rest)
    segments.append(rest)
    assert len(segments) > 5
    assert "".join(segments) == text
    assert "".join(markdown_html(s) for s in segments) == markdown_html(text)


def test_a_long_code_block_is_cut_and_reopened_so_both_halves_stay_code():
    body = "".join(f"print({i})\n" for i in range(2000))
    tail = "Here:\n\n```python\n" + body
    cut = cut_markdown(tail)
    assert cut is not None and len(tail) >= MAX_LIVE_CHARS
    assert cut.head.endswith("```\n") and cut.carry == "```python\n"
    assert tail.endswith(cut.rest) and cut.rest.startswith("print(")
    head_html = markdown_html(cut.head)
    assert head_html.count("<pre") == 1 and ">0<" in head_html  # print(0), highlighted
    assert markdown_html(cut.carry + cut.rest).count("<pre") == 1


def test_split_frozen_keeps_a_loose_list_together():
    # "- three" after a blank line continues the same (loose) list: cutting there would
    # turn one loose list into two tight ones.
    text = "a" * 2100 + "\n\n- one\n- two\n\n- three\n\nafter\n"
    frozen, live = split_frozen(text[: text.index("- three") + 3])
    assert frozen.endswith("a\n\n") and live.startswith("- one")
    assert "".join(markdown_html(part) for part in split_frozen(text)) == markdown_html(text)
