"""Check whole JSON-RPC messages against the ACP v1 JSON Schema shipped in this package.

For users (the protocol inspector, ``schema_errors`` on a saved trace) and the tests. The checks use
``jsonschema`` (4.0 or newer), which every Jupyter installation has through ``nbformat``; it is
imported on the first check (which can take seconds where its optional format checkers are
installed, as JupyterLab's dependencies do), and where it is missing a check raises
:class:`ValidatorUnavailable` (:func:`validator_available` asks first). The schema type of a message is picked from the schema
itself: the JSON-RPC envelope types (``ClientRequest``, ``AgentResponse``, …) list, per sender,
which ``$defs`` type each method's params or result must be, and ``x-method`` names the method of
each.

Each ``$defs`` type's validator is made once and cached. A discriminated union (every branch
fixes the same property to a constant, as ``SessionUpdate`` does with ``sessionUpdate``) is
checked against the one branch the message names instead of all of them: the same verdict, as the
other branches cannot match, for a fraction of the work.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

__all__ = [
    "SCHEMA_PATH",
    "ValidatorUnavailable",
    "load_schema",
    "method_types",
    "payload_errors",
    "schema_errors",
    "validator_available",
]

SCHEMA_PATH = Path(__file__).parent / "schema" / "v1" / "schema.json"


class ValidatorUnavailable(RuntimeError):
    """Raised by a check when the ``jsonschema`` package (4.0 or newer) cannot be imported."""

    def __init__(self) -> None:
        super().__init__(
            "Checking messages against the ACP schema needs the jsonschema package (4.0 or newer),"
            " which is not installed here: pip install jsonschema."
        )


Sender = Literal["client", "agent"]
_KIND = Literal["request", "notification", "result"]
_MAX_TEXT = 300  # error messages embed the offending value: keep them readable


@lru_cache(maxsize=1)
def load_schema() -> dict[str, Any]:
    """The vendored schema (parsed once)."""
    schema: dict[str, Any] = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    return schema


def _ref(node: dict[str, Any]) -> str | None:
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    all_of = node.get("allOf") or []
    return _ref(all_of[0]) if len(all_of) == 1 else None


@lru_cache(maxsize=1)
def _tables() -> dict[tuple[str, str], dict[str, str]]:
    """(sender, kind) -> method -> $defs name, read from the schema's envelope types."""
    defs = load_schema()["$defs"]

    def listed(envelope: str, prop: str) -> dict[str, str]:
        node = defs[envelope]
        if "anyOf" in node:  # responses: Result | Error
            node = node["anyOf"][0]
        branches = node["properties"][prop]["anyOf"]
        if "anyOf" in branches[0]:  # params: (one of the types) | null
            branches = branches[0]["anyOf"]
        found: dict[str, str] = {}
        for branch in branches:
            name = _ref(branch)
            method = defs[name].get("x-method") if name else None
            if name and method:
                found[str(method)] = name
        return found

    protocol = {
        str(node["x-method"]): name
        for name, node in defs.items()
        if node.get("x-side") == "protocol"
    }
    tables: dict[tuple[str, str], dict[str, str]] = {}
    for sender, envelope in (("client", "Client"), ("agent", "Agent")):
        tables[(sender, "request")] = listed(f"{envelope}Request", "params")
        tables[(sender, "notification")] = {
            **listed(f"{envelope}Notification", "params"),
            **protocol,
        }
        tables[(sender, "result")] = listed(f"{envelope}Response", "result")
    return tables


def method_types(sender: Sender, kind: _KIND) -> dict[str, str]:
    """Method -> ``$defs`` type name of what ``sender`` sends: request params, notification
    params, or results (keyed by the method of the request answered)."""
    return dict(_tables()[(sender, kind)])


def validator_available() -> bool:
    """Whether the checks can run here (``jsonschema`` 4.0 or newer is importable)."""
    try:
        _validator_class()
    except ValidatorUnavailable:
        return False
    return True


@cache
def _validator_class() -> Any:
    """Draft 2020-12 with the discriminated-union shortcut; made once."""
    try:
        from jsonschema import Draft202012Validator
        from jsonschema.validators import extend
    except ImportError:
        raise ValidatorUnavailable() from None
    standard = Draft202012Validator.VALIDATORS

    def shortcut(keyword: str) -> Any:
        def check(validator: Any, branches: Any, instance: Any, schema: Any) -> Iterator[Any]:
            index = _named_branch(branches, instance)
            if index is None:
                yield from standard[keyword](validator, branches, instance, schema)
            else:
                yield from validator.descend(instance, branches[index], schema_path=index)

        return check

    return extend(Draft202012Validator, {"oneOf": shortcut("oneOf"), "anyOf": shortcut("anyOf")})


