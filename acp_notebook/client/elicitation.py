"""Elicitation: the agent asks the user for input (`elicitation/create`, stable in v1).

Two modes, each advertised by the client (``clientCapabilities.elicitation.form`` /
``.url``):

* **form** — a flat object schema of strings, numbers, integers, booleans and
  multi-selects; the user fills it in, reviews it and sends it (``accept`` + ``content``),
  or declines, or cancels;
* **url** — the agent names a URL the user should open (a sign-in page, a device code).
  ``accept`` means only that the user consented to open it; the agent may later send
  ``elicitation/complete`` when the flow it started is done.

Every request of a session waits in an :class:`ElicitationBroker` until a person, the
headless rule or a cancellation decides it — the same shape as the permission broker.
Rules it keeps:

* never accepted without a person: with no UI attached a request is **declined** and the
  transcript says why (spec: the client MUST NOT make up the user's answer);
* a mode or a property type this client does not know is never shown as a known control:
  an unknown mode is declined at once, a form with an unknown field type can only be
  declined or cancelled;
* submitted content is checked against the requested schema (:func:`validate_content`,
  spec SHOULD) and forms start from the schema's defaults (:func:`defaults`, spec SHOULD);
* on turn cancel every pending request is answered ``cancel`` (treated like permissions);
* ``elicitation/complete`` marks a known URL request completed; unknown or already
  completed ids are ignored (spec);
* values are recorded for the transcript as given, except fields named like a secret
  (``password``, ``secret``, ``token``, ``key``), which are shown redacted.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Literal
from urllib.parse import urlsplit

import anyio

from ..protocol import models as m
from ..protocol.errors import INVALID_PARAMS, RpcError
from .pending import Broker
from .permissions import _CANCEL_REASONS

log = logging.getLogger(__name__)

Mode = Literal["form", "url", "unknown"]
State = Literal["pending", "accepted", "declined", "cancelled"]
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
#: Shown in place of a secret-looking field's value in transcripts.
REDACTED = "(redacted)"
#: Why a request was declined without asking anyone, when no UI is attached.
HEADLESS = "no one to ask: headless run"

_MISSING = object()


# ---------------------------------------------------------------------------- fields


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


# ---------------------------------------------------------------------------- validation

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


# ---------------------------------------------------------------------------- recording

_SECRET_WORDS = re.compile(r"pass(word|wd|phrase)|secret|token|api_?key|private_?key", re.I)


def is_secret_name(name: str) -> bool:
    """Field names whose values the transcript never shows: password, secret, token, key."""
    words = {w.lower() for w in re.findall(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+", name)}
    return bool(_SECRET_WORDS.search(name)) or bool(words & {"key", "pwd", "pin"})


def recorded(content: Mapping[str, Any] | None) -> dict[str, Any]:
    """``content`` as transcripts show it: secret-looking fields redacted."""
    return {k: REDACTED if is_secret_name(k) else v for k, v in (content or {}).items()}


def format_values(content: Mapping[str, Any] | None) -> str:
    """``{name: "Ada", age: 36}``: the recorded values on one line."""
    parts = []
    for key, value in recorded(content).items():
        shown = value if value == REDACTED else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}: {shown}")
    return "{" + ", ".join(parts) + "}"


def split_url(url: str) -> tuple[str, str, str]:
    """(before the host, the host, after it): what a UI highlights. The host is the one a
    browser would go to (after any ``user@`` part); ("", "", url) when there is none."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return "", "", url
    if not host:
        return "", "", url
    netloc_at = url.find(parts.netloc)
    start = url.lower().find(host, netloc_at + parts.netloc.rfind("@") + 1)
    if netloc_at < 0 or start < 0:
        return "", "", url
    return url[:start], url[start : start + len(host)], url[start + len(host) :]


def url_host(url: str) -> str | None:
    return split_url(url)[1] or None


def _url_problem(url: str) -> str | None:
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme not in ("http", "https") or url_host(url) is None:
        return "the URL is not a web address (http or https), so acp_notebook will not offer to open it"
    return None


# ---------------------------------------------------------------------------- requests


