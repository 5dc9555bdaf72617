"""How ./dev test shares the suite among its workers (tests/schedule.py), driven as
pytest-xdist drives a scheduler: workers register, report their collection, take units."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from tests.schedule import LongestFirst, unit_of

FLAVOURS = ("lab", "lab-collaboration", "notebook7")
COLLECTION = [
    *(f"tests/client/test_many.py::test_{i}" for i in range(60)),
    *(f"tests/kernel/test_kernel.py::test_{t}" for t in "abcd"),
    *(f"tests/browser/test_flow.py::test_{t}[{f}]" for f in FLAVOURS for t in "ab"),
]


@dataclass(eq=False)
class Worker:
    """What xdist's scheduler sees of a worker: the tests it is sent."""

    name: str
    sent: list[str] = field(default_factory=list)
    shutting_down: bool = False

    @property
    def gateway(self) -> SimpleNamespace:
        return SimpleNamespace(id=self.name)

    def send_runtest_some(self, indexes: list[int]) -> None:
        self.sent.extend(COLLECTION[i] for i in indexes)

    def shutdown(self) -> None:
        self.shutting_down = True


def scheduled(workers: int) -> list[Worker]:
    config: Any = SimpleNamespace(
        getvalue=lambda name: [f"{workers}*popen"] if name == "tx" else None,
        option=SimpleNamespace(loadscopereorder=True),
    )
    scheduler = LongestFirst(config)
    nodes = [Worker(f"gw{i}") for i in range(workers)]
    for node in nodes:
        scheduler.add_node(node)  # type: ignore[arg-type]
    for node in nodes:
        scheduler.add_node_collection(node, COLLECTION)  # type: ignore[arg-type]
    scheduler.schedule()
    return nodes


def units(worker: Worker) -> list[str]:
    return list(dict.fromkeys(unit_of(nodeid) for nodeid in worker.sent))


def test_a_browser_files_flavours_are_units_of_their_own_and_other_files_are_whole() -> None:
    assert unit_of("tests/browser/test_flow.py::test_a[lab-collaboration]") == (
        "tests/browser/test_flow.py[lab-collaboration]"
    )
    assert unit_of("tests/kernel/test_kernel.py::test_a[x]") == "tests/kernel/test_kernel.py"
    assert unit_of("notebooks/quickstart.ipynb::Cell 3") == "notebooks/quickstart.ipynb"


def test_the_costliest_units_go_out_first_and_flavours_run_side_by_side() -> None:
    # xdist's loadfile sent the file of most tests first: the browser files, a few long
    # tests each, started late, test_live_flow.py's three flavours one after another.
    first, second, _ = scheduled(workers=3)
    assert units(first) == [
        "tests/browser/test_flow.py[lab]",
        "tests/browser/test_flow.py[notebook7]",
    ]
    assert units(second) == [
        "tests/browser/test_flow.py[lab-collaboration]",
        "tests/client/test_many.py",
    ]


def test_one_worker_takes_light_units_while_the_others_run_browser_units() -> None:
    *_, third = scheduled(workers=3)
    assert units(third) == ["tests/kernel/test_kernel.py"]
