"""Plausible tool-call arguments from a tool's JSON Schema, deterministically.

The demo's tool scenario calls a client's tools; its arguments must validate against
their schemas, so clients that check them (and users who print them) see sensible values:
``enum`` picks its first value, ``default``/``examples``/``const`` are honoured, strings
are named after their property (``location`` -> ``"Paris"``), every ``required`` property
is present, ``anyOf``/``oneOf`` take their first branch.

- Numbers are whole wherever the bounds allow one: clients parse a ``number`` they mean
  as a count into an integer (Codex declares ``max_output_tokens: number`` and refuses
  ``1.5``). A fraction comes only when no whole number fits.
- Paths point at something harmless that is there: a property named like a file
  (``path``, ``file_path``, ``filename``, ``file``) gets ``README.md``, one named like a
  folder (``dir``, ``directory``, ``folder``, or a ``path`` its description calls a
  directory) gets ``.``; when its description asks for an absolute path and the working
  directory is known (``cwd``), the path is made absolute in it. A ``pattern`` gets
  ``README*``, which both a glob and a regular expression read as "README...".

:func:`example_arguments` fills every property; :func:`call_arguments`, what the demo
sends, only the required ones and the optional ones whose schema names their value
(``default``, ``const``, ``enum``, ``examples``), as a model does: an agent runs the call,
and an optional property filled with a placeholder changes what it does.
"""

from __future__ import annotations

import math
import ntpath
import posixpath
import re
from dataclasses import dataclass
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
FILE_NAMES = frozenset({"path", "file", "filepath", "filename", "absolutepath", "targetfile"})
FOLDER_NAMES = frozenset(
    {"dir", "dirpath", "directory", "folder", "cwd", "workdir", "workingdirectory"}
)
EXISTING_FILE = "README.md"
PATTERN = "README*"  # a glob and a regular expression alike
MAX_DEPTH = 6


@dataclass(frozen=True, slots=True)
class _Options:
    every: bool  # every property, or the required and the valued ones
    cwd: str | None  # the client's working directory, for absolute paths


def example_arguments(schema: JSON, *, cwd: str | None = None) -> JSON:
    """An arguments object for a tool whose ``parameters`` schema is ``schema``, with
    every property filled."""
    value = _value(schema, "", 0, schema, (), _Options(True, cwd))
    return value if isinstance(value, dict) else {}


def call_arguments(schema: JSON, *, cwd: str | None = None) -> JSON:
    """The arguments the demo calls a tool with: the required properties, and the
    optional ones whose schema names their value (``cwd``: the client's working
    directory, where a path must be absolute)."""
    value = _value(schema, "", 0, schema, (), _Options(False, cwd))
    return value if isinstance(value, dict) else {}


def _valued(schema: Any, root: JSON) -> bool:
    """An optional property whose schema names its value, so a model would give it."""
    if not isinstance(schema, dict):
        return False
    target = _resolve(schema, root)
    if target is not None:
        return _valued(target, root)
    return any(k in schema for k in ("const", "default", "enum")) or bool(schema.get("examples"))


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
    """1, or the whole number nearest it inside the bounds; a ``number`` whose bounds
    hold no whole number gets a fraction between them."""

    def bound(key: str) -> float | None:
        v = schema.get(key)
        return v if isinstance(v, int | float) and not isinstance(v, bool) else None

    lo, hi = bound("minimum"), bound("maximum")
    xlo, xhi = bound("exclusiveMinimum"), bound("exclusiveMaximum")
    value = 1
    if lo is not None and value < lo:
        value = math.ceil(lo)
    if xlo is not None and value <= xlo:
        value = math.floor(xlo) + 1
    if hi is not None and value > hi:
        value = math.floor(hi)
    if xhi is not None and value >= xhi:
        value = math.ceil(xhi) - 1
    fits = (
        (lo is None or value >= lo)
        and (hi is None or value <= hi)
        and (xlo is None or value > xlo)
        and (xhi is None or value < xhi)
    )
    if fits or integer:
        return value
    low = lo if lo is not None else xlo
    high = hi if hi is not None else xhi
    if low is not None and high is not None:
        return (low + high) / 2
    return float(low if low is not None else high if high is not None else 1)


def _value(
    schema: Any, name: str, depth: int, root: JSON, path: tuple[str, ...], opts: _Options
) -> Any:
    if not isinstance(schema, dict) or depth > MAX_DEPTH:
        return None
    target = _resolve(schema, root)
    if target is not None:
        return _value(target, name, depth + 1, root, (*path, schema["$ref"]), opts)
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
            return _value(branches[0], name, depth + 1, root, path, opts)
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
                k: _value(v, k, depth + 1, root, path, opts)
                for k, v in props.items()
                if k in required or (not _recursive(v, path) and (opts.every or _valued(v, root)))
            }
            for k in required:
                if k not in out:
                    out[k] = _value({}, k, depth + 1, root, path, opts)
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
            items = _value(items_schema, name, depth + 1, root, path, opts) if count else None
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
            return _string(schema, name, opts.cwd)


def _path(schema: JSON, name: str, cwd: str | None) -> str | None:
    """A harmless path that is there, for a property named like a file or folder."""
    key = re.sub(r"[^a-z0-9]", "", name.lower())
    about = str(schema.get("description") or "").lower()
    if key in FOLDER_NAMES or (key == "path" and "director" in about and "file" not in about):
        relative = "."
    elif key in FILE_NAMES:
        relative = EXISTING_FILE
    else:
        return None
    if "absolute" not in about or not cwd:
        return relative
    join = posixpath if cwd.startswith("/") else ntpath
    return cwd if relative == "." else join.join(cwd, relative)


def _fits(text: str, schema: JSON) -> bool:
    """Whether ``text`` is within the schema's minLength and maxLength."""
    low, high = schema.get("minLength"), schema.get("maxLength")
    return not (isinstance(low, int) and len(text) < low) and not (
        isinstance(high, int) and len(text) > high
    )


def _string(schema: JSON, name: str, cwd: str | None) -> str:
    fmt = schema.get("format")
    if isinstance(fmt, str) and fmt in FORMATS:
        return FORMATS[fmt]
    path = _path(schema, name, cwd)
    if path is not None and _fits(path, schema):  # (else: "." for a minLength of 2)
        return path
    if name.lower() == "pattern":
        return PATTERN
    text = NAMED.get(name.lower(), name.replace("_", " ") or "demo")
    min_length = schema.get("minLength")
    if isinstance(min_length, int) and len(text) < min_length:
        text = text.ljust(min_length, "x")
    max_length = schema.get("maxLength")
    if isinstance(max_length, int) and len(text) > max_length:
        text = text[:max_length]
    return str(text)


__all__ = ["call_arguments", "example_arguments"]
