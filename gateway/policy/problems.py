"""Reading the YAML and saying clearly what is wrong with it.

Every problem is one line, `<where>: <what is wrong>`; `where` is a dotted path into the
file (`tenants.acme.routes./v1/embeddings.threshold`, list items as `detectors[1]`) or a
line and column for YAML syntax. Values are echoed only when they cannot be secrets.
"""

from __future__ import annotations

import types
from collections.abc import Hashable, Sequence
from typing import Annotated, Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from mithril.gateway.policy.model import PolicyFile, suggest

SECRET_FIELDS = frozenset({"api_key", "admin_token", "keys"})
"""Fields whose values are never echoed in an error (a raw key pasted by mistake)."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys (PyYAML silently keeps the last)."""


def _mapping_without_duplicates(loader: _Loader, node: yaml.MappingNode) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    first_line: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, Hashable):
            continue  # construct_mapping below reports it
        if key in first_line:
            raise yaml.constructor.ConstructorError(
                None,
                None,
                f"duplicate key {key!r} (first at line {first_line[key] + 1})",
                key_node.start_mark,
            )
        first_line[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=True)


_Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _mapping_without_duplicates,  # type: ignore[arg-type]
)


def parse_yaml(text: str) -> tuple[object, str | None]:
    """(data, None), or (None, problem) with the line and column of a syntax error."""
    try:
        return yaml.load(text, Loader=_Loader), None  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "YAML"
        what = exc.problem or exc.context or "invalid YAML"
        if exc.context and exc.problem and exc.context != exc.problem:
            what = f"{what} ({exc.context})"
        return None, f"{where}: {what}"
    except yaml.YAMLError as exc:
        return None, f"invalid YAML: {exc}"


def dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def type_name(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__


def _unwrap(tp: Any) -> Any:
    while True:
        origin = get_origin(tp)
        if origin is Annotated:
            tp = get_args(tp)[0]
        elif origin in (Union, types.UnionType):
            rest = [a for a in get_args(tp) if a is not type(None)]
            if len(rest) != 1:
                return tp
            tp = rest[0]
        else:
            return tp


def _model_at(loc: Sequence[str | int]) -> type[BaseModel] | None:
    """The model class found at `loc` inside a PolicyFile, if any."""
    tp: Any = PolicyFile
    for part in loc:
        tp = _unwrap(tp)
        origin = get_origin(tp)
        if isinstance(tp, type) and issubclass(tp, BaseModel):
            field = tp.model_fields.get(str(part))
            if field is None:
                return None
            tp = field.annotation
        elif origin is dict:
            tp = get_args(tp)[1]
        elif origin in (list, tuple):
            tp = get_args(tp)[0]
        else:
            return None
    tp = _unwrap(tp)
    return tp if isinstance(tp, type) and issubclass(tp, BaseModel) else None


def _belongs_under(model: type[BaseModel], name: str) -> str:
    """' (it belongs under upstream:)' when `name` is an option of a nested section."""
    for section, field in model.model_fields.items():
        inner = _unwrap(field.annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel) and name in inner.model_fields:
            return f" (it belongs under {section}:)"
    return ""


def _shown(error: ErrorDetails) -> str:
    """' (got X)' for a short scalar outside secret fields, else ''."""
    value = error.get("input")
    if any(part in SECRET_FIELDS for part in error["loc"]):
        return ""
    if value is None:
        return " (got null)"
    if isinstance(value, bool):
        # YAML 1.1 reads off/on/no/yes as booleans: `mode: off` arrives as false.
        return f" (got {str(value).lower()}; quote words such as off, on, no, yes)"
    if isinstance(value, int | float) or (isinstance(value, str) and len(value) <= 60):
        return f" (got {value!r})"
    return ""


def _message(error: ErrorDetails) -> str:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    value = error.get("input")
    if kind == "extra_forbidden":
        name = str(error["loc"][-1])
        model = _model_at(error["loc"][:-1])
        known = sorted(model.model_fields) if model else []
        hint = (suggest(name, known) or _belongs_under(model, name)) if model else ""
        return f"unknown option{hint}" + (f"; options are {', '.join(known)}" if known else "")
    if kind == "missing":
        return "is required"
    if kind in ("dict_type", "model_type", "model_attributes_type"):
        return f"expected a mapping, got {type_name(value)}"
    if kind in ("list_type", "tuple_type"):
        return f"expected a list, got {type_name(value)}"
    if kind == "string_type":
        return f"expected a string, got {type_name(value)}"
    if kind in ("bool_type", "bool_parsing"):
        return "expected true or false" + _shown(error)
    if kind in ("float_type", "float_parsing", "int_type", "int_parsing"):
        return "expected a number" + _shown(error)
    if kind == "int_from_float":
        return "expected a whole number" + _shown(error)
    if kind == "literal_error":
        return f"expected {ctx.get('expected')}" + _shown(error)
    bounds = {
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("greater than", "gt"),
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        bound = ctx.get(key)
        shown = f"{bound:g}" if isinstance(bound, float) else str(bound)
        return f"must be {words} {shown}" + _shown(error)
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return error["msg"]


def from_validation_error(exc: ValidationError, prefix: Sequence[str | int] = ()) -> list[str]:
    """One `<dotted.path>: <what>` line per pydantic error."""
    lines = []
    for error in exc.errors():
        loc: list[str | int] = [*prefix, *error["loc"]]
        if loc and loc[-1] == "[key]":
            # A bad mapping key: the path ends at the key itself (a key, not an index).
            loc = [*loc[:-2], str(loc[-2])]
        where = dotted(loc)
        what = _message(error)
        lines.append(f"{where}: {what}" if where else what)
    return lines
