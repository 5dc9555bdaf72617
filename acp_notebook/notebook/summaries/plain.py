"""Strings, numbers, plain containers and everything no other summariser claims.

A string is given as itself; a small plain container of JSON values as JSON (agents
read it best); anything else as its bounded ``repr``.
"""

from __future__ import annotations

import json
import math

from .model import Limits, Summary, count, cut_text, finish
from .reprs import BoundedRepr

_CONTAINERS = (list, tuple, dict, set, frozenset)
_JSON_SCALARS = (str, int, float, bool, type(None))


def label(value: object) -> str:
    kind = type(value)
    if kind is str:
        return f"str ({count(len(value), 'character')})"  # type: ignore[arg-type]
    if kind is dict:
        return f"dict ({count(len(value), 'key')})"  # type: ignore[arg-type]
    if kind in _CONTAINERS:
        return f"{kind.__name__} ({count(len(value), 'item')})"  # type: ignore[arg-type]
    return kind.__name__


def summarise(value: object, name: str, limits: Limits) -> Summary:
    if type(value) is str:
        text, note = cut_text(value, limits.chars)
        return Summary(
            name, label(value), text, "text/plain", None, (f"{note} shown",) if note else ()
        )
    if type(value) in (list, tuple, dict) and _json_ready(value, limits.depth, limits):
        text = json.dumps(value, indent=2, ensure_ascii=False)
        return finish(name, label(value), text, limits, mime_type="application/json")
    bounded = BoundedRepr(limits)
    text = bounded(value)
    return finish(name, label(value), text, limits, notes=bounded.notes)


def _json_ready(value: object, depth: int, limits: Limits) -> bool:
    """Only JSON values (string keys), within the item and depth limits: JSON loses nothing."""
    kind = type(value)
    if kind in _JSON_SCALARS:
        return kind is not float or math.isfinite(value)  # type: ignore[arg-type]  # NaN, inf are not JSON
    if depth <= 0 or kind not in (list, tuple, dict) or len(value) > limits.items:  # type: ignore[arg-type]
        return False
    if kind is dict:
        return all(
            type(k) is str and _json_ready(v, depth - 1, limits)
            for k, v in value.items()  # type: ignore[attr-defined]
        )
    return all(_json_ready(item, depth - 1, limits) for item in value)  # type: ignore[attr-defined]
