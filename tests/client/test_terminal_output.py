"""A terminal's kept output: at most the byte limit, the beginning dropped first, at a
character boundary (spec: outputByteLimit truncates from the beginning)."""

from __future__ import annotations

from acp_notebook.client.terminal_output import TerminalOutput


def test_output_within_the_limit_is_kept_whole() -> None:
    out = TerminalOutput(10)
    assert out.feed(b"hello ") and out.feed(b"world")
    assert out.text() == "hello world"[-10:] and out.truncated


def test_a_flood_keeps_the_last_limit_bytes_in_order() -> None:
    out = TerminalOutput(1000)
    lines = [f"line {i:05d}\n".encode() for i in range(20_000)]
    for line in lines:
        out.feed(line)
    expected = b"".join(lines)[-1000:]
    assert out.text().encode() == expected
    assert out.truncated
    out.feed(b"more\n")
    assert out.text().encode() == (expected + b"more\n")[-1000:]


def test_the_cut_never_splits_a_character() -> None:
    out = TerminalOutput(5)
    out.feed("ab€€".encode())  # 2 + 3 + 3 bytes; the last 5 start inside the first €
    assert out.text() == "€"
    out.feed(b"x")
    assert out.text() == "€x"


def test_a_character_split_across_reads_comes_out_whole() -> None:
    out = TerminalOutput(100)
    euro = "€".encode()
    assert not out.feed(euro[:1])
    assert out.feed(euro[1:] + b"!")
    assert out.text() == "€!"


def test_a_limit_of_zero_keeps_nothing() -> None:
    out = TerminalOutput(0)
    out.feed(b"abc")
    assert out.text() == "" and out.truncated
