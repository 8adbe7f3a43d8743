"""Plausible tool-call arguments from a tool's JSON Schema, deterministically.

The demo's tool scenario calls whatever tools a request defines; its arguments must
validate against their schemas, so clients that check them (and users who print them)
see sensible values: ``enum`` picks its first value, ``default``/``examples``/``const``
are honoured, strings are named after their property (``location`` -> ``"Paris"``),
every ``required`` property is present, ``anyOf``/``oneOf`` take their first branch.
"""

from __future__ import annotations

import math
from typing import Any

JSON = dict[str, Any]

# Values for common property names: the demo answers like a friendly model would.
NAMED: dict[str, Any] = {
    "location": "Paris",
    "city": "Paris",
    "country": "France",
    "unit": "celsius",
    "query": "streaming APIs",
    "q": "streaming APIs",
    "url": "https://example.com",
    "email": "demo@example.com",
    "name": "demo",
    "date": "2026-01-01",
    "language": "en",
    "timezone": "Europe/Paris",
}
FORMATS = {
    "date": "2026-01-01",
    "date-time": "2026-01-01T12:00:00Z",
    "time": "12:00:00",
    "email": "demo@example.com",
    "uri": "https://example.com",
    "uuid": "00000000-0000-4000-8000-000000000000",
}
MAX_DEPTH = 6


def example_arguments(schema: JSON) -> JSON:
    """An arguments object for a tool whose ``parameters`` schema is ``schema``."""
    value = _value(schema, "", 0, schema, ())
    return value if isinstance(value, dict) else {}


def _resolve(schema: JSON, root: JSON) -> JSON | None:
    ref = schema.get("$ref")
    if not isinstance(ref, str) or not ref.startswith("#"):
        return None
    node: Any = root
    for key in [k for k in ref[1:].split("/") if k]:
        key = key.replace("~1", "/").replace("~0", "~")
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, dict) else None


def _recursive(schema: Any, path: tuple[str, ...]) -> bool:
    """A ``$ref`` (or an array of one) already being expanded on this path."""
    if not isinstance(schema, dict):
        return False
    if schema.get("$ref") in path:
        return True
    return schema.get("type") == "array" and _recursive(schema.get("items"), path)


def _number(schema: JSON, integer: bool) -> int | float:
    def bound(key: str) -> float | None:
        v = schema.get(key)
        return v if isinstance(v, int | float) and not isinstance(v, bool) else None

    lo, hi = bound("minimum"), bound("maximum")
    xlo, xhi = bound("exclusiveMinimum"), bound("exclusiveMaximum")
    value: float = 1 if integer else 1.5
    if lo is not None and value < lo:
        value = math.ceil(lo) if integer else lo
    if xlo is not None and value <= xlo:
        value = math.floor(xlo) + 1 if integer else xlo + 1
    if hi is not None and value > hi:
        value = math.floor(hi) if integer else hi
    if xhi is not None and value >= xhi:
        low = lo if lo is not None else xlo
        if integer:
            value = math.ceil(xhi) - 1
        else:
            value = (low + xhi) / 2 if low is not None else xhi - 1
    return int(value) if integer else float(value)


def _value(schema: Any, name: str, depth: int, root: JSON, path: tuple[str, ...]) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    target = _resolve(schema, root)
    if target is not None:
        return _value(target, name, depth + 1, root, (*path, schema["$ref"]))
    for key in ("const", "default"):
        if key in schema:
            return schema[key]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        return enum[0]
    for key in ("anyOf", "oneOf", "allOf"):
        branches = schema.get(key)
        if isinstance(branches, list) and branches:
            return _value(branches[0], name, depth + 1, root, path)
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first that is not null
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    match kind:
        case "object":
            props = schema.get("properties")
            props = props if isinstance(props, dict) else {}
            required = [r for r in schema.get("required", []) if isinstance(r, str)]
            out = {
                k: _value(v, k, depth + 1, root, path)
                for k, v in props.items()
                if k in required or not _recursive(v, path)
            }
            for k in required:
                if k not in out:
                    out[k] = _value({}, k, depth + 1, root, path)
            return out
        case "array":
            items_schema = schema.get("items", {"type": "string"})
            minimum = schema.get("minItems", 0)
            minimum = minimum if isinstance(minimum, int) else 0
            if _recursive(items_schema, path):
                count = minimum
            else:
                count = max(minimum, 1)
            enum = items_schema.get("enum") if isinstance(items_schema, dict) else None
            if schema.get("uniqueItems") and isinstance(enum, list) and len(enum) >= count > 1:
                return enum[:count]
            items = _value(items_schema, name, depth + 1, root, path) if count else None
            return [items] * count
        case "integer":
            return _number(schema, True)
        case "number":
            return _number(schema, False)
        case "boolean":
            return True
        case "null":
            return None
        case _:
            return _string(schema, name)


def _string(schema: JSON, name: str) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    text = NAMED.get(name.lower(), name.replace("_", " ") or "demo")
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(text) < min_length:
        text = text.ljust(min_length, "x")
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and len(text) > max_length:
        text = text[:max_length]
    return str(text)


__all__ = ["example_arguments"]
