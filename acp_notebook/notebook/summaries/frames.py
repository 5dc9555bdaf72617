"""pandas and polars data frames and series: shape, dtypes, nulls, ``describe``, first rows.

Both libraries are read into the same facts (:class:`FrameFacts`) and rendered by one
function, so a pandas and a polars frame read alike to the agent. Every part is
computed on its own: a column type that ``describe`` or CSV cannot handle costs that
part (with a note saying so), never the summary.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .kinds import Summariser, is_instance
from .model import Limits, Summary, count, fence, finish


@dataclass
class FrameFacts:
    library: str
    kind: str  # "DataFrame" or "Series"
    rows: int
    columns: int
    #: (name, dtype, null count) of the described columns.
    dtypes: list[tuple[str, str, int | None]] = field(default_factory=list)
    describe_csv: str | None = None
    head_csv: str | None = None
    notes: list[str] = field(default_factory=list)

    def attempt(self, what: str, compute: Callable[[], Any]) -> Any:
        """``compute()``, or None and a note naming ``what`` failed and why."""
        try:
            return compute()
        except Exception as exc:
            self.notes.append(f"{what} failed ({type(exc).__name__}: {str(exc)[:200]})")
            return None


def frame_label(kind: str, rows: int, columns: int, dtype: str | None = None) -> str:
    if kind == "Series":
        return f"Series {dtype} ({rows:,})"
    return f"DataFrame {rows:,}×{columns:,}"


def render(name: str, facts: FrameFacts, limits: Limits) -> Summary:
    what = "rows" if facts.kind == "DataFrame" else "values"
    shape = (
        f"{facts.rows:,} rows × {facts.columns:,} columns"
        if facts.kind == "DataFrame"
        else f"{facts.rows:,} values"
    )
    parts = [f"{facts.library} {facts.kind} `{name}`: {shape}"]
    if facts.dtypes:
        lines = [
            f"- `{column}`: {dtype}" + ("" if nulls is None else f", {count(nulls, 'null')}")
            for column, dtype, nulls in facts.dtypes
        ]
        parts.append("Columns (dtype, nulls):\n" + "\n".join(lines))
    if facts.describe_csv is not None:
        parts.append("describe():\n" + fence(facts.describe_csv.rstrip("\n"), "csv"))
    if facts.head_csv is not None:
        shown = min(facts.rows, limits.rows)
        title = f"First {shown:,} {what}" if shown < facts.rows else f"All {shown:,} {what}"
        parts.append(f"{title} (CSV):\n" + fence(facts.head_csv.rstrip("\n"), "csv"))
    notes = list(facts.notes)
    if facts.rows > limits.rows:
        notes.insert(0, f"first {limits.rows:,} of {facts.rows:,} {what} shown")
    if facts.columns > limits.columns:
        notes.insert(0, f"first {limits.columns:,} of {facts.columns:,} columns shown")
    dtype = facts.dtypes[0][1] if facts.kind == "Series" and facts.dtypes else None
    label = frame_label(facts.kind, facts.rows, facts.columns, dtype)
    return finish(name, label, "\n\n".join(parts), limits, mime_type="text/markdown", notes=notes)


# ---------------------------------------------------------------------- pandas


def _is_pandas(value: object) -> bool:
    return is_instance(value, "pandas", "DataFrame", "Series")


def _pandas_label(value: Any) -> str:
    if value.ndim == 1:
        return frame_label("Series", len(value), 1, str(value.dtype))
    rows, columns = value.shape
    return frame_label("DataFrame", rows, columns)


def _pandas_summary(value: Any, name: str, limits: Limits) -> Summary:
    series = value.ndim == 1
    frame = value.to_frame() if series else value
    rows, columns = frame.shape
    facts = FrameFacts("pandas", "Series" if series else "DataFrame", rows, columns)
    shown = frame.iloc[:, : limits.columns]
    nulls = facts.attempt("counting nulls", lambda: shown.isna().sum()) if rows else None
    facts.dtypes = [
        (str(column), str(dtype), None if nulls is None else int(nulls.iloc[i]))
        for i, (column, dtype) in enumerate(shown.dtypes.items())
    ]
    if rows and columns:
        facts.describe_csv = facts.attempt(
            "describe()", lambda: shown.describe(include="all").to_csv()
        )
    facts.head_csv = facts.attempt("writing rows as CSV", lambda: shown.head(limits.rows).to_csv())
    return render(name, facts, limits)


def _pandas_size(value: Any) -> int | None:
    usage = value.memory_usage(index=True, deep=False)
    return int(usage if value.ndim == 1 else usage.sum())


PANDAS = Summariser("pandas", _is_pandas, _pandas_label, _pandas_summary, _pandas_size)


# ---------------------------------------------------------------------- polars


def _is_polars(value: object) -> bool:
    return is_instance(value, "polars", "DataFrame", "Series")


def _polars_is_series(value: Any) -> bool:
    return is_instance(value, "polars", "Series")


def _polars_label(value: Any) -> str:
    if _polars_is_series(value):
        return frame_label("Series", value.len(), 1, str(value.dtype))
    return frame_label("DataFrame", value.height, value.width)


def _polars_summary(value: Any, name: str, limits: Limits) -> Summary:
    series = _polars_is_series(value)
    frame = value.to_frame() if series else value
    facts = FrameFacts("polars", "Series" if series else "DataFrame", frame.height, frame.width)
    shown = frame.select(frame.columns[: limits.columns])
    nulls = facts.attempt("counting nulls", lambda: shown.null_count().row(0))
    facts.dtypes = [
        (str(column), str(dtype), None if nulls is None else int(nulls[i]))
        for i, (column, dtype) in enumerate(shown.schema.items())
    ]
    if frame.height and frame.width:
        facts.describe_csv = facts.attempt("describe()", lambda: shown.describe().write_csv())
    facts.head_csv = facts.attempt(
        "writing rows as CSV", lambda: shown.head(limits.rows).write_csv()
    )
    return render(name, facts, limits)


def _polars_size(value: Any) -> int | None:
    return int(value.estimated_size())


POLARS = Summariser("polars", _is_polars, _polars_label, _polars_summary, _polars_size)
