#!/usr/bin/env python3
"""Generate ``acp_notebook/protocol/models.py`` and its stub ``models.pyi`` from the vendored ACP
JSON Schema.

Usage::

    python scripts/gen_models.py           # (re)write models.py and models.pyi
    python scripts/gen_models.py --check   # exit 1 if either is not up to date

models.py defines each model, union and method table inside a factory run on first use
(``acp_notebook/protocol/lazy_names.py``: importing all 170 classes was most of a CLI turn's own
start); models.pyi has the same definitions at module level, which is what type checkers read.

Standard library only; the output is deterministic. How the schema maps to Python is explained in
the docstring written into models.py (``Generator.module_doc``); the tables below hold the few
decisions that cannot be read from the schema.
"""

from __future__ import annotations

import json
import keyword
import re
import sys
import textwrap
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_DIR = ROOT / "acp_notebook" / "protocol" / "schema" / "v1"
OUT = ROOT / "acp_notebook" / "protocol" / "models.py"
LINE = 100

# --- decisions that are not in the schema ----------------------------------------------------

#: Deliberate deviations from the schema: (def, property) -> why. Each makes the field nullable
#: (it stays required) so that messages from real agents parse.
DEVIATIONS: dict[tuple[str, str], str] = {
    ("UsageUpdate", "used"): 'claude-agent-acp 0.23.1 sends "used": null',
    ("UsageUpdate", "size"): "same shape as used, so null is tolerated too",
}

#: Variant class names: union -> tag -> class. A tag is a discriminator value, or the branch title
#: of the schema's default variant (the one used when the discriminator is absent). If the name is
#: the variant's payload `$defs` name, that class *is* the variant (it gets the discriminator
#: field; only allowed when nothing else uses it); otherwise the variant subclasses the payload
#: class, or, for objects made of base properties plus variants, is a flat class of its own.
#: Names must not clash with `$defs` names of other types.
VARIANT_NAMES: dict[str, dict[str, str]] = {
    "SessionUpdate": {
        "user_message_chunk": "UserMessageChunk",
        "agent_message_chunk": "AgentMessageChunk",
        "agent_thought_chunk": "AgentThoughtChunk",
        "tool_call": "ToolCallStart",  # `ToolCall` is the payload def
        "tool_call_update": "ToolCallProgress",  # `ToolCallUpdate` is also a permission's toolCall
        "plan": "AgentPlanUpdate",  # `Plan` is the payload def; `plan_update` exists upstream
        "available_commands_update": "AvailableCommandsUpdate",
        "current_mode_update": "CurrentModeUpdate",
        "config_option_update": "ConfigOptionUpdate",
        "session_info_update": "SessionInfoUpdate",
        "usage_update": "UsageUpdate",
        "notice": "Notice",
        "compaction_update": "CompactionUpdate",
        "compaction_summary_chunk": "CompactionSummaryChunk",
    },
    "ContentBlock": {
        "text": "TextContentBlock",
        "image": "ImageContentBlock",
        "audio": "AudioContentBlock",
        "resource_link": "ResourceLinkContentBlock",
        "resource": "EmbeddedResourceContentBlock",
    },
    "ToolCallContent": {
        "content": "ContentToolCallContent",
        "diff": "DiffToolCallContent",
        "terminal": "TerminalToolCallContent",
    },
    "AuthMethod": {"terminal": "AuthMethodTerminal", "agent": "AuthMethodAgent"},
    "McpServer": {"http": "McpServerHttp", "sse": "McpServerSse", "stdio": "McpServerStdio"},
    "RequestPermissionOutcome": {
        "cancelled": "CancelledPermissionOutcome",
        "selected": "SelectedPermissionOutcome",
    },
    "ElicitationPropertySchema": {
        "string": "StringPropertySchema",
        "number": "NumberPropertySchema",
        "integer": "IntegerPropertySchema",
        "boolean": "BooleanPropertySchema",
        "array": "MultiSelectPropertySchema",
    },
    "MultiSelectItems": {"string": "StringMultiSelectItems", "titled": "TitledMultiSelectItems"},
    # `SessionConfigSelectOption` is a $defs name (one choice of a select), hence Option<Kind>.
    "SessionConfigOption": {
        "select": "SessionConfigOptionSelect",
        "boolean": "SessionConfigOptionBoolean",
    },
    "SetSessionConfigOptionRequest": {
        "boolean": "SetSessionConfigOptionBooleanRequest",
        "value_id": "SetSessionConfigOptionSelectRequest",
    },
    "CreateElicitationRequest": {
        "form": "CreateElicitationFormRequest",
        "url": "CreateElicitationUrlRequest",
    },
    "CreateElicitationResponse": {
        "accept": "AcceptElicitationResponse",
        "decline": "DeclineElicitationResponse",
        "cancel": "CancelElicitationResponse",
    },
}

#: Default variants whose tag is also accepted as an explicit discriminator value on the wire;
#: their class gets an optional discriminator field (left out by to_wire() when None).
DEFAULT_TAG_ON_WIRE: dict[str, str] = {"AuthMethod": "agent", "McpServer": "stdio"}

#: Non-union fields that to_wire() always emits (discriminator-like, with a default).
ALWAYS_EMIT: set[tuple[str, str]] = {("ElicitationSchema", "type")}

#: Attribute names a field must not take (BaseModel / AcpModel members); they get a trailing "_".
RESERVED = {
    "construct", "copy", "dict", "json", "parse", "parse_obj", "parse_raw", "raw", "schema",
    "schema_json", "to_wire", "update_forward_refs", "validate", "model_config", "model_fields",
}  # fmt: skip


