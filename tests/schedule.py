"""How ``./dev test`` shares the suite among its pytest-xdist workers: longest work first.

A unit of work goes to one worker, its tests in order: a test file (its module-scoped
kernel or server starts once), or, in ``tests/browser``, the tests of one parameter of a
file (one flavour: JupyterLab, JupyterLab with real-time collaboration, Notebook 7), so
a file's flavours run side by side on different workers, each with its own server.

xdist's ``loadfile`` hands out files by their number of tests, most first, so the browser
files (a few tests of 15–60 s each) started late: ``test_live_flow.py``, all three
flavours on one worker, ran from the run's 148th second for 395 s. Here each unit's cost
is estimated from its tests' tiers (:data:`SECONDS`, what a test of each tier took in a
whole run on 2 cores) and the units go out most costly first, so the last to start are
short ones and the workers finish together.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling

from . import tiers

#: Seconds one test of each tier takes, about (a whole run on 2 cores, 3 workers): only
#: their proportions count.
SECONDS = {
    "agents": 10.0,
    "deploy": 35.0,
    "browser": 25.0,
    "kernel": 2.0,
    "slow": 1.0,
    "fast": 0.1,
}

#: A notebook's cell under nbval: its kernel starts once for the notebook, so a cell costs
#: less than a ``kernel`` test, which starts its own or shares its module's.
NOTEBOOK_CELL_SECONDS = 0.5


def unit_of(nodeid: str) -> str:
    """The unit of work ``nodeid`` belongs to: its file, or its file and parameter in
    ``tests/browser``."""
    path, _, rest = nodeid.partition("::")
    if path.startswith("tests/browser/") and rest.endswith("]") and "[" in rest:
        return f"{path}[{rest[rest.index('[') + 1 : -1]}]"
    return path


def cost_of(nodeid: str) -> float:
    """What one test is expected to take, from its place's tier (:data:`tiers.BY_PATH`)."""
    if nodeid.startswith("notebooks/"):
        return NOTEBOOK_CELL_SECONDS
    return SECONDS[tiers.tier_of_place(nodeid)]


#: Tiers whose tests drive a browser or servers of their own and wait on them with time
#: limits: at most all workers but one run such units at once, so they keep a share of
#: the 2 cores the third worker's lighter tests do not take from them.
HEAVY = frozenset({"browser", "deploy"})


def is_heavy(unit: str) -> bool:
    """Whether ``unit`` (a name :func:`unit_of` gave) runs tests of a :data:`HEAVY` tier."""
    return tiers.tier_of_place(unit.partition("[")[0]) in HEAVY


class LongestFirst(LoadScopeScheduling):
    """xdist's scope scheduling with :func:`unit_of` as the scope, each worker given the
    most costly unit left whenever it takes one: a light one while all other workers but
    one run :data:`HEAVY` units."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        self._costs: dict[str, float] = {}

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)

    def _assign_work_unit(self, node: Any) -> None:
        for unit, tests in self.workqueue.items():
            if unit not in self._costs:
                self._costs[unit] = sum(cost_of(nodeid) for nodeid in tests)
        heavy_elsewhere = sum(
            any(is_heavy(unit) and not all(done.values()) for unit, done in units.items())
            for other, units in self.assigned_work.items()
            if other is not node
        )
        units = sorted(self.workqueue, key=self._costs.__getitem__, reverse=True)
        if heavy_elsewhere >= max(1, len(self.assigned_work) - 1):
            units = [unit for unit in units if not is_heavy(unit)] or units
        self.workqueue.move_to_end(units[0], last=False)  # xdist assigns the first
        super()._assign_work_unit(node)
