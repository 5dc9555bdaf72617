"""Fuzzing the reader (issue 11): whatever bytes the other side writes — random bytes,
truncated frames, lines near and over ``max_line_bytes``, invalid UTF-8, deep nesting — cut
into arbitrary chunks, the peer never dies, reports every line that is not a message as
``invalid``, and delivers every valid message around the garbage, in order."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

import anyio
from hypothesis import given, settings
from hypothesis import strategies as st

from acp_notebook.protocol.jsonrpc import Peer, TraceEvent
from acp_notebook.protocol.memory import memory_pipe

#: Small, so that lines near and over the limit are cheap to generate.
MAX_LINE = 4096
SAFETY = 30.0  # seconds; a safety net, never a performance bound


def note(n: int, **extra: Any) -> bytes:
    """A valid notification line the test can recognise (``params.n``)."""
    message = {"jsonrpc": "2.0", "method": "note", "params": {"n": n, **extra}}
    return json.dumps(message, separators=(",", ":")).encode()


def nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children) | st.dictionaries(st.text(), children),
    max_leaves=20,
)


@dataclass(frozen=True)
class Frame:
    """One line sent, and what the peer must make of it."""

    line: bytes
    #: ``params.n`` when the line must be delivered, else None.
    delivered: int | None = None
    #: Whether the line must be reported as ``invalid``.
    invalid: bool = False


def classify(line: bytes) -> Frame:
    """What the peer must do with a line that is not one of ours, by the standard
    library's reading of it: a JSON object is a message (never ``invalid``); anything
    else with content is ``invalid``; a blank line is skipped silently."""
    if len(line) > MAX_LINE:
        return Frame(line, invalid=True)
    try:
        value = json.loads(line)
    except ValueError:
        return Frame(line, invalid=bool(line.strip()))
    except RecursionError:  # not generated below: random bytes never nest that deep
        raise AssertionError("unexpected deep garbage") from None
    return Frame(line, invalid=not isinstance(value, dict))


def valid(n: int, line: bytes) -> Frame:
    too_long = len(line) > MAX_LINE
    return Frame(line, delivered=None if too_long else n, invalid=too_long)


@st.composite
def frame(draw: st.DrawFn, n: int) -> Frame:
    kind = draw(
        st.sampled_from(
            ["note", "json", "padded", "deep", "garbage", "truncated", "unbalanced", "bad-utf8"]
        )
    )
    if kind == "note":
        return valid(n, note(n))
    if kind == "json":  # any JSON value as a parameter (lone surrogates included)
        return valid(n, note(n, value=draw(JSON_VALUES)))
    if kind == "padded":  # near the limit, on both sides of it
        size = len(note(n, pad=""))
        return valid(n, note(n, pad="x" * (MAX_LINE - size + draw(st.integers(-40, 40)))))
    if kind == "deep":  # valid JSON nested deeper than the peer keeps (cut, delivered)
        return valid(n, note(n, deep=nested(draw(st.integers(60, 1500)))))
    if kind == "garbage":
        return classify(draw(st.binary(max_size=300)).replace(b"\n", b""))
    if kind == "truncated":  # a frame cut short: never JSON
        whole = note(n)
        return Frame(whole[: draw(st.integers(1, len(whole) - 1))], invalid=True)
    if kind == "unbalanced":
        return Frame(b"[" * draw(st.integers(1, 3 * MAX_LINE)), invalid=True)
    return Frame(note(n, s="")[:-4] + b'"\xff\xfe"}}', invalid=True)  # not UTF-8


@st.composite
def streams(draw: st.DrawFn) -> tuple[list[Frame], list[bytes]]:
    """Frames, and the bytes that carry them cut into chunks at random places."""
    frames = [draw(frame(n)) for n in range(draw(st.integers(1, 25)))]
    data = b"".join(f.line + b"\n" for f in frames)
    if draw(st.booleans()):
        data = data[:-1]  # the last line without its newline
    cuts = sorted(draw(st.sets(st.integers(1, max(1, len(data) - 1)), max_size=20)))
    bounds = [0, *cuts, len(data)]
    chunks = [data[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    return frames, chunks


@dataclass
class Seen:
    delivered: list[int] = field(default_factory=list)
    invalid: list[TraceEvent] = field(default_factory=list)

    def note(self, params: Any) -> None:
        self.delivered.append(params["n"])

    def observe(self, event: TraceEvent) -> None:
        if event.direction == "recv" and event.message is None:
            self.invalid.append(event)


async def feed(chunks: list[bytes]) -> tuple[Peer, Seen]:
    """A peer reading ``chunks`` until the stream ends; what it delivered and reported."""
    peer_in, remote_out = memory_pipe()
    remote_in, peer_out = memory_pipe(buffer=10_000)  # batch errors sent back pile up here
    peer = Peer(peer_in, peer_out, name="fuzzed", max_line_bytes=MAX_LINE)
    seen = Seen()
    peer.handle_notification("note", seen.note)
    peer.add_observer(seen.observe)
    with anyio.fail_after(SAFETY):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(peer.run)
            for chunk in chunks:
                await remote_out.send(chunk)
            await remote_out.aclose()
            await peer.wait_finished()
        await remote_in.aclose()
    return peer, seen


@settings(max_examples=60, derandomize=True)
@given(streams())
def test_garbage_never_kills_the_reader_and_valid_messages_arrive_in_order(
    stream: tuple[list[Frame], list[bytes]],
) -> None:
    frames, chunks = stream
    peer, seen = anyio.run(feed, chunks)
    # It ended because the stream did, never because reading failed.
    assert peer.closed_message == "the connection closed"
    assert seen.delivered == [f.delivered for f in frames if f.delivered is not None]
    assert len(seen.invalid) == sum(f.invalid for f in frames)
