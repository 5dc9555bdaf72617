"""What a streamed text may have cost on the wire by now.

Every refresh of a growing text sends at least one widget message (a frozen segment's
``comm_open``, the live tail's new value), and each carries a fixed envelope besides its
HTML. Refreshing on every coalescing tick would make the bytes grow with the stream's
duration: a slow or slowed-down stream gets more ticks for the same text. So a streaming
view spends from this budget, which grows with the text that arrived and, slowly, with
time (so a slow stream's short tail still refreshes about every tick or two); a refresh it
cannot afford is put off to a later tick, and the last refresh of a turn is never put off.
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: Bytes per character of text that arrived. Frozen segments cost about 1.05 a character
#: (an agent reply's Markdown, rendered by the frontend) or 1.5 (HTML styled by the sheet);
#: the rest pays for envelopes and live tails.
SHARE = 1.9
#: Bytes per second, whatever arrived: a slow stream's tail (a paragraph) stays live.
RATE = 2_000
#: Bytes that are there from the start: a short reply is shown as it comes.
SLACK = 4_000
#: What one message costs besides its HTML (measured on iopub: an HTML widget's
#: ``comm_open`` about 600 bytes, its share of the groups' updates about 200; a value
#: update about 150).
OPEN_COST = 800
UPDATE_COST = 150


class WireBudget:
    """Bytes a growing text may have sent by now: ``SHARE`` per character that arrived,
    ``RATE`` per second since it began, ``SLACK`` at the start."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._start = clock()
        self.spent = 0

    def affords(self, chars: int, cost: int) -> bool:
        allowed = SHARE * chars + RATE * (self._clock() - self._start) + SLACK
        return self.spent + cost <= allowed

    def spend(self, cost: int) -> None:
        self.spent += cost
