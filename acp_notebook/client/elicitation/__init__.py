"""Elicitation: the agent asks the user for input (`elicitation/create`, stable in v1).

Two modes, each advertised by the client (``clientCapabilities.elicitation.form`` /
``.url``):

* **form** — a flat object schema of strings, numbers, integers, booleans and
  multi-selects; the user fills it in, reviews it and sends it (``accept`` + ``content``),
  or declines, or cancels;
* **url** — the agent names a URL the user should open (a sign-in page, a device code).
  ``accept`` means only that the user consented to open it; the agent may later send
  ``elicitation/complete`` when the flow it started is done.

One module per concept:

* :mod:`.form` — a form's fields and the check of submitted content (spec SHOULD:
  validate against the schema, pre-fill defaults);
* :mod:`.redaction` — values recorded as given, except fields named like a secret;
* :mod:`.url` — the host a URL really visits, and which URLs are offered at all;
* :mod:`.request` — one request: its scope, its decision, how it reads;
* :mod:`.broker` — requests wait until a person, the headless rule or a cancellation
  decides them.

Rules they keep together:

* never accepted without a person: with no UI attached a request is **declined** and the
  transcript says why (spec: the client MUST NOT make up the user's answer);
* a mode or a property type this client does not know is never shown as a known control:
  an unknown mode is declined at once, a form with an unknown field type can only be
  declined or cancelled;
* on turn cancel every pending request is answered ``cancel`` (treated like permissions);
* ``elicitation/complete`` marks a known URL request completed; unknown or already
  completed ids are ignored (spec).
"""

from __future__ import annotations

from .broker import HEADLESS, Asker, ElicitationBroker, InvalidContent
from .form import (
    FORMAT_HINTS,
    FORMATS,
    FieldKind,
    FieldSpec,
    defaults,
    fields,
    format_problem,
    schema_problem,
    validate_content,
    value_problem,
)
from .redaction import REDACTED, format_values, is_secret_name, recorded
from .request import ElicitationRequest, Mode, Scope, State, scope_of
from .url import split_url, url_host, url_problem

__all__ = [
    "FORMATS",
    "FORMAT_HINTS",
    "HEADLESS",
    "REDACTED",
    "Asker",
    "ElicitationBroker",
    "ElicitationRequest",
    "FieldKind",
    "FieldSpec",
    "InvalidContent",
    "Mode",
    "Scope",
    "State",
    "defaults",
    "fields",
    "format_problem",
    "format_values",
    "is_secret_name",
    "recorded",
    "schema_problem",
    "scope_of",
    "split_url",
    "url_host",
    "url_problem",
    "validate_content",
    "value_problem",
]