@dataclass
class ElicitationRequest:
    """One `elicitation/create` of the agent: pending, then decided (accepted / declined /
    cancelled) with who decided and, for forms, the values sent."""

    key: str
    mode: Mode
    message: str
    #: The agent that asks (spec: identify the requesting agent).
    agent: str = ""
    #: The mode as received (differs from ``mode`` only for unknown modes).
    raw_mode: str | None = None
    schema: m.ElicitationSchema | None = None
    url: str | None = None
    elicitation_id: str | None = None
    session_id: str | None = None
    tool_call_id: str | None = None
    request_id: Any = None
    #: The params as received (spec: preserve unknown modes' raw payload).
    raw: dict[str, Any] = field(default_factory=dict)
    #: Why it cannot be accepted here (unknown mode or field type, unsafe URL), or None.
    problem: str | None = None
    state: State = "pending"
    content: dict[str, Any] | None = None
    #: "user", "headless", "client" (declined by this client's rules), "cancel", …
    decided_by: str | None = None
    reason: str | None = None
    #: URL mode: the agent sent `elicitation/complete` for it.
    completed: bool = False
    _decided: anyio.Event = field(default_factory=anyio.Event, repr=False)

    @property
    def pending(self) -> bool:
        return self.state == "pending"

    @property
    def can_accept(self) -> bool:
        return self.problem is None and self.mode != "unknown"

    @property
    def host(self) -> str | None:
        return url_host(self.url) if self.url else None

    @property
    def fields(self) -> list[FieldSpec]:
        return fields(self.schema) if self.schema is not None else []

    def response(self) -> dict[str, Any]:
        """The `elicitation/create` result for the agent."""
        if self.state == "accepted":
            if self.mode == "form":
                return m.AcceptElicitationResponse(content=self.content or {}).to_wire()
            return m.AcceptElicitationResponse().to_wire()
        if self.state == "declined":
            return m.DeclineElicitationResponse().to_wire()
        return m.CancelElicitationResponse().to_wire()

    def describe(self) -> str:
        """The decision in words: "accepted by user", "declined (no one to ask: headless run)"."""
        if self.state == "pending":
            return "waiting for an answer"
        if self.state == "accepted":
            text = f"accepted by {self.decided_by}"
            return text + " (consented to open the URL)" if self.mode == "url" else text
        if self.state == "declined":
            if self.decided_by == "user":
                return "declined by user"
            if self.decided_by == "client":
                return f"declined automatically ({self.reason})"
            return f"declined ({self.reason or self.decided_by})"
        if self.decided_by == "user":
            return "cancelled by user"
        reason = _CANCEL_REASONS.get(self.decided_by or "cancel", self.decided_by)
        return f"cancelled ({reason})"

    def outcome(self) -> str:
        """:meth:`describe` plus what was sent or what followed (values redacted where secret)."""
        text = self.describe()
        if self.state == "accepted" and self.mode == "form":
            text += ": " + format_values(self.content)
        if self.state == "accepted" and self.mode == "url":
            text += (
                " · the agent reported the flow complete"
                if self.completed
                else " · not reported complete yet"
            )
        return text


class InvalidContent(ValueError):
    """Form content that does not fit the requested schema (``errors``: field → problem)."""

    def __init__(self, errors: dict[str, str]) -> None:
        self.errors = errors
        super().__init__("; ".join(f"{k or 'form'}: {v}" for k, v in errors.items()))


Asker = Callable[[ElicitationRequest], Awaitable[None]]


def _scope(params: dict[str, Any]) -> dict[str, Any]:
    session_id = params.get("sessionId")
    tool_call_id = params.get("toolCallId")
    return {
        "session_id": session_id if isinstance(session_id, str) else None,
        "tool_call_id": tool_call_id if isinstance(tool_call_id, str) else None,
        "request_id": params.get("requestId"),
    }