@lru_cache(maxsize=1)
def _inlined_defs() -> dict[str, Any]:
    """The ``$defs`` with every ``$ref`` replaced by the definition it names (shared, not copied).

    A validator then never resolves a reference, which makes checks about twice as fast. The same
    verdicts: a ``$ref`` with sibling keywords becomes an ``allOf`` entry, as 2020-12 applies both.
    """
    defs = load_schema()["$defs"]
    done: dict[str, dict[str, Any]] = {}

    def definition(name: str) -> dict[str, Any]:
        if name not in done:
            done[name] = {}  # registered first: a recursive type would point to itself
            done[name].update(inline(defs[name]))
        return done[name]

    def inline(node: Any) -> Any:
        if isinstance(node, list):
            return [inline(item) for item in node]
        if not isinstance(node, dict):
            return node
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DATA_KEYWORDS:
                out[key] = value
            elif key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: inline(sub) for name, sub in value.items()}
            elif key != "$ref":
                out[key] = inline(value)
        if "$ref" not in node:
            return out
        target = definition(str(node["$ref"]).rsplit("/", 1)[-1])
        if not out:
            return target
        out["allOf"] = [*out.get("allOf", []), target]
        return out

    return {name: definition(name) for name in defs}


# Keywords whose values are JSON data, not schemas: never rewritten.
_DATA_KEYWORDS = frozenset({"const", "enum", "default", "examples"})
# Keywords whose values map names (which may be "default", "enum", …) to schemas.
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas", "$defs"})


#: id(branch list) -> (the list itself, what _discriminator found); the list is kept so that its
#: id cannot be reused by another object.
_TAGS: dict[int, tuple[Any, tuple[str, dict[str, int]] | None]] = {}


def _named_branch(branches: Any, instance: Any) -> int | None:
    """The index of the only branch that can match ``instance``, when every branch fixes the same
    property to a distinct string constant and ``instance`` names one of them; else None."""
    if not isinstance(instance, dict) or not isinstance(branches, list):
        return None
    entry = _TAGS.get(id(branches))
    if entry is None or entry[0] is not branches:
        entry = _TAGS[id(branches)] = (branches, _discriminator(branches))
    found = entry[1]
    if found is None:
        return None
    prop, indices = found
    value = instance.get(prop)
    return indices.get(value) if isinstance(value, str) else None


def _discriminator(branches: list[Any]) -> tuple[str, dict[str, int]] | None:
    """(property, constant -> branch index) if every branch fixes that one property."""
    prop: str | None = None
    indices: dict[str, int] = {}
    for index, branch in enumerate(branches):
        props = branch.get("properties") if isinstance(branch, dict) else None
        fixed = [
            (name, sub["const"])
            for name, sub in (props or {}).items()
            if isinstance(sub, dict) and "const" in sub
        ]
        if len(fixed) != 1:
            return None
        name, const = fixed[0]
        if (prop is not None and name != prop) or not isinstance(const, str) or const in indices:
            return None
        prop = name
        indices[const] = index
    return (prop, indices) if prop is not None else None


@cache
def _validator(def_name: str) -> Validator:
    validator: Validator = _validator_class()(_inlined_defs()[def_name])
    return validator


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_TEXT else text[: _MAX_TEXT - 1] + "…"


def _where(prefix: str, path: Any) -> str:
    text = prefix
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text or "<value>"


def payload_errors(payload: Any, def_name: str, *, where: str = "") -> list[str]:
    """Errors of ``payload`` against ``$defs/<def_name>`` (empty list = conforms).

    Raises :class:`ValidatorUnavailable` when ``jsonschema`` is not installed.
    """
    if def_name not in load_schema()["$defs"]:
        return [f"{where or '<payload>'}: no type {def_name!r} in the schema"]
    found = []
    for error in sorted(_validator(def_name).iter_errors(payload), key=lambda e: list(e.path)):
        path, message = _describe(error)
        found.append(f"{_where(where, path)}: {_clip(message)} [{def_name}]")
    return found


