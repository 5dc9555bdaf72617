"""numpy arrays: shape, dtype, statistics of numeric data, and a bounded printout."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from .kinds import Summariser, is_instance
from .model import Limits, Summary, fence, finish


def _is_array(value: object) -> bool:
    return is_instance(value, "numpy", "ndarray")


def _label(value: Any) -> str:
    return f"ndarray {value.dtype} {tuple(value.shape)}"


def _statistics(np: Any, array: Any) -> list[str]:
    """min, max, mean, std (ignoring NaN) and the NaN count, for real numbers."""
    if array.size == 0 or not (
        np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)
    ):
        return []
    lines = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        if np.issubdtype(array.dtype, np.floating):
            nan = int(np.isnan(array).sum())
            lines.append(f"NaN count: {nan:,}")
            if nan == array.size:
                return lines
        for stat in ("min", "max", "mean", "std"):
            lines.append(f"{stat}: {float(getattr(np, 'nan' + stat)(array)):.6g}")
    return lines


def _summary(value: Any, name: str, limits: Limits) -> Summary:
    np = sys.modules["numpy"]
    notes: list[str] = []
    parts = [f"numpy ndarray `{name}`: shape {tuple(value.shape)}, dtype {value.dtype}"]
    try:
        stats = _statistics(np, value)
    except Exception as exc:
        stats = []
        notes.append(f"statistics failed ({type(exc).__name__})")
    if stats:
        parts.append("Statistics:\n" + "\n".join(f"- {line}" for line in stats))
    try:
        printed = np.array2string(
            value, threshold=limits.array_items, edgeitems=3, max_line_width=120
        )
    except Exception as exc:
        printed = f"<the values could not be printed: {type(exc).__name__}>"
    if value.size > limits.array_items:
        notes.append(f"the printout shows the edges of {value.size:,} elements (… marks the rest)")
    parts.append("Values:\n" + fence(printed))
    return finish(name, _label(value), "\n\n".join(parts), limits, notes=notes)


def _size(value: Any) -> int | None:
    return int(value.nbytes)


ARRAYS = Summariser("numpy", _is_array, _label, _summary, _size)
