"""A huge diff costs bounded work: difflib sees the changed lines only, at most
MAX_DIFF_INPUT_LINES of each side, and the sizes beyond are shown (issue 11, medium)."""

from __future__ import annotations

import difflib
from typing import Any

import pytest

from acp_notebook.client import display
from acp_notebook.client.display import MAX_DIFF_INPUT_LINES, unified_diff
from acp_notebook.client.rawinput import FileDiff


def file_lines(count: int, tag: str) -> str:
    return "".join(f"line {n} {tag}\n" for n in range(count))


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """The sizes of what difflib was asked to compare."""
    sizes: list[tuple[int, int]] = []
    real = difflib.unified_diff

    def recording(a: Any, b: Any, *args: Any, **kwargs: Any) -> Any:
        sizes.append((len(a), len(b)))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(display.difflib, "unified_diff", recording)
    return sizes


def test_a_400_kb_rewrite_is_diffed_on_bounded_input_with_its_sizes_shown(seen):
    old, new = file_lines(20_000, "old"), file_lines(20_000, "new")  # about 400 KB each
    text = unified_diff(FileDiff("/w/big.txt", old, new), "/w")
    assert seen and max(max(pair) for pair in seen) <= MAX_DIFF_INPUT_LINES
    assert "the change spans 20,000 old and 20,000 new lines" in text
    assert text.startswith("--- a/big.txt\n+++ b/big.txt\n@@ -1,")


def test_an_edit_in_a_large_file_is_diffed_exactly_with_the_whole_file_line_numbers(seen):
    old = file_lines(50_000, "same")
    new = old.replace("line 30000 same\n", "line 30000 changed\n")
    text = unified_diff(FileDiff("/w/big.txt", old, new), "/w")
    assert seen == [(7, 7)]  # the change and its context, not 50,000 lines
    expected = "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            "a/big.txt",
            "b/big.txt",
            n=3,
        )
    )
    assert text == expected
