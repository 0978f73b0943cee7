"""Checking a JSON body against the contract's schema, with messages that name the field. Pure.

The request bodies' schemas (``web.contract``, ``web.controls_contract``) use a small subset of
JSON Schema 2020-12, and this module checks exactly that subset, so the document the API
publishes and the checks the routes make cannot drift apart:

``type`` (one name or a list) · ``properties`` · ``required`` · ``additionalProperties``
(``false`` or a schema) · ``propertyNames`` · ``items`` · ``minItems`` / ``maxItems`` ·
``uniqueItems`` · ``minLength`` / ``maxLength`` · ``pattern`` (anchored) · ``minimum`` /
``maximum`` · ``enum`` · ``const`` · ``format: date-time`` · ``oneOf`` with a ``discriminator``.

Rules:
- ``check(schema, value)`` returns the value, or raises ``ShapeRefused`` with the path of the
  first field that is wrong and what it should be (``humans[2]: must be an integer >= 1``).
- JSON's integers include numbers with no fraction (``42.0``): they are integers here too,
  and come back as ``int``.
- An unknown field is refused by name, with the fields the object takes.
- A boolean is never an integer, and an integer is a number only where the schema says number.
- A ``oneOf`` is chosen by its discriminator's value, so the message speaks of that variant.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from ..errors import InvalidInput

_TYPES: dict[str, Any] = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


class ShapeRefused(InvalidInput):
    """A request body is not the shape the contract gives for it. The message names the field."""


def check(schema: dict[str, Any], value: Any, path: str = "body") -> Any:
    """``value`` if it has the shape ``schema`` describes (integral numbers as ``int``);
    else raise ``ShapeRefused``."""
    if "oneOf" in schema:
        return _check_one_of(schema, value, path)
    if isinstance(value, float) and value.is_integer() and _allows(schema, "integer"):
        value = int(value)
    if "const" in schema and value != schema["const"]:
        _refuse(path, f"must be {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        _refuse(path, f"must be one of {', '.join(map(repr, schema['enum']))}")
    kinds = schema.get("type")
    if kinds is not None:
        names = [kinds] if isinstance(kinds, str) else list(kinds)
        if not any(_is(name, value) for name in names):
            _refuse(path, f"must be {_describe(schema)}, got {_json_name(value)}")
    if isinstance(value, dict):
        return _check_object(schema, value, path)
    if isinstance(value, list):
        return _check_array(schema, value, path)
    if isinstance(value, str):
        _check_string(schema, value, path)
    elif isinstance(value, int) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            _refuse(path, f"must be an integer >= {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            _refuse(path, f"must be an integer <= {schema['maximum']}")
    return value


def _allows(schema: dict[str, Any], name: str) -> bool:
    kinds = schema.get("type")
    return kinds == name or (isinstance(kinds, list) and name in kinds)


def _check_one_of(schema: dict[str, Any], value: Any, path: str) -> Any:
    key = schema["discriminator"]["propertyName"]
    variants = {variant["properties"][key]["const"]: variant for variant in schema["oneOf"]}
    if not isinstance(value, dict):
        _refuse(path, f"must be an object with {key!r} one of {', '.join(map(repr, variants))}")
    chosen = value.get(key)
    if not isinstance(chosen, str) or chosen not in variants:
        _refuse(f"{path}.{key}", f"must be one of {', '.join(map(repr, variants))}, got {chosen!r}")
    return check(variants[chosen], value, path)


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: str) -> dict[str, Any]:
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    if extra is False:
        unknown = sorted(set(value) - set(properties))
        if unknown:
            known = ", ".join(properties) or "none"
            _refuse(path, f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                          f"the fields are {known}")
    missing = [name for name in schema.get("required", ()) if name not in value]
    if missing:
        _refuse(path, f"missing field{'s' if len(missing) > 1 else ''} {', '.join(map(repr, missing))}")
    names = schema.get("propertyNames")
    checked = {}
    for name, item in value.items():
        if names is not None:
            check(names, name, f"{path} key {name!r}")
        if name in properties:
            item = check(properties[name], item, f"{path}.{name}")
        elif isinstance(extra, dict):
            item = check(extra, item, f"{path}.{name}")
        checked[name] = item
    return checked


def _check_array(schema: dict[str, Any], value: list[Any], path: str) -> list[Any]:
    if "minItems" in schema and len(value) < schema["minItems"]:
        _refuse(path, f"must hold at least {schema['minItems']} item{'s' if schema['minItems'] > 1 else ''}")
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        _refuse(path, f"must hold at most {schema['maxItems']} items")
    items = schema.get("items")
    if items is not None:
        value = [check(items, item, f"{path}[{index}]") for index, item in enumerate(value)]
    if schema.get("uniqueItems") and len({json.dumps(v, sort_keys=True) for v in value}) != len(value):
        _refuse(path, "must not repeat an item")
    return value


def _check_string(schema: dict[str, Any], value: str, path: str) -> str:
    if "minLength" in schema and len(value) < schema["minLength"]:
        _refuse(path, f"must be at least {schema['minLength']} character{'s' if schema['minLength'] > 1 else ''}")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        _refuse(path, f"must be at most {schema['maxLength']} characters, got {len(value)}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        _refuse(path, f"must match {schema['pattern']}")
    if schema.get("format") == "date-time":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is None or parsed.tzinfo is None:
            _refuse(path, "must be an ISO 8601 date-time with its offset, like 2026-11-02T09:30:00Z")
    return value


def _is(name: str, value: Any) -> bool:
    if name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if name == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name]) and not (name != "boolean" and isinstance(value, bool))


def _describe(schema: dict[str, Any]) -> str:
    kinds = schema["type"]
    names = [kinds] if isinstance(kinds, str) else list(kinds)
    return " or ".join("an " + n if n[0] in "aeiou" else ("null" if n == "null" else "a " + n) for n in names)


def _json_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    return {dict: "an object", list: "an array", str: "a string", int: "an integer", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _refuse(path: str, what: str) -> None:
    raise ShapeRefused(f"{path}: {what}")
