"""Base class and helpers for the generated ACP models (``acp_notebook/protocol/models.py``).

The models are lenient on input and exact on output:

- unknown fields are kept (``extra="allow"``) and re-emitted;
- a union value whose discriminator is missing or unknown becomes an ``Unknown*`` model that keeps
  the raw dict (see :class:`UnknownVariant`);
- :func:`parse` validates with plain pydantic first; only when that fails does a repair pass use the
  error locations and the schema's ``x-deserialize-*`` hints to drop or reset the broken parts;
- :meth:`AcpModel.to_wire` emits only fields that were set, plus the discriminators of variants
  built in code, and leaves out ``None`` for fields the schema does not allow to be null.
"""

# No ``from __future__ import annotations``: pydantic re-reads AcpModel's annotations for each of
# the generated models, and plain objects spare it evaluating strings 160 times over.
import contextlib
import copy
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    ClassVar,
    NamedTuple,
    TypeVar,
    Union,
    get_args,
    get_origin,
)

from pydantic import (
    BaseModel,
    ConfigDict,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    Tag,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

__all__ = [
    "UNKNOWN_TAG",
    "AcpModel",
    "MethodSpec",
    "UnknownVariant",
    "parse",
    "tag_by_field",
    "tag_by_keys",
    "tag_list_by_keys",
    "wrap_unknown",
]

#: Tag of the ``Unknown*`` member in every discriminated union.
UNKNOWN_TAG = "__unknown__"

_M = TypeVar("_M", bound="AcpModel")

# Passed as serialization context by to_wire(), so plain model_dump() stays stock pydantic.
_WIRE = object()

# How many repair/validate rounds parse() tries before giving up (one is nearly always enough).
_MAX_REPAIR_PASSES = 4


class AcpModel(BaseModel):
    """Base of every generated ACP model.

    Python attribute names are snake_case, each field's alias is the exact wire name.
    The ``__acp_*__`` class attributes are written by the generator.
    """

    # defer_build: a model's validator and serializer are built on first use, not at import, so
    # importing the models is cheap and a turn pays only for the messages it actually sees.
    model_config = ConfigDict(
        extra="allow", populate_by_name=True, protected_namespaces=(), defer_build=True
    )

    if TYPE_CHECKING:
        # Typed for type checkers only: pydantic evaluates the annotations of a model's bases
        # again for every subclass it makes (about 170 here), and these are never fields.

        #: Tag of this class inside its discriminated union (variant classes only).
        __acp_tag__: ClassVar[str | None]
        #: Wire name -> value always emitted by to_wire() (discriminators with a default).
        __acp_always__: ClassVar[dict[str, Any]]
        #: Wire names of optional fields that the schema does not allow to be null: None
        #: means "absent".
        __acp_omit_none__: ClassVar[frozenset[str]]
        #: Wire names of list fields marked ``x-deserialize-skip-invalid-items``.
        __acp_skip_invalid__: ClassVar[frozenset[str]]
        #: Wire names of fields marked ``x-deserialize-default-on-error``.
        __acp_default_on_error__: ClassVar[frozenset[str]]
        #: Wire names of fields marked ``x-deserialize-default-on-null``: null reads as the
        #: default.
        __acp_default_on_null__: ClassVar[frozenset[str]]

    __acp_tag__ = None
    __acp_always__ = {}
    __acp_omit_none__ = frozenset()
    __acp_skip_invalid__ = frozenset()
    __acp_default_on_error__ = frozenset()
    __acp_default_on_null__ = frozenset()

    @model_serializer(mode="wrap")
    def _acp_wire(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo) -> Any:
        data = handler(self)
        # Only to_wire() adds discriminators / drops non-nullable Nones; model_dump() is untouched.
        if info.context is _WIRE and isinstance(data, dict):
            cls = type(self)
            for name, value in cls.__acp_always__.items():
                data.setdefault(name, value)
            for name in cls.__acp_omit_none__:
                if name in data and data[name] is None:
                    del data[name]
        return data

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready dict to send: wire names, only the fields that were set."""
        data: dict[str, Any] = self.model_dump(
            mode="json", by_alias=True, exclude_unset=True, context=_WIRE
        )
        return data

    @classmethod
    def parse(cls: type[_M], data: Any, *, repairs: list[str] | None = None) -> _M:
        """Validate ``data`` (a decoded JSON object) leniently; see :func:`parse`."""
        try:
            return cls.__pydantic_validator__.validate_python(data)
        except ValidationError as exc:
            result: _M = _repair_and_validate(cls, data, exc, repairs)
            return result


class UnknownVariant(AcpModel):
    """A union value this schema version does not know (or could not read): the raw dict is kept.

    ``to_wire()`` returns ``raw`` unchanged, so forwarding or recording the message loses nothing.
    """

    if TYPE_CHECKING:  # as in AcpModel
        #: Wire name of the union's discriminator property, if it has one.
        __acp_discriminator__: ClassVar[str | None]

    __acp_tag__ = UNKNOWN_TAG
    __acp_discriminator__ = None

    raw: dict[str, Any]

    @model_serializer(mode="plain")
    def _acp_wire(self) -> dict[str, Any]:  # type: ignore[override]  # same name replaces the base's
        return self.raw

    def to_wire(self) -> dict[str, Any]:
        return self.raw

    @property
    def discriminator_value(self) -> str | None:
        """The discriminator as received (None when missing or not a string)."""
        name = type(self).__acp_discriminator__
        value = self.raw.get(name) if name else None
        return value if isinstance(value, str) else None


class MethodSpec(NamedTuple):
    """Types of one ACP method: ``params`` and ``result`` are model classes or union aliases."""

    method: str
    params: Any
    #: None for notifications.
    result: Any


# --- discriminator functions (called by pydantic once per union value: keep them tiny) ---------


def _instance_tag(value: Any) -> str:
    # Models built in code: every variant class carries its tag.
    tag = getattr(value, "__acp_tag__", None)
    return tag if isinstance(tag, str) else UNKNOWN_TAG


def tag_by_field(
    prop: str, tags: Iterable[str], *, absent: str = UNKNOWN_TAG
) -> Callable[[Any], str]:
    """Discriminator reading ``prop``: a known value is its own tag, anything else is unknown.

    ``absent`` is the tag used when ``prop`` is missing (the schema's default variant, if any).
    """
    known = frozenset(tags)

    def tag(value: Any) -> str:
        if isinstance(value, dict):
            found = value.get(prop, _ABSENT)
            if found.__class__ is str:
                return found if found in known else UNKNOWN_TAG
            return absent if found is _ABSENT else UNKNOWN_TAG
        return _instance_tag(value)

    return tag


def tag_by_keys(pairs: Iterable[tuple[str, str]]) -> Callable[[Any], str]:
    """Discriminator for unions without a discriminator property: the first present key wins."""
    checks = tuple(pairs)

    def tag(value: Any) -> str:
        if isinstance(value, dict):
            for key, found in checks:
                if key in value:
                    return found
            return UNKNOWN_TAG
        return _instance_tag(value)

    return tag


def tag_list_by_keys(
    pairs: Iterable[tuple[str, str, str]], *, fallback: str
) -> Callable[[Any], str]:
    """Discriminator for a union of list types, by the keys (wire, attribute) of the first item."""
    checks = tuple(pairs)

    def tag(value: Any) -> str:
        if isinstance(value, list) and value:
            first = value[0]
            for wire, attr, found in checks:
                if (wire in first) if isinstance(first, dict) else hasattr(first, attr):
                    return found
        return fallback

    return tag


def wrap_unknown(value: Any) -> Any:
    """Before-validator of the Unknown union member: the wire dict becomes ``raw``."""
    return value if isinstance(value, UnknownVariant) else {"raw": value}


class _Absent:
    pass


_ABSENT: Any = _Absent()


# --- lenient parsing -------------------------------------------------------------------------

_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def _validate(tp: Any, data: Any) -> Any:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return tp.__pydantic_validator__.validate_python(data)
    adapter = _ADAPTERS.get(tp)
    if adapter is None:
        adapter = _ADAPTERS[tp] = TypeAdapter(tp)
    return adapter.validate_python(data)


def parse(tp: Any, data: Any, *, repairs: list[str] | None = None) -> Any:
    """Validate ``data`` as ``tp`` (a model class or a union alias such as ``SessionUpdate``).

    Fast path: plain pydantic validation. If it fails, a repair pass (on a deep copy; ``data`` is
    never modified) uses the error locations, nearest to the error first:

    1. an item of a list marked ``x-deserialize-skip-invalid-items`` is dropped;
    2. a field marked ``x-deserialize-default-on-error`` is reset to its default
       (a required list to ``[]``), and so is a null in a field marked
       ``x-deserialize-default-on-null``;
    3. a union value is replaced by the union's ``Unknown*`` model (raw dict kept);
    4. any other optional field is reset to its default.

    ``None`` for a model without required fields is read as ``{}`` (peers answer ``null`` where
    the schema wants an empty object). A note per repair is appended to ``repairs`` if given. Raises :class:`pydantic.ValidationError`
    when nothing can be repaired (e.g. a required top-level field is missing).
    """
    try:
        return _validate(tp, data)
    except ValidationError as exc:
        return _repair_and_validate(tp, data, exc, repairs)


@dataclass
class _Union:
    members: dict[str, Any]  # tag -> member annotation
    unknown: type[UnknownVariant] | None


@dataclass
class _Pos:
    """One step into the data: ``container[key]``, and what the schema says about it."""

    container: Any
    key: Any
    path: tuple[Any, ...]
    owner: type[AcpModel] | None = None  # set when key is a field (wire name) of this model
    field_name: str | None = None
    list_field: "_Pos | None" = None  # set when key is an item index: the field holding the list
    union: _Union | None = None  # set when the value here is a discriminated union
    value: Any = field(default=None, repr=False)


_UNION_CACHE: dict[Any, _Union | None] = {}
_ALIASES: dict[type[BaseModel], dict[str, str]] = {}


def _tagged_union(ann: Any) -> _Union | None:
    """The tag -> member table of a discriminated union annotation (None if it is not one)."""
    try:
        return _UNION_CACHE[ann]
    except (KeyError, TypeError):
        pass
    result = None
    if get_origin(ann) is Union:
        members: dict[str, Any] = {}
        unknown = None
        for arg in get_args(ann):
            if get_origin(arg) is not Annotated:
                members = {}
                break
            inner, *meta = get_args(arg)
            tags = [m.tag for m in meta if isinstance(m, Tag)]
            if not tags:
                members = {}
                break
            members[tags[0]] = inner
            if tags[0] == UNKNOWN_TAG:
                unknown = inner
        if members:
            result = _Union(members, unknown)
    with contextlib.suppress(TypeError):  # unhashable annotations are simply not cached
        _UNION_CACHE[ann] = result
    return result


def _strip(ann: Any) -> Any:
    """Remove Annotated wrappers and a ``| None``."""
    while True:
        origin = get_origin(ann)
        if origin is Annotated:
            ann = get_args(ann)[0]
            continue
        if origin in (Union, types.UnionType):
            args = [a for a in get_args(ann) if a is not type(None)]
            if len(args) == 1:
                ann = args[0]
                continue
        return ann


def _aliases(model: type[BaseModel]) -> dict[str, str]:
    table = _ALIASES.get(model)
    if table is None:
        table = {(info.alias or name): name for name, info in model.model_fields.items()}
        _ALIASES[model] = table
    return table


def _walk(tp: Any, holder: dict[str, Any], loc: tuple[Any, ...]) -> list[_Pos]:
    """Follow an error location through the data and the annotations, as far as both agree."""
    root = _Pos(holder, "root", ())
    root.value = holder["root"]
    positions = [root]
    ann: Any = tp
    i = 0
    while True:
        here = positions[-1]
        ann = _strip(ann)
        union = _tagged_union(ann)
        if union is not None:
            here.union = union
            if i < len(loc) and isinstance(loc[i], str) and loc[i] in union.members:
                ann = union.members[loc[i]]
                i += 1
                continue
            break
        if i >= len(loc):
            break
        key, value = loc[i], here.value
        if isinstance(ann, type) and issubclass(ann, AcpModel):
            name = _aliases(ann).get(key) if isinstance(key, str) else None
            if name is None or not isinstance(value, dict):
                break
            step = _Pos(value, key, (*here.path, key), owner=ann, field_name=name)
            step.value = value.get(key, _ABSENT)
            ann = ann.model_fields[name].annotation
        elif get_origin(ann) is list:
            if not (isinstance(value, list) and isinstance(key, int) and 0 <= key < len(value)):
                break
            step = _Pos(value, key, (*here.path, key), list_field=here)
            step.value = value[key]
            ann = get_args(ann)[0]
        elif get_origin(ann) is dict:
            if not (isinstance(value, dict) and key in value):
                break
            step = _Pos(value, key, (*here.path, key))
            step.value = value[key]
            ann = get_args(ann)[1]
        else:
            break
        positions.append(step)
        i += 1
    return positions


def _empty_for(pos: _Pos) -> Any:
    assert pos.owner is not None and pos.field_name is not None
    info = pos.owner.model_fields[pos.field_name]
    if not info.is_required():
        return _ABSENT  # delete the key: the field takes its default
    origin = get_origin(_strip(info.annotation))
    return [] if origin is list else {} if origin is dict else _ABSENT


def _plan(positions: list[_Pos]) -> tuple[str, _Pos, Any] | None:
    """Pick the repair for one error: the deepest position that can be fixed."""
    for pos in reversed(positions):
        parent = pos.list_field
        if parent is not None and parent.owner and parent.key in parent.owner.__acp_skip_invalid__:
            return ("drop", pos, None)
        if pos.owner is not None and (
            pos.key in pos.owner.__acp_default_on_error__
            or (pos.value is None and pos.key in pos.owner.__acp_default_on_null__)
        ):
            replacement = _empty_for(pos)
            if replacement is not _ABSENT or pos.key in pos.container:
                return ("reset", pos, replacement)
        if pos.union is not None and pos.union.unknown is not None and isinstance(pos.value, dict):
            return ("unknown", pos, pos.union.unknown)
        field_info = (
            pos.owner.model_fields[pos.field_name] if pos.owner and pos.field_name else None
        )
        if field_info is not None and not field_info.is_required() and pos.key in pos.container:
            return ("reset", pos, _ABSENT)
    return None


def _where(path: tuple[Any, ...]) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text or "<root>"


def _all_optional(tp: Any) -> bool:
    if not (isinstance(tp, type) and issubclass(tp, BaseModel)):
        return False
    return not any(info.is_required() for info in tp.model_fields.values())


def _repair_and_validate(
    tp: Any, data: Any, error: ValidationError, notes: list[str] | None
) -> Any:
    # Some agents answer e.g. session/load with "result": null; read it as {} if that is valid.
    if data is None and _all_optional(tp):
        if notes is not None:
            notes.append("<root>: null read as {}")
        return _validate(tp, {})
    holder = {"root": copy.deepcopy(data)}
    for _ in range(_MAX_REPAIR_PASSES):
        actions: dict[tuple[Any, ...], tuple[str, _Pos, Any, str]] = {}
        for err in error.errors(include_url=False):
            planned = _plan(_walk(tp, holder, tuple(err["loc"])))
            if planned is not None:
                kind, pos, arg = planned
                actions.setdefault(pos.path, (kind, pos, arg, err["msg"]))
        # An action on an ancestor covers everything below it.
        paths = sorted(actions, key=len)
        kept = [p for p in paths if not any(p[: len(q)] == q for q in paths if len(q) < len(p))]
        if not kept:
            raise error
        drops: list[_Pos] = []
        for path in kept:
            kind, pos, arg, msg = actions[path]
            if notes is not None:
                verb = {
                    "drop": "dropped invalid item",
                    "reset": "reset to default",
                    "unknown": f"kept as {getattr(arg, '__name__', 'unknown')}",
                }[kind]
                notes.append(f"{_where(pos.path)}: {verb} ({msg})")
            if kind == "drop":
                drops.append(pos)
            elif kind == "unknown":
                pos.container[pos.key] = arg(raw=pos.value)
            elif arg is _ABSENT:
                pos.container.pop(pos.key, None)
            else:
                pos.container[pos.key] = arg
        # Highest index first so earlier indices stay valid.
        for pos in sorted(drops, key=lambda p: p.key, reverse=True):
            del pos.container[pos.key]
        try:
            return _validate(tp, holder["root"])
        except ValidationError as exc:
            error = exc
    raise error