class ElicitationBroker(Broker[ElicitationRequest]):
    """Pending elicitations of one session (or of a connection, for request-scoped ones).

    ``on_change(request)`` is called whenever a request appears or changes. With an
    ``asker`` coroutine set, it is awaited for each request (a terminal prompt); else,
    when ``interactive`` (a bool, or a function read at each request) is true, the request
    waits for :meth:`accept` / :meth:`decline` / :meth:`cancel` (the notebook's buttons);
    else it is declined, and the transcript says that no one was there to ask.
    """

    prefix = "elicit"

    def __init__(
        self,
        *,
        interactive: bool | Callable[[], bool] = False,
        asker: Asker | None = None,
        on_change: Callable[[ElicitationRequest], None] | None = None,
    ) -> None:
        super().__init__(asker=asker, on_change=on_change)
        self.interactive = interactive

    def open(self, params: dict[str, Any], *, agent: str = "") -> ElicitationRequest:
        """Register the request in ``params`` (pending); :meth:`decide` waits for its answer.

        Raises ``RpcError(-32602)`` for a form or URL request that lacks what its mode needs.
        """
        parsed = m.parse(m.CreateElicitationRequest, params)
        key = self._next_key()
        scope = _scope(params)
        if isinstance(parsed, m.CreateElicitationFormRequest):
            request = ElicitationRequest(
                key, "form", parsed.message, agent, "form", schema=parsed.requested_schema,
                raw=dict(params), problem=schema_problem(parsed.requested_schema), **scope,
            )  # fmt: skip
        elif isinstance(parsed, m.CreateElicitationUrlRequest):
            request = ElicitationRequest(
                key, "url", parsed.message, agent, "url", url=parsed.url,
                elicitation_id=parsed.elicitation_id, raw=dict(params),
                problem=_url_problem(parsed.url), **scope,
            )  # fmt: skip
        else:
            mode = params.get("mode")
            if mode in ("form", "url"):
                needs = "requestedSchema" if mode == "form" else "elicitationId and url"
                raise RpcError(
                    INVALID_PARAMS,
                    f"The elicitation/create request in mode `{mode}` is malformed (it needs "
                    f"message and {needs}).",
                )
            message = params.get("message")
            request = ElicitationRequest(
                key, "unknown", message if isinstance(message, str) else "", agent,
                mode if isinstance(mode, str) else None, raw=dict(params),
                problem=f"the mode `{mode}` is not one acp_notebook knows", **scope,
            )  # fmt: skip
        self.requests[key] = request
        return request

    async def _decide(self, request: ElicitationRequest) -> None:
        if not request.pending:
            return
        if request.mode == "unknown":
            # spec: an unknown mode MUST NOT be rendered as a known one.
            self.decline(request.key, by="client", reason=request.problem)
        elif self.asker is not None:
            await self.asker(request)
        elif not self._interactive():
            # Never accepted without a person; a decline tells the agent to go on without.
            self.decline(request.key, by="headless", reason=HEADLESS)

    def _interactive(self) -> bool:
        return self.interactive() if callable(self.interactive) else self.interactive

    # ------------------------------------------------------------------ decisions

    def accept(
        self, key: str, content: Mapping[str, Any] | None = None, *, by: str = "user"
    ) -> bool:
        """Accept a pending request: a form with ``content`` (validated against its schema;
        :class:`InvalidContent` if it does not fit), a URL request with no content (the user
        consented to open it). False if the request is unknown or already decided."""
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        if not request.can_accept:
            raise InvalidContent({"": f"This request cannot be accepted: {request.problem}."})
        values: dict[str, Any] | None = None
        if request.mode == "form":
            assert request.schema is not None
            values = dict(content or {})
            errors = validate_content(request.schema, values)
            if errors:
                raise InvalidContent(errors)
        elif content:
            raise InvalidContent({"": "A URL request is accepted without content."})
        request.state = "accepted"
        request.content = values
        request.decided_by = by
        request._decided.set()
        self._changed(request)
        return True

    def decline(self, key: str, *, by: str = "user", reason: str | None = None) -> bool:
        """Answer ``decline``: the user does not want to give this input."""
        return self._end(key, "declined", by, reason)

    def cancel(self, key: str, *, by: str = "user") -> bool:
        """Answer ``cancel``: dismissed without a choice (or the turn was cancelled)."""
        return self._end(key, "cancelled", by, None)

    def complete(self, elicitation_id: str) -> bool:
        """`elicitation/complete`: mark the URL request with this id completed. False (and
        nothing else) for unknown or already completed ids (spec: ignore them)."""
        for request in self.requests.values():
            if request.mode == "url" and request.elicitation_id == elicitation_id:
                if request.completed:
                    return False
                request.completed = True
                self._changed(request)
                return True
        return False

    def _end(self, key: str, state: State, by: str, reason: str | None) -> bool:
        request = self.requests.get(key)
        if request is None or not request.pending:
            return False
        request.state = state
        request.decided_by = by
        request.reason = reason
        request._decided.set()
        self._changed(request)
        return True