# --- small helpers ---------------------------------------------------------------------------


def load() -> tuple[dict[str, Any], dict[str, Any], str]:
    schema = json.loads((SCHEMA_DIR / "schema.json").read_text(encoding="utf-8"))
    meta = json.loads((SCHEMA_DIR / "meta.json").read_text(encoding="utf-8"))
    source = (SCHEMA_DIR / "SOURCE.md").read_text(encoding="utf-8")
    found = re.search(r"^Release: `([^`]+)`", source, re.MULTILINE)
    if not found:
        raise SystemExit("SOURCE.md does not name the schema release (a line Release: `...`)")
    return schema, meta, found.group(1)


def ref_name(node: dict[str, Any]) -> str | None:
    """The $defs name a node points to: ``{"$ref": ...}`` or ``{"allOf": [{"$ref": ...}]}``."""
    if "$ref" in node:
        return str(node["$ref"]).rsplit("/", 1)[-1]
    all_of = node.get("allOf")
    if isinstance(all_of, list) and len(all_of) == 1 and "$ref" in all_of[0]:
        return str(all_of[0]["$ref"]).rsplit("/", 1)[-1]
    return None


def branches_of(node: dict[str, Any]) -> list[dict[str, Any]]:
    return list(node.get("oneOf") or node.get("anyOf") or [])


def const_prop(branch: dict[str, Any]) -> str | None:
    for name, sub in branch.get("properties", {}).items():
        if isinstance(sub, dict) and "const" in sub:
            return str(name)
    return None


def has_const_branches(node: dict[str, Any]) -> bool:
    return any(const_prop(b) for b in branches_of(node) if b.get("type") == "object")


def first_paragraph(text: str | None) -> str:
    if not text:
        return ""
    para = re.split(r"\n\s*\n", text.strip(), maxsplit=1)[0]
    return " ".join(line.strip() for line in para.splitlines()).strip()


def short(text: str | None) -> str:
    """A field description: the first paragraph, or its first sentence if that is long."""
    para = first_paragraph(text)
    if len(para) > 160:
        sentence = re.match(r"(.+?[.!?])\s", para + " ")
        if sentence:
            return sentence.group(1)
    return para


def snake(wire: str) -> str:
    if wire == "_meta":
        return "field_meta"
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", wire).lower()
    name = re.sub(r"[^a-z0-9_]", "_", name)
    if keyword.iskeyword(name) or name in RESERVED or name[0].isdigit():
        name += "_"
    return name


def camel(tag: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-\s]+", tag) if part)


def pystr(text: str) -> str:
    """A Python string literal, quoted the way ruff format prefers."""
    literal = json.dumps(text, ensure_ascii=False)  # JSON escapes are valid Python escapes
    if '"' in text and "'" not in text:
        literal = "'" + literal[1:-1].replace('\\"', '"') + "'"
    return literal


def names_read(code: str) -> set[str]:
    """The names a declaration such as ``x: list[A] | None = Field(default=None, ...)`` looks up:
    its words outside string literals, except the declared name and keyword-argument names
    (written ``name=``, where the annotation ends with `` = ``)."""
    code = re.sub(r""""(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'""", "", code)
    code = code.split(":", 1)[1] if ":" in code else code
    return set(re.findall(r"\b([A-Za-z_]\w*)\b(?!=[^=])", code))


def pyvalue(value: Any) -> str:
    if isinstance(value, str):
        return pystr(value)
    return repr(value)  # bool / int / float / None


def docstring(text: str, indent: str) -> list[str]:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if text.endswith('"'):
        text += " "
    lines = textwrap.wrap(
        text,
        LINE - len(indent),
        initial_indent='"""',
        break_long_words=False,
        break_on_hyphens=False,
    )
    if len(lines) == 1:  # a one-line docstring keeps its closing quotes, as ruff does
        return [f'{indent}{lines[0]}"""']
    return [indent + lines[0], *(indent + line for line in lines[1:]), f'{indent}"""']


# --- a tiny layout engine, enough to produce ruff-format-like code -----------------------------


@dataclass
class Expr:
    """A bracketed expression: ``head(items)``, ``head[items]`` or ``{items}``."""

    head: str
    items: list[Any]  # str atoms, Expr or KW
    brackets: str = "()"
    one_tuple: bool = False  # a 1-tuple keeps its comma

    def flat(self) -> str:
        body = ", ".join(flat(i) for i in self.items)
        if self.one_tuple and len(self.items) == 1:
            body += ","
        return f"{self.head}{self.brackets[0]}{body}{self.brackets[1]}"


@dataclass
class KW:
    """A keyword argument whose value may need its own layout."""

    name: str
    value: Any

    def flat(self) -> str:
        return f"{self.name}={flat(self.value)}"


def flat(node: Any) -> str:
    return node if isinstance(node, str) else node.flat()


def fmt(node: Any, indent: str, prefix: str = "", suffix: str = "") -> list[str]:
    """``prefix + node + suffix``: flat if it fits, else the items on one indented line if they
    fit, else one item per line with a trailing comma (ruff format's layout)."""
    if isinstance(node, KW):
        return fmt(node.value, indent, f"{prefix}{node.name}=", suffix)
    one = f"{indent}{prefix}{flat(node)}{suffix}"
    if isinstance(node, str) or len(one) <= LINE:
        return [one]
    inner = indent + "    "
    opening = f"{indent}{prefix}{node.head}{node.brackets[0]}"
    closing = f"{indent}{node.brackets[1]}{suffix}"
    hug = inner + flat(Expr("", node.items, "  ", node.one_tuple)).strip()
    if len(hug) <= LINE:
        return [opening, hug, closing]
    lines = [opening]
    for item in node.items:
        lines += fmt(item, inner, "", ",")
    return [*lines, closing]