def _describe(error: Any) -> tuple[Any, str]:
    """(path, message) of the most useful error inside a oneOf/anyOf failure.

    jsonschema's own message quotes the whole value; instead report the failure inside the branch
    the discriminator selects, or the list of allowed constants.
    """
    if not error.context or error.validator not in ("oneOf", "anyOf"):
        return error.absolute_path, error.message
    from jsonschema.exceptions import best_match

    branches = [b for b in error.validator_value if isinstance(b, dict)]
    value = error.instance
    consts = [b["const"] for b in branches if "const" in b]
    if consts and len(consts) == len(branches):
        return error.absolute_path, f"{_clip(json.dumps(value))} is not one of {consts}"
    prop = (error.schema.get("discriminator") or {}).get("propertyName") or next(
        (p for b in branches for p, s in b.get("properties", {}).items() if "const" in s), None
    )
    if prop and isinstance(value, dict):
        tags = [b.get("properties", {}).get(prop, {}).get("const") for b in error.validator_value]
        if prop in value and value[prop] in tags:
            chosen = tags.index(value[prop])
            inner = [e for e in error.context if e.relative_schema_path[0] == chosen]
            if inner:
                return _describe(best_match(inner))
        elif all(
            isinstance(b, dict) and prop in b.get("required", []) for b in error.validator_value
        ):
            known = [t for t in tags if t is not None]
            return (
                error.absolute_path,
                f"{prop} {json.dumps(value.get(prop))} is not one of {known}",
            )
    return _describe(best_match(error.context))


def _id_errors(message: dict[str, Any]) -> list[str]:
    value = message["id"]
    if value is None or isinstance(value, str):
        return []
    if isinstance(value, int) and not isinstance(value, bool):
        return []
    return [f"id: must be a string, an integer or null, not {_clip(json.dumps(value))}"]


def schema_errors(message: Any, *, sender: Sender, request_method: str | None = None) -> list[str]:
    """Check one JSON-RPC message that ``sender`` sent; returns readable errors (empty = conforms).

    Requests and notifications are checked against their method's params type, responses against
    the result type of ``request_method`` (the method of the request they answer; without it only
    the envelope is checked). Extension methods (``_…``) only get the envelope check. Raises
    :class:`ValidatorUnavailable` when ``jsonschema`` is not installed.
    """
    _validator_class()  # raises ValidatorUnavailable now, not only for some messages
    if not isinstance(message, dict):
        return [f"message: must be a JSON object, not {type(message).__name__}"]
    errors: list[str] = []
    if message.get("jsonrpc") != "2.0":
        errors.append(
            'jsonrpc: must be "2.0"' if "jsonrpc" in message else 'jsonrpc: missing ("2.0")'
        )

    if "method" in message:
        method = message["method"]
        if not isinstance(method, str):
            return [*errors, "method: must be a string"]
        is_request = "id" in message
        if is_request:
            errors += _id_errors(message)
        for key in ("result", "error"):
            if key in message:
                errors.append(
                    f"{key}: not allowed in a {'request' if is_request else 'notification'}"
                )
        params = message.get("params")
        if params is not None and not isinstance(params, (dict, list)):
            # JSON-RPC wants structured params; the ACP envelope schema also allows null
            errors.append("params: must be an object, an array or null")
        if method.startswith("_"):
            return errors
        kind = "request" if is_request else "notification"
        def_name = _tables()[(sender, kind)].get(method)
        if def_name is None:
            return [*errors, _misplaced(method, sender, kind)]
        if params is None:
            params = {}  # absent params: fine only if the type requires nothing
        return errors + payload_errors(params, def_name, where="params")

    # a response
    if "id" not in message:
        errors.append("id: missing (a message without method must be a response)")
    else:
        errors += _id_errors(message)
    has_result, has_error = "result" in message, "error" in message
    if has_result == has_error:
        errors.append("response: must have exactly one of result and error")
        return errors
    if has_error:
        return errors + payload_errors(message["error"], "Error", where="error")
    if request_method is None or request_method.startswith("_"):
        return errors
    def_name = _tables()[(sender, "result")].get(request_method)
    if def_name is None:
        return [*errors, f"result: the {sender} does not answer {request_method!r} requests"]
    return errors + payload_errors(message["result"], def_name, where="result")


def _misplaced(method: str, sender: str, kind: str) -> str:
    other = "agent" if sender == "client" else "client"
    for who, what in (
        (sender, "notification" if kind == "request" else "request"),
        (other, "request"),
        (other, "notification"),
    ):
        if method in _tables()[(who, what)]:
            return (
                f"method: {method!r} is a {what} sent by the {who}, not a {kind} from the {sender}"
            )
    return f"method: unknown method {method!r}"
