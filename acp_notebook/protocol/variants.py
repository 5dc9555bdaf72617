"""One member of a discriminated union, validated without making the union.

Making a union makes every member class and builds all their validators: for
``SessionUpdate``, fourteen variants and the models they hold (tool calls, plans, config
options…), about 60 classes, when a session's first updates are a list of commands and a
few text chunks. :func:`member` validates ``data`` by the one class its discriminator
names (``UNION_MEMBERS`` in the generated models: names only, nothing is made to read it)
and leaves everything else — an absent, unknown or non-string discriminator, data that
does not validate as that class — to the union's lenient parse (``parse``, with its
repairs and its ``Unknown*`` member), so the result is the one that parse gives.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from . import models as m
from .modelbase import AcpModel

__all__ = ["member"]


def member(union: str, data: Any) -> AcpModel | None:
    """The member of the generated union ``union`` (its name, e.g. ``"SessionUpdate"``)
    that ``data``'s discriminator selects, validated alone; None when ``data`` is not an
    object with a known discriminator value, or does not validate as that member as it
    stands (the union's lenient parse decides those)."""
    prop, members = m.UNION_MEMBERS[union]
    if type(data) is not dict:
        return None
    tag = data.get(prop)
    if type(tag) is not str:
        return None
    name = members.get(tag)
    if name is None:
        return None
    cls: type[AcpModel] = getattr(m, name)
    try:
        return cls.__pydantic_validator__.validate_python(data)
    except ValidationError:
        return None