def strings(values: list[str], one_tuple: bool = True) -> Expr:
    return Expr("", [pystr(v) for v in values], "()", one_tuple)


# --- what we generate --------------------------------------------------------------------------


@dataclass
class Prop:
    wire: str
    schema: dict[str, Any]
    required: bool
    #: For a variant's discriminator: its constant, and whether to_wire() always emits it.
    const: str | None = None
    always: bool = False


@dataclass
class ClassSpec:
    name: str
    doc: str
    props: list[Prop]  # all fields, inherited ones included
    home: str  # the $defs entry it belongs to (for the order of the output)
    base: str = "AcpModel"
    tag: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Variant:
    tag: str
    cls: str
    default: bool = False  # selected when the discriminator is absent
    annotation: str = ""


@dataclass
class UnionSpec:
    name: str
    doc: str
    kind: str  # "field" (discriminator property), "keys" (key presence), "list" (first item's keys)
    variants: list[Variant]
    unknown: str | None
    prop: str | None = None
    key_checks: list[tuple[str, str, str]] = field(default_factory=list)  # (wire, attr, tag)


class Generator:
    def __init__(self, schema: dict[str, Any], meta: dict[str, Any], release: str) -> None:
        self.defs: dict[str, dict[str, Any]] = schema["$defs"]
        self.meta = meta
        self.release = release
        self.ref_counts = Counter(re.findall(r'"#/\$defs/(\w+)"', json.dumps(schema)))
        self.kinds = {name: self.classify(node) for name, node in self.defs.items()}
        self.classes: dict[str, ClassSpec] = {}
        self.unions: dict[str, UnionSpec] = {}
        self.enums: dict[str, list[str]] = {}
        self.aliases: dict[str, str] = {}
        self.warnings: list[str] = []

    # -- reading the schema

    def classify(self, node: dict[str, Any]) -> str:
        if node.get("x-docs-ignore"):
            return "skip"  # JSON-RPC envelopes: the method tables replace them
        branches = branches_of(node)
        if node.get("type") == "object":
            return "union" if has_const_branches(node) else "model"
        if not branches:
            return "alias"
        if all(
            b.get("type") == "string" and ("const" in b or b.get("title") == "other")
            for b in branches
        ):
            return "enum"
        if has_const_branches(node) or "discriminator" in node:
            return "union"
        targets = [ref_name(b) for b in branches]
        if all(t and self.defs[t].get("type") == "object" for t in targets):
            return "keys-union"
        if all(b.get("type") == "array" for b in branches):
            return "list-union"
        return "alias"

    def collect(self, node: dict[str, Any], optional: bool = False) -> list[Prop]:
        """The properties of an object; allOf refs and "scope" anyOfs are flattened in."""
        props: dict[str, Prop] = {}
        required = set(node.get("required", []))
        for wire, sub in node.get("properties", {}).items():
            props[wire] = Prop(wire, sub, wire in required and not optional)
        for part in node.get("allOf", []):
            target = ref_name(part)
            for prop in self.collect(self.defs[target], optional) if target else []:
                props.setdefault(prop.wire, prop)
        if not has_const_branches(node):
            # e.g. ElicitationFormMode: session scope | request scope -> every scope field optional
            for branch in branches_of(node):
                target = ref_name(branch)
                for prop in self.collect(self.defs[target] if target else branch, optional=True):
                    props.setdefault(prop.wire, prop)
        ordered = list(props.values())
        return [p for p in ordered if p.wire != "_meta"] + [p for p in ordered if p.wire == "_meta"]

    def build(self) -> None:
        for name, node in self.defs.items():
            kind = self.kinds[name]
            if kind == "model":
                self.classes[name] = ClassSpec(
                    name, first_paragraph(node.get("description")), self.collect(node), name
                )
            elif kind == "enum":
                self.enums[name] = [b["const"] for b in branches_of(node) if "const" in b]
            elif kind == "alias":
                self.aliases[name] = self.alias_expr(node)
        for name, node in self.defs.items():
            build = {
                "union": self.build_union,
                "keys-union": self.build_keys_union,
                "list-union": self.build_list_union,
            }.get(self.kinds[name])
            if build:
                build(name, node)
        for (owner, wire), why in DEVIATIONS.items():
            spec = self.classes[owner]
            if not any(p.wire == wire for p in spec.props):
                raise SystemExit(f"deviation for unknown field {owner}.{wire}")
            spec.notes.append(f"Deviation from the schema: ``{snake(wire)}`` may be None ({why}).")

    def alias_expr(self, node: dict[str, Any]) -> str:
        branches = branches_of(node)
        if branches and all(b.get("type") == "integer" for b in branches):
            return "int"  # ErrorCode: the known codes plus any other integer
        if not branches and "type" not in node:
            return "Any"  # ExtRequest & co: any JSON value
        expr, nullable = self.pytype(node)
        return f"{expr} | None" if nullable else expr

    def add_unknown(self, union: str, doc: str) -> str:
        name = f"Unknown{union}"
        if name in self.defs:
            raise SystemExit(f"{name} clashes with a $defs type")
        self.classes[name] = ClassSpec(name, doc, [], union, base="UnknownVariant")
        return name

    def build_union(self, name: str, node: dict[str, Any]) -> None:
        branches = branches_of(node)
        prop = (node.get("discriminator") or {}).get("propertyName") or next(
            p for p in map(const_prop, branches) if p
        )
        combined = node.get("type") == "object"  # base properties + the properties of one variant
        base_props = (
            self.collect({k: v for k, v in node.items() if k not in ("oneOf", "anyOf")})
            if combined
            else []
        )
        variants: list[Variant] = []
        has_other = False
        for branch in branches:
            disc = branch.get("properties", {}).get(prop)
            if isinstance(disc, dict) and "const" in disc:
                tag, default = str(disc["const"]), False
            elif branch.get("title") == "other":
                has_other = True  # the schema's open variant: lands in Unknown
                continue
            else:
                tag, default = str(branch["title"]), True
            cls = VARIANT_NAMES.get(name, {}).get(tag)
            if cls is None:
                cls = camel(tag) + name
                self.warnings.append(f"{name}: no name for variant {tag!r}, using {cls}")
            payload = ref_name(branch)
            if cls in self.defs and cls != payload:
                raise SystemExit(f"{name}.{tag}: {cls} clashes with a $defs type")
            own = [
                p
                for p in self.collect({k: v for k, v in branch.items() if k != "allOf"})
                if p.wire != prop
            ]
            disc_props: list[Prop] = []
            if not default:
                disc_props = [Prop(prop, {"type": "string"}, False, const=tag, always=True)]
            elif DEFAULT_TAG_ON_WIRE.get(name) == tag:
                disc_props = [Prop(prop, {"type": "string"}, False, const=tag)]
            doc = first_paragraph(branch.get("description"))
            if not combined and payload and not own and cls == payload:
                # The payload def is only this variant, so its class is the variant class.
                if self.ref_counts[payload] != 1:
                    raise SystemExit(f"{payload} is used elsewhere; cannot add {prop!r} to it")
                spec = self.classes[payload]
                spec.props = disc_props + spec.props
            elif not combined and payload and not own:
                parent = self.classes[payload]
                spec = self.classes[cls] = ClassSpec(
                    cls, doc or parent.doc, parent.props + disc_props, payload, base=payload
                )
            else:
                props: dict[str, Prop] = {}
                for p in (
                    disc_props
                    + base_props
                    + own
                    + (self.collect(self.defs[payload]) if payload else [])
                ):
                    props.setdefault(p.wire, p)
                ordered = list(props.values())
                ordered = [p for p in ordered if p.wire != "_meta"] + [
                    p for p in ordered if p.wire == "_meta"
                ]
                spec = self.classes[cls] = ClassSpec(cls, doc, ordered, name)
                spec.notes.append(
                    f"Variant ``{prop}: {pystr(tag)}`` of :data:`{name}`."
                    if not default
                    else f"Variant of :data:`{name}` used when ``{prop}`` is absent."
                )
            spec.tag = tag
            variants.append(Variant(tag, cls, default))
        other = ' (the schema\'s open "other" variant included)' if has_other else ""
        unknown = self.add_unknown(
            name,
            f"A ``{name}`` whose ``{prop}`` is missing or unknown to this schema version{other};"
            " ``raw`` keeps it as received.",
        )
        self.unions[name] = UnionSpec(
            name, first_paragraph(node.get("description")), "field", variants, unknown, prop
        )

    def unique_keys(self, targets: list[str]) -> list[str]:
        """Per variant, a required key that no other variant requires (tells them apart)."""
        required = [set(self.defs[t].get("required", [])) for t in targets]
        keys = []
        for i, own in enumerate(required):
            others = set().union(*(r for j, r in enumerate(required) if j != i))
            unique = sorted(own - others)
            if not unique:
                raise SystemExit(f"cannot tell {targets[i]} apart from {targets}")
            keys.append(unique[0])
        return keys

    def build_keys_union(self, name: str, node: dict[str, Any]) -> None:
        branches = branches_of(node)
        targets = [ref_name(b) or "" for b in branches]
        variants, checks = [], []
        for branch, target, key in zip(branches, targets, self.unique_keys(targets), strict=True):
            tag = str(branch.get("title") or target)
            self.classes[target].tag = tag
            variants.append(Variant(tag, target))
            checks.append((key, snake(key), tag))
        unknown = self.add_unknown(
            name,
            f"A ``{name}`` of a shape this schema version does not know;"
            " ``raw`` keeps it as received.",
        )
        self.unions[name] = UnionSpec(
            name,
            first_paragraph(node.get("description")),
            "keys",
            variants,
            unknown,
            key_checks=checks,
        )

    def build_list_union(self, name: str, node: dict[str, Any]) -> None:
        branches = branches_of(node)
        targets = [ref_name(b["items"]) or "" for b in branches]
        variants, checks = [], []
        for branch, target, key in zip(branches, targets, self.unique_keys(targets), strict=True):
            tag = str(branch.get("title") or target).lower()
            variants.append(Variant(tag, target, annotation=f"list[{target}]"))
            checks.append((key, snake(key), tag))
        # No Unknown member (a list is not an object): a bad list fails the enclosing value.
        self.unions[name] = UnionSpec(
            name,
            first_paragraph(node.get("description")),
            "list",
            variants,
            None,
            key_checks=checks,
        )

    def pytype(self, node: dict[str, Any]) -> tuple[str, bool]:
        """(Python type expression, whether JSON null is allowed)."""
        target = ref_name(node)
        if target:
            kind = self.kinds[target]
            if kind == "enum":
                return f"{target} | str", False  # lenient: unknown future values are kept
            if kind == "alias":
                expr = self.alias_expr(self.defs[target])
                return target, expr == "Any" or expr.endswith("| None")
            return target, False
        branches = branches_of(node)
        if branches:
            if all(b.get("type") == "string" and "const" in b for b in branches):
                return "Literal[" + ", ".join(pystr(b["const"]) for b in branches) + "]", False
            nullable = any(b.get("type") == "null" for b in branches)
            exprs: list[str] = []
            for expr, null in (self.pytype(b) for b in branches if b.get("type") != "null"):
                nullable = nullable or null
                if expr not in exprs:
                    exprs.append(expr)
            return " | ".join(exprs), nullable
        if "const" in node:
            return f"Literal[{pystr(node['const'])}]", False
        types = node.get("type")
        if types is None:
            return "Any", True
        kinds = types if isinstance(types, list) else [types]
        nullable = "null" in kinds
        rest = [k for k in kinds if k != "null"]
        if len(rest) != 1:
            raise SystemExit(f"unsupported type list: {types}")
        simple = {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}
        if rest[0] in simple:
            return simple[rest[0]], nullable
        if rest[0] == "array":
            return f"list[{self.pytype(node.get('items', {}))[0]}]", nullable
        if rest[0] == "object":
            extra = node.get("additionalProperties")
            if isinstance(extra, dict):
                value, null = self.pytype(extra)
                return f"dict[str, {value}{' | None' if null and value != 'Any' else ''}]", nullable
            return "dict[str, Any]", nullable
        raise SystemExit(f"unsupported schema node: {node}")

    # -- rendering

    def field_lines(self, owner: str, prop: Prop) -> tuple[list[str], set[str]]:
        """The field declaration, and its flags: skip / doe / don / always / omit_none."""
        node = prop.schema
        expr, nullable = self.pytype(node)
        nullable = nullable or (owner, prop.wire) in DEVIATIONS
        flags = set()
        if node.get("x-deserialize-skip-invalid-items"):
            flags.add("skip")
        if node.get("x-deserialize-default-on-error"):
            flags.add("doe")
        if node.get("x-deserialize-default-on-null"):
            flags.add("don")
        if prop.always or (owner, prop.wire) in ALWAYS_EMIT:
            flags.add("always")
        description = short(node.get("description"))
        args: list[Any] = []
        if prop.const is not None:
            expr = f"Literal[{pystr(prop.const)}]"
            if prop.always:
                description = f"Discriminator, always {pystr(prop.const)}."
                args.append(f"default={pystr(prop.const)}")
            else:
                description = f"Discriminator: {pystr(prop.const)}, or absent (same variant)."
        if prop.required or args:
            pass
        elif "default" in node:
            default = node["default"]
            if isinstance(default, (bool, int, float, str)):
                args.append(f"default={pyvalue(default)}")
            elif default == []:
                args.append("default_factory=list")
            elif isinstance(default, dict) and self.kinds.get(expr) == "model":
                args.append(
                    f"default_factory={expr}"
                )  # the class's own defaults equal the schema's
            elif default == {} and expr.startswith("dict["):
                args.append("default_factory=dict")
            else:
                raise SystemExit(f"{owner}.{prop.wire}: unsupported default {default!r}")
        else:
            args.append("default=None")
            if not nullable:
                flags.add("omit_none")  # None stands for "absent": the schema forbids null here
                nullable = True
        if nullable and expr != "Any":
            expr += " | None"
        args.append(f"alias={pystr(prop.wire)}")
        if description:
            args.append(f"description={pystr(description)}")
        return fmt(Expr("Field", args), "    ", f"{snake(prop.wire)}: {expr} = "), flags

    def render_class(self, spec: ClassSpec) -> list[str]:
        lines = [f"class {spec.name}({spec.base}):"]
        lines += docstring(" ".join([spec.doc or spec.name, *spec.notes]), "    ")
        if spec.base == "UnknownVariant":
            union = self.unions[spec.home]
            if union.prop:
                lines += [
                    "",
                    f"    __acp_discriminator__ = {pystr(union.prop)}",
                    "",
                    "    @property",
                    f"    def {snake(union.prop)}(self) -> str | None:",
                    f'        """The ``{union.prop}`` value as received (None if missing)."""',
                    "        return self.discriminator_value",
                ]
            return lines
        inherited = (
            {p.wire for p in self.classes[spec.base].props} if spec.base in self.classes else set()
        )
        body: list[str] = []
        flagged: dict[str, list[str]] = {"skip": [], "doe": [], "don": [], "omit_none": []}
        always: list[str] = []
        declared: set[str] = set()
        for prop in spec.props:
            declaration, flags = self.field_lines(spec.name, prop)
            if prop.wire not in inherited:
                # The class body runs top to bottom: a field named like a type (``list``) hides it.
                hidden = declared & names_read("\n".join(declaration))
                if hidden:
                    raise SystemExit(f"{spec.name}.{prop.wire}: a field hides {sorted(hidden)}")
                declared.add(snake(prop.wire))
                body += declaration
            for key, wires in flagged.items():
                if key in flags:
                    wires.append(prop.wire)
            if "always" in flags:
                value = prop.const if prop.const is not None else prop.schema.get("default")
                always.append(f"{pystr(prop.wire)}: {pyvalue(value)}")
        # The ``__acp_*__`` attributes are typed once, in AcpModel: unannotated here, pydantic
        # does not evaluate their annotations again while it makes each class.
        header: list[str] = []
        if spec.tag is not None:
            header.append(f"    __acp_tag__ = {pystr(spec.tag)}")
        if always:
            header += fmt(Expr("", always, "{}"), "    ", "__acp_always__ = ")
        for key, attr in (
            ("omit_none", "__acp_omit_none__"),
            ("skip", "__acp_skip_invalid__"),
            ("doe", "__acp_default_on_error__"),
            ("don", "__acp_default_on_null__"),
        ):
            if flagged[key]:
                items = Expr("", [pystr(w) for w in sorted(flagged[key])], "{}")
                header += fmt(Expr("frozenset", [items]), "    ", f"{attr} = ")
        return lines + (["", *header] if header else []) + (["", *body] if body else [])

    def render_union(self, spec: UnionSpec) -> list[str]:
        members: list[Any] = [
            f"Annotated[{v.annotation or v.cls}, Tag({pystr(v.tag)})]" for v in spec.variants
        ]
        if spec.unknown:
            members.append(
                Expr(
                    "Annotated",
                    [spec.unknown, "BeforeValidator(wrap_unknown)", "Tag(UNKNOWN_TAG)"],
                    "[]",
                )
            )
        if spec.kind == "field":
            known = [v.tag for v in spec.variants if not v.default]
            default = next((v.tag for v in spec.variants if v.default), None)
            if default is not None and DEFAULT_TAG_ON_WIRE.get(spec.name) == default:
                known.append(default)
            args: list[Any] = [pystr(spec.prop or ""), strings(known)]
            if default:
                args.append(f"absent={pystr(default)}")
            disc = Expr("tag_by_field", args)
        elif spec.kind == "keys":
            pairs = [Expr("", [pystr(w), pystr(t)]) for w, _, t in spec.key_checks]
            disc = Expr("tag_by_keys", [Expr("", pairs, "()", one_tuple=True)])
        else:
            triples = [Expr("", [pystr(w), pystr(a), pystr(t)]) for w, a, t in spec.key_checks]
            disc = Expr(
                "tag_list_by_keys",
                [
                    Expr("", triples, "()", one_tuple=True),
                    f"fallback={pystr(spec.variants[0].tag)}",
                ],
            )
        union = Expr(
            "Annotated", [Expr("Union", members, "[]"), Expr("Discriminator", [disc])], "[]"
        )
        return fmt(union, "", f"{spec.name} = ") + docstring(spec.doc or spec.name, "")

    def union_members(self, lazy: bool) -> list[str]:
        """``UNION_MEMBERS``: for each union with a discriminator property, that property and
        the class each of its values on the wire selects (names, so nothing is made). The
        stub (not ``lazy``) declares its type only."""
        doc = [
            '"""Union name -> (its discriminator\'s wire name, {value: member class name}): the',
            "member a value selects, found without making the union (see protocol/variants.py).",
            '"""',
            "",
        ]
        if not lazy:
            return ["UNION_MEMBERS: dict[str, tuple[str, dict[str, str]]]", *doc]
        lines = ["UNION_MEMBERS: dict[str, tuple[str, dict[str, str]]] = {"]
        for spec in self.unions.values():
            if spec.kind != "field":
                continue
            on_wire = DEFAULT_TAG_ON_WIRE.get(spec.name)
            members = {
                v.tag: v.cls for v in spec.variants if not v.default or v.tag == on_wire
            }
            if any(v.annotation for v in spec.variants):
                raise SystemExit(f"{spec.name}: a member of a field union is not a class")
            lines += [f"    {pystr(spec.name)}: ({pystr(spec.prop or '')}, {{"]
            lines += [f"        {pystr(t)}: {pystr(c)}," for t, c in members.items()]
            lines += ["    }),"]
        return [*lines, "}", *doc]

    def method_tables(self) -> dict[str, list[tuple[str, str, str | None]]]:
        """side -> [(method, params type, result type or None)], from the JSON-RPC envelopes."""

        def refs(envelope: str, prop: str) -> dict[str, str]:
            node = self.defs[envelope]
            if "anyOf" in node:  # responses: Result | Error
                node = node["anyOf"][0]
            inner = node["properties"][prop]["anyOf"]
            if "anyOf" in inner[0]:  # params: (one of the types) | null
                inner = inner[0]["anyOf"]
            found = {}
            for branch in inner:
                target = ref_name(branch)
                method = self.defs[target].get("x-method") if target else None
                if target and method:
                    found[str(method)] = target
            return found

        tables: dict[str, list[tuple[str, str, str | None]]] = {}
        for side, sender, receiver, meta_key in (
            ("AGENT", "Client", "Agent", "agentMethods"),
            ("CLIENT", "Agent", "Client", "clientMethods"),
        ):
            requests = refs(f"{sender}Request", "params")
            notifications = refs(f"{sender}Notification", "params")
            results = refs(f"{receiver}Response", "result")
            rows: list[tuple[str, str, str | None]] = []
            for method in self.meta[meta_key].values():
                if method in requests:
                    rows.append((method, requests[method], results[method]))
                elif method in notifications:
                    rows.append((method, notifications[method], None))
                else:
                    raise SystemExit(f"meta.json method {method} has no type in the schema")
            if set(requests) | set(notifications) != {r[0] for r in rows}:
                raise SystemExit(f"{side} methods differ between the schema and meta.json")
            tables[side] = rows
        tables["PROTOCOL"] = [
            (str(node["x-method"]), name, None)
            for name, node in self.defs.items()
            if node.get("x-side") == "protocol"
        ]
        if {r[0] for r in tables["PROTOCOL"]} != set(self.meta["protocolMethods"].values()):
            raise SystemExit("protocol methods differ between the schema and meta.json")
        return tables

    def uses(self, name: str) -> list[str]:
        """The classes and unions that the definition of ``name`` refers to."""
        if name in self.unions:
            union = self.unions[name]
            names = [v.cls for v in union.variants] + ([union.unknown] if union.unknown else [])
        else:
            spec = self.classes[name]
            names = [spec.base] + [
                word
                for prop in spec.props
                for word in re.findall(r"\w+", self.pytype(prop.schema)[0])
            ]
        return [
            n for n in dict.fromkeys(names) if n != name and (n in self.classes or n in self.unions)
        ]

    def ordered(self) -> list[ClassSpec | UnionSpec]:
        """Classes and unions in schema order (each follows its $defs entry), every one after the
        types it uses: annotations are evaluated when the module runs, so nothing may come later.
        """
        order: list[ClassSpec | UnionSpec] = []
        done: set[str] = set()

        def visit(name: str, path: tuple[str, ...]) -> None:
            if name in done:
                return
            if name in path:
                raise SystemExit(f"types refer to each other: {' -> '.join((*path, name))}")
            for dep in self.uses(name):
                visit(dep, (*path, name))
            done.add(name)
            order.append(self.unions[name] if name in self.unions else self.classes[name])

        for def_name in self.defs:
            for name, spec in self.classes.items():
                if spec.home == def_name:
                    visit(name, ())
            if def_name in self.unions:
                visit(def_name, ())
        return order

    def render(self) -> dict[str, str]:
        """The text of ``models.py`` (each model made on first use) and of ``models.pyi`` (the
        same definitions at module level, for type checkers), by file name."""
        self.build()
        tables = self.method_tables()
        directions = {
            "AGENT": ("client → agent", "agent → client"),
            "CLIENT": ("agent → client", "client → agent"),
            "PROTOCOL": ("either way", ""),
        }
        for side, rows in tables.items():
            there, back = directions[side]
            for method, params, result in rows:
                roles = [(params, f"{'request' if result else 'notification'} params ({there})")]
                if result:
                    roles.append((result, f"result ({back})"))
                for name, role in roles:
                    text = f"ACP ``{method}`` {role}."
                    if name in self.classes:
                        self.classes[name].notes.insert(0, text)
                    else:
                        self.unions[name].doc += " " + text
        return {
            "models.py": "\n".join(self.render_module(tables, lazy=True)),
            "models.pyi": "\n".join(self.render_module(tables, lazy=False)),
        }

    def render_module(
        self, tables: dict[str, list[tuple[str, str, str | None]]], *, lazy: bool
    ) -> list[str]:
        """The lines of ``models.py`` (``lazy``) or of its stub ``models.pyi``."""
        if lazy:
            what = '"""ACP v1 protocol message models, generated from the official JSON Schema.'
        else:
            what = (
                '"""ACP v1 protocol message models, generated from the official JSON Schema: the'
                " types of models.py for type checkers (models.py defines each model inside a"
                " factory, made on first use)."
            )
        out = [
            f"# Generated by scripts/gen_models.py from the ACP JSON Schema {self.release}",
            "# (acp_notebook/protocol/schema/v1/schema.json). Do not edit by hand; regenerate with:",
            "#     python scripts/gen_models.py",
            *textwrap.wrap(what, LINE, break_long_words=False, break_on_hyphens=False),
            "",
            *self.module_doc(),
            '"""',
            "",
            "from typing import Annotated, Any, Literal, Union",
            "",
            "from pydantic import BeforeValidator, Discriminator, Field, Tag",
            "",
            *(["from acp_notebook.protocol.lazy_names import LazyNames"] if lazy else []),
            "from acp_notebook.protocol.modelbase import (",
            *(
                f"    {n},"
                for n in (
                    "UNKNOWN_TAG",
                    "AcpModel",
                    "MethodSpec",
                    "UnknownVariant",
                    "parse",
                    "tag_by_field",
                    "tag_by_keys",
                    "tag_list_by_keys",
                    "wrap_unknown",
                )
            ),
            ")",
            "",
            f"SCHEMA_RELEASE = {pystr(self.release)}",
            '"""The upstream schema release these models were generated from."""',
            f"PROTOCOL_VERSION = {int(self.meta['version'])}",
            '"""The wire protocol version (``initialize.protocolVersion``)."""',
            "",
            *self.union_members(lazy),
            "# --- scalar aliases",
            "",
        ]
        for name, expr in self.aliases.items():
            out += [
                f"{name} = {expr}",
                *docstring(first_paragraph(self.defs[name].get("description")) or name, ""),
            ]
        out += [
            "",
            "# --- enums: the known values; fields using them accept any other string too",
            "",
        ]
        for name, values in self.enums.items():
            out += fmt(Expr("Literal", [pystr(v) for v in values], "[]"), "", f"{name} = ")
            out += docstring(first_paragraph(self.defs[name].get("description")) or name, "")
        out += [
            "",
            "# --- models and unions (a missing or unknown discriminator selects the Unknown* member),",
            "# each after the types it uses: no forward references, so the annotations are plain",
            "# objects that pydantic does not have to evaluate (models are built on first use).",
        ]
        if lazy:
            out += [
                "# Each is made by its factory ``_Name`` the first time it is looked up (``_lazy``,",
                "# the module's __getattr__): the factory's parameters are the types it uses, made",
                "# first; a turn pays only for the classes it uses.",
                "",
                "_lazy = LazyNames(globals())",
            ]
        for item in self.ordered():
            if isinstance(item, UnionSpec):
                lines = self.render_union(item)
            else:
                lines = self.render_class(item)
            if lazy:
                lines = self.factory(item.name, self.uses(item.name), lines)
            out += ["", "", *lines]
        out += ["", "", "# --- methods", ""]
        titles = {
            "AGENT": "Methods the agent handles (the client sends them).",
            "CLIENT": "Methods the client handles (the agent sends them).",
            "PROTOCOL": "Protocol-level methods, sent by either side.",
        }
        for side, rows in tables.items():
            lines = [f"{side}_METHODS: dict[str, MethodSpec] = {{"]
            for method, params, result in rows:
                call = Expr("MethodSpec", [pystr(method), params, result or "None"])
                lines += fmt(call, "    ", f"{pystr(method)}: ", ",")
            lines += ["}", f'"""{titles[side]} ``result`` is None for notifications."""']
            if lazy:
                uses = [n for row in rows for n in row[1:] if n is not None]
                lines = [*self.factory(f"{side}_METHODS", list(dict.fromkeys(uses)), lines), ""]
            out += [*lines, ""]
        public = {
            *self.aliases,
            *self.enums,
            *self.classes,
            *self.unions,
            "SCHEMA_RELEASE",
            "PROTOCOL_VERSION",
            "AGENT_METHODS",
            "CLIENT_METHODS",
            "PROTOCOL_METHODS",
            "AcpModel",
            "UnknownVariant",
            "MethodSpec",
            "parse",
            "UNKNOWN_TAG",
            "UNION_MEMBERS",
        }
        out += ["__all__ = [", *(f"    {pystr(n)}," for n in sorted(public)), "]", ""]
        if lazy:
            out[-1:] = ["", "__getattr__ = _lazy.getattr", "__dir__ = _lazy.dir", ""]
        return out

    def factory(self, name: str, uses: list[str], lines: list[str]) -> list[str]:
        """``lines`` (the definition of ``name``) as the body of its factory ``_name``, whose
        parameters are the names the definition uses."""
        return [
            "@_lazy.factory",
            *fmt(Expr(f"def _{name}", uses), "", "", ":"),
            *(f"    {line}" if line else "" for line in lines),
            f"    return {name}",
        ]

    def module_doc(self) -> list[str]:
        def para(text: str, indent: str = "") -> list[str]:
            return textwrap.wrap(
                text, LINE, subsequent_indent=indent, break_long_words=False, break_on_hyphens=False
            )

        doc = para(
            "Every object in ``$defs`` is an :class:`AcpModel` (pydantic) with snake_case attributes"
            " whose aliases are the exact wire names (``_meta`` is ``field_meta``). Parse leniently"
            " with ``Model.parse(data)`` or ``parse(TypeOrUnion, data)``: unknown fields are kept,"
            " unknown variants become ``Unknown*`` models, broken parts are dropped or reset as the"
            " schema's ``x-deserialize-*`` hints say. Serialise with ``model.to_wire()``: only the"
            " fields that were set, plus the discriminators of variants built in code."
        )
        doc.append("")
        doc += para(
            "Discriminated unions have an ``Unknown*`` fallback that keeps the raw dict (``.raw``;"
            " ``to_wire()`` returns it unchanged). Where the schema has a default variant for an"
            " absent discriminator, absence selects it and only an unrecognised value selects"
            ' Unknown; the schema\'s open "other" variants are Unknown too. An object made of base'
            " properties plus one of several variants becomes one flat class per variant. Unions"
            " (name: discriminator: value -> class):"
        )
        doc.append("")
        for union in self.unions.values():
            how = f"``{union.prop}``" if union.prop else "which keys are present"
            if union.kind == "list":
                how = "the keys of the first item"
            parts = []
            for v in union.variants:
                tag = v.tag if not v.default else "absent"
                if v.default and DEFAULT_TAG_ON_WIRE.get(union.name) == v.tag:
                    tag = f"{v.tag} or absent"
                parts.append(f"{tag} -> {v.annotation or v.cls}")
            rest = f"; otherwise {union.unknown}" if union.unknown else " (no Unknown: lists)"
            doc += para(f"- ``{union.name}``: {how}: {', '.join(parts)}{rest}.", "  ")
        doc.append("")
        doc += para(
            "Enums (``oneOf`` string constants) are ``Literal`` aliases of the known values; fields"
            " using them are typed ``<Enum> | str`` so that a value added by a newer agent is kept"
            " as a plain string instead of failing the message (``typing.get_args(ToolKind)`` lists"
            " the known ones)."
        )
        doc.append("")
        doc += para(
            "Optional fields default to None or to the schema's default. If the schema does not"
            ' allow null for an optional field, None means "absent" and ``to_wire()`` leaves it'
            " out; for a nullable field an explicit None is sent as null (e.g."
            " ``SessionInfoUpdate(title=None)`` clears the title)."
        )
        doc += ["", "Deliberate deviations from the schema, for messages real agents send:", ""]
        for (owner, wire), why in DEVIATIONS.items():
            doc += para(f"- ``{owner}.{snake(wire)}`` may be None: {why}.", "  ")
        doc.append("")
        doc += para(
            "The JSON-RPC envelope types (``AgentRequest``, ``ClientResponse``, ...) are not"
            " generated: ``AGENT_METHODS``, ``CLIENT_METHODS`` and ``PROTOCOL_METHODS`` map each"
            " method name to its params and result types instead."
        )
        return [line.replace("\\", "\\\\").rstrip() for line in doc]


def main(argv: list[str]) -> int:
    gen = Generator(*load())
    files = gen.render()
    for warning in gen.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if "--check" in argv:
        stale = [name for name, text in files.items() if not _current(OUT.with_name(name), text)]
        for name in stale:
            print(
                f"{OUT.with_name(name).relative_to(ROOT)} is out of date:"
                " run python scripts/gen_models.py",
                file=sys.stderr,
            )
        return 1 if stale else 0
    for name, text in files.items():
        OUT.with_name(name).write_text(text, encoding="utf-8")
    print(
        f"wrote {OUT.relative_to(ROOT)} and its stub: {len(gen.classes)} classes,"
        f" {len(gen.unions)} unions"
    )
    return 0


def _current(path: Path, text: str) -> bool:
    return path.exists() and path.read_text(encoding="utf-8") == text


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
