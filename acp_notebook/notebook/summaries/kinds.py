"""The shape every summariser has, and how one recognises a type without importing it.

pandas, polars, numpy and matplotlib are never imported here: a value can only be a
pandas DataFrame if pandas is already in ``sys.modules``, so each check looks there.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .model import Limits, Summary


@dataclass(frozen=True)
class Summariser:
    """One kind of value: how to recognise it, label it, size it and summarise it."""

    kind: str
    matches: Callable[[object], bool]
    label: Callable[[object], str]
    summarise: Callable[[object, str, Limits], Summary]
    #: Bytes the value holds, where that is cheap to know (arrays, frames).
    size: Callable[[object], int | None] = lambda value: None


def loaded_class(module: str, name: str) -> type | None:
    """``module.name`` if that module is already imported (and it is a class)."""
    found: Any = getattr(sys.modules.get(module), name, None)
    return found if isinstance(found, type) else None


def is_instance(value: object, module: str, *names: str) -> bool:
    """``isinstance(value, module.name)`` for any of ``names``, never importing ``module``."""
    classes = tuple(c for c in (loaded_class(module, n) for n in names) if c is not None)
    return bool(classes) and isinstance(value, classes)
