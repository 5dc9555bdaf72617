"""One row per figure: its value, the baseline measured in the same run, their ratio, the
budget and whether it holds. A gated row (instructions or bytes: the same on a busy machine
as on a quiet one) fails the run when its budget does not hold; any other budget (wall or
CPU seconds, which follow the machine's load) is reported, never asserted."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class Row:
    """``value`` may be at most ``limit`` × ``baseline`` + ``slack`` (both in ``unit``);
    ``gated``: the run fails when it is not."""

    figure: str
    value: float
    baseline: float
    baseline_name: str
    unit: str
    limit: float
    slack: float = 0.0
    gated: bool = False

    @property
    def ratio(self) -> float:
        return self.value / self.baseline if self.baseline else float("inf")

    @property
    def budget(self) -> str:
        if self.limit == float("inf"):
            return "reported"
        extra = f" + {self.slack:g} {self.unit}" if self.slack else ""
        return f"≤ {self.limit:g}×{extra} ({'gated' if self.gated else 'reported'})"

    @property
    def ok(self) -> bool:
        return self.value <= self.limit * self.baseline + self.slack

    @property
    def verdict(self) -> str:
        """pass/FAIL for a gated row, within/over for a reported budget, else nothing."""
        if self.gated:
            return "pass" if self.ok else "FAIL"
        if self.limit == float("inf"):
            return ""
        return "within" if self.ok else "over"

    def record(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": round(self.ratio, 3), "ok": self.ok}


def _number(value: float, unit: str) -> str:
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:.2f} {unit}"


def format_table(rows: list[Row]) -> str:
    """A Markdown table (it reads as well in a terminal as in benchmarks/README.md)."""
    lines = [
        "| figure | value | baseline (same run) | ratio | budget | |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.figure} | {_number(row.value, row.unit)} | {row.baseline_name}: "
            f"{_number(row.baseline, row.unit)} | {row.ratio:.2f} | {row.budget} | "
            f"{row.verdict} |"
        )
    return "\n".join(lines)
