"""A form elicitation's fields, and the check of what the user submits.

The requested schema is a flat object of strings, numbers, integers, booleans and
multi-selects. :func:`fields` lists its properties as :class:`FieldSpec` (what a form shows);
:func:`defaults` pre-fills them (spec SHOULD); :func:`validate_content` checks submitted
content against the schema (spec SHOULD): missing required fields, types, enum/oneOf,
numeric bounds, lengths, patterns, formats, multi-select items and counts. A property type
this client does not know is ``unsupported``: never shown as a known control
(:func:`schema_problem`).
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from ...protocol import models as m

__all__ = [
    "FORMATS",
    "FORMAT_HINTS",
    "FieldKind",
    "FieldSpec",
    "defaults",
    "fields",
    "format_problem",
    "schema_problem",
    "validate_content",
    "value_problem",
]

log = logging.getLogger(__name__)

FieldKind = Literal["string", "number", "integer", "boolean", "multi", "unsupported"]

#: The string formats the schema defines (and this module checks).
FORMATS = ("email", "uri", "date", "date-time")
#: How each format reads in a field's description (and a form's placeholder).
FORMAT_HINTS = {
    "email": "email address",
    "uri": "URI, like https://example.com",
    "date": "date, YYYY-MM-DD",
    "date-time": "date and time, YYYY-MM-DDTHH:MM",
}

_MISSING = object()


@dataclass(frozen=True)
class FieldSpec:
    """One property of a requested form schema, as the UI and the validator see it."""

    name: str
    schema: Any  # one of the m.*PropertySchema models, or UnknownElicitationPropertySchema
    required: bool

    @property
    def kind(self) -> FieldKind:
        schema = self.schema
        if isinstance(schema, m.StringPropertySchema):
            return "string"
        if isinstance(schema, m.IntegerPropertySchema):
            return "integer"
        if isinstance(schema, m.NumberPropertySchema):
            return "number"
        if isinstance(schema, m.BooleanPropertySchema):
            return "boolean"
        if isinstance(schema, m.MultiSelectPropertySchema) and not isinstance(
            schema.items, m.UnknownMultiSelectItems
        ):
            return "multi"
        return "unsupported"

    @property
    def title(self) -> str:
        return getattr(self.schema, "title", None) or self.name

    @property
    def description(self) -> str | None:
        return getattr(self.schema, "description", None)

    @property
    def choices(self) -> list[tuple[str, str]]:
        """(value, label) of a single or multi select, in the agent's order; [] otherwise."""
        schema = self.schema
        if isinstance(schema, m.StringPropertySchema):
            if schema.one_of:
                return [(o.const, o.title) for o in schema.one_of]
            return [(v, v) for v in schema.enum or []]
        if isinstance(schema, m.MultiSelectPropertySchema):
            items = schema.items
            if isinstance(items, m.StringMultiSelectItems):
                return [(v, v) for v in items.enum]
            if isinstance(items, m.TitledMultiSelectItems):
                return [(o.const, o.title) for o in items.any_of]
        return []

    @property
    def unsupported_type(self) -> str:
        """The type this client does not know (for messages), e.g. ``color``."""
        schema = self.schema
        if isinstance(schema, m.MultiSelectPropertySchema):
            return f"array of {getattr(schema.items, 'type', None) or 'unknown items'}"
        return str(getattr(schema, "type", None) or "missing")

    def describe(self) -> str:
        """What the field takes, in words: "text, 1–40 characters", "whole number 0–150"."""
        schema, kind = self.schema, self.kind
        if kind == "unsupported":
            return f"type `{self.unsupported_type}`, which acp_notebook cannot show"
        if kind == "boolean":
            text = "yes/no"
            if schema.default is not None:
                text += f" (default: {'yes' if schema.default else 'no'})"
            return text
        if kind == "multi":
            labels = ", ".join(label for _value, label in self.choices)
            return f"choose {_count_range(schema.min_items, schema.max_items)}of: {labels}"
        if kind in ("integer", "number"):
            noun = "whole number" if kind == "integer" else "number"
            return noun + _bounds(schema.minimum, schema.maximum)
        if self.choices:
            return "one of: " + ", ".join(label for _value, label in self.choices)
        parts = ["text"]
        if schema.min_length is not None or schema.max_length is not None:
            parts.append(_length_range(schema.min_length, schema.max_length))
        if schema.format:
            parts.append(FORMAT_HINTS.get(str(schema.format), f"format {schema.format}"))
        if schema.pattern:
            parts.append(f"matching `{schema.pattern}`")
        return ", ".join(parts)


def _bounds(low: float | None, high: float | None) -> str:
    if low is not None and high is not None:
        return f" {_num(low)}–{_num(high)}"
    if low is not None:
        return f" ≥ {_num(low)}"
    if high is not None:
        return f" ≤ {_num(high)}"
    return ""


