"""Plausible tool-call arguments from a tool's JSON Schema, deterministically.

The demo's tool scenario calls whatever tools a request defines; its arguments must
validate against their schemas, so clients that check them (and users who print them)
see sensible values: ``enum`` picks its first value, ``default``/``examples``/``const``
are honoured, strings are named after their property (``location`` -> ``"Paris"``),
every ``required`` property is present, ``anyOf``/``oneOf`` take their first branch.
"""

from __future__ import annotations

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
    value = _value(schema, "", 0)
    return value if isinstance(value, dict) else {}


def _value(schema: Any, name: str, depth: int) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
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
            return _value(branches[0], name, depth + 1)
    kind = schema.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the first that is not null
        kind = next((k for k in kind if k != "null"), "null")
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    match kind:
        case "object":
            props = schema.get("properties")
            props = props if isinstance(props, dict) else {}
            return {k: _value(v, k, depth + 1) for k, v in props.items()}
        case "array":
            items = _value(schema.get("items", {"type": "string"}), name, depth + 1)
            count = max(int(schema.get("minItems", 1) or 1), 1)
            return [items] * count
        case "integer":
            return int(schema.get("minimum", 0) if schema.get("minimum", 0) > 1 else 1)
        case "number":
            return float(schema.get("minimum", 0) if schema.get("minimum", 0) > 1 else 1.5)
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
    return str(text)


__all__ = ["example_arguments"]
