"""The coalescer: however fast the agent streams, at most one refresh per interval."""

from __future__ import annotations

import itertools

from acp_notebook.ui.coalesce import Coalescer

from .conftest import FakeClock


def test_a_burst_of_pokes_costs_one_refresh_after_the_interval(clock: FakeClock):
    runs: list[float] = []
    coalescer = Coalescer(clock.schedule_later, 0.075, callback=lambda: runs.append(clock.now))
    for _ in range(500):
        coalescer.poke()
    assert runs == []  # trailing edge: nothing yet
    clock.advance(0.074)
    assert runs == []
    clock.advance(0.001)
    assert runs == [0.075]
    clock.advance(1.0)
    assert runs == [0.075]  # no change since: no refresh


def test_a_steady_stream_refreshes_at_most_once_per_interval(clock: FakeClock):
    runs: list[float] = []
    coalescer = Coalescer(clock.schedule_later, 0.075, callback=lambda: runs.append(clock.now))
    for _ in range(2000):  # one chunk per millisecond for two seconds
        coalescer.poke()
        clock.advance(0.001)
    clock.advance(1.0)
    gaps = [b - a for a, b in itertools.pairwise(runs)]
    assert min(gaps) >= 0.075 - 1e-9
    assert 2.0 / 0.075 - 2 <= len(runs) <= 2.0 / 0.075 + 2
    assert coalescer.runs == len(runs)


def test_flush_runs_now_and_the_scheduled_run_then_has_nothing_to_do(clock: FakeClock):
    runs: list[float] = []
    coalescer = Coalescer(clock.schedule_later, 0.075, callback=lambda: runs.append(clock.now))
    coalescer.poke()
    clock.advance(0.01)
    coalescer.flush()
    assert runs == [0.01]
    clock.advance(0.1)
    assert runs == [0.01]
    coalescer.flush()  # not dirty: nothing
    assert runs == [0.01]


def test_close_cancels_the_scheduled_run_and_ignores_later_pokes(clock: FakeClock):
    runs: list[float] = []
    coalescer = Coalescer(clock.schedule_later, 0.075, callback=lambda: runs.append(clock.now))
    coalescer.poke()
    coalescer.close()
    assert clock.timers == []
    coalescer.poke()
    clock.advance(1.0)
    assert runs == []


def test_a_failing_refresh_does_not_stop_later_ones(clock: FakeClock):
    calls = []

    def refresh() -> None:
        calls.append(clock.now)
        if len(calls) == 1:
            raise RuntimeError("boom")

    coalescer = Coalescer(clock.schedule_later, 0.05, callback=refresh)
    coalescer.poke()
    clock.advance(0.05)
    coalescer.poke()
    clock.advance(0.05)
    assert len(calls) == 2