def _num(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def _length_range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"{low}–{high} characters"
    if low is not None:
        return f"at least {low} character{'s' * (low != 1)}"
    return f"at most {high} character{'s' * (high != 1)}"


def _count_range(low: int | None, high: int | None) -> str:
    if low is not None and high is not None:
        return f"{low}–{high} " if low != high else f"{low} "
    if low:
        return f"at least {low} "
    if high is not None:
        return f"at most {high} "
    return "any "


def fields(schema: m.ElicitationSchema) -> list[FieldSpec]:
    """The properties of ``schema`` in the agent's order."""
    required = set(schema.required or [])
    return [FieldSpec(name, prop, name in required) for name, prop in schema.properties.items()]


def schema_problem(schema: m.ElicitationSchema) -> str | None:
    """Why this client cannot show ``schema`` as a form it can submit, or None."""
    if schema.type != "object":
        return f"the form schema has type `{schema.type}`, not `object`"
    unsupported = [f for f in fields(schema) if f.kind == "unsupported"]
    if unsupported:
        listed = ", ".join(f"`{f.name}` ({f.unsupported_type})" for f in unsupported)
        return f"acp_notebook cannot show the field type of {listed}"
    return None


def defaults(schema: m.ElicitationSchema) -> dict[str, Any]:
    """The values a form starts with: each known field's ``default`` (spec SHOULD pre-fill)."""
    values: dict[str, Any] = {}
    for spec in fields(schema):
        default = getattr(spec.schema, "default", None)
        if spec.kind != "unsupported" and default is not None:
            values[spec.name] = list(default) if isinstance(default, list) else default
    return values


# -- validation (spec SHOULD: check submitted content against the requested schema)

_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s.]+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATE_TIME = re.compile(
    r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?([Zz]|[+-]\d{2}:?\d{2})?$"
)
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def format_problem(fmt: str, value: str) -> str | None:
    """Why ``value`` is not a valid ``fmt`` (email, uri, date, date-time), or None."""
    if fmt == "email":
        return None if _EMAIL.match(value) else "Enter an email address like name@example.com."
    if fmt == "uri":
        if _SCHEME.match(value) and len(value) > value.index(":") + 1 and " " not in value:
            return None
        return "Enter a full URI, like https://example.com/page."
    if fmt == "date":
        try:
            if _DATE.match(value):
                date.fromisoformat(value)
                return None
        except ValueError:
            pass
        return "Enter a date as YYYY-MM-DD."
    if fmt == "date-time":
        try:
            if _DATE_TIME.match(value):
                text = value[:-1] + "+00:00" if value[-1] in "Zz" else value
                datetime.fromisoformat(text.replace("t", "T"))
                return None
        except ValueError:
            pass
        return "Enter a date and time as YYYY-MM-DDTHH:MM (seconds and offset optional)."
    return None  # a format this schema version does not define: not checked


def _is_int(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, float) and value.is_integer())


def value_problem(spec: FieldSpec, value: Any) -> str | None:
    """Why ``value`` does not fit the field, or None (``value`` is present)."""
    schema, kind = spec.schema, spec.kind
    if kind == "unsupported":
        return f"acp_notebook cannot fill a field of type `{spec.unsupported_type}`."
    if kind == "boolean":
        return None if isinstance(value, bool) else "Must be yes or no (true or false)."
    if kind in ("integer", "number"):
        if kind == "integer" and not _is_int(value):
            return "Enter a whole number."
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
        ):
            return "Enter a number."
        low, high = schema.minimum, schema.maximum
        if (low is not None and value < low) or (high is not None and value > high):
            if low is not None and high is not None:
                return f"Must be between {_num(low)} and {_num(high)}."
            return (
                f"Must be at least {_num(low)}."
                if low is not None
                else f"Must be at most {_num(high)}."
            )
        return None
    if kind == "multi":
        if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
            return "Must be a list of choices."
        allowed = {v for v, _label in spec.choices}
        unknown = [v for v in value if v not in allowed]
        if unknown:
            return f"Not a choice: {', '.join(unknown)}."
        if len(set(value)) != len(value):
            return "Choose each option only once."
        low, high = schema.min_items, schema.max_items
        if low is not None and len(value) < low:
            return f"Choose at least {low}."
        if high is not None and len(value) > high:
            return f"Choose at most {high}."
        return None
    # string
    if not isinstance(value, str):
        return "Must be text."
    choices = spec.choices
    if choices:
        if value not in {v for v, _label in choices}:
            return "Choose one of: " + ", ".join(label for _v, label in choices) + "."
        return None
    if schema.min_length is not None and len(value) < schema.min_length:
        n = schema.min_length
        return (
            "Required."
            if n == 1 and not value
            else f"Enter at least {n} character{'s' * (n != 1)}."
        )
    if schema.max_length is not None and len(value) > schema.max_length:
        n = schema.max_length
        return f"Enter at most {n} character{'s' * (n != 1)}."
    if schema.pattern:
        try:
            # JSON Schema patterns are unanchored (ECMA-262); Python's syntax is close enough.
            if re.search(schema.pattern, value) is None:
                return f"Must match the pattern {schema.pattern}."
        except re.error:
            log.info("elicitation: the agent's pattern %r is not a valid regex", schema.pattern)
    if schema.format:
        return format_problem(str(schema.format), value)
    return None


def validate_content(
    schema: m.ElicitationSchema, content: Mapping[str, Any] | None
) -> dict[str, str]:
    """Check submitted form ``content`` against ``schema``: field name → what is wrong
    (empty = valid). Missing required fields, types, enum/oneOf, numeric bounds, lengths,
    patterns, formats, multi-select items and counts; fields the agent did not ask for."""
    content = dict(content or {})
    specs = {spec.name: spec for spec in fields(schema)}
    errors: dict[str, str] = {}
    for name in content:
        if name not in specs:
            errors[name] = "The agent did not ask for this field."
    for name in schema.required or []:
        if name not in specs:
            errors[name] = "Required, but the agent did not describe this field."
    for name, spec in specs.items():
        value = content.get(name, _MISSING)
        if value is _MISSING or value is None:
            if spec.required:
                errors[name] = "Required."
            continue
        problem = value_problem(spec, value)
        if problem is not None:
            errors[name] = problem
    return errors
