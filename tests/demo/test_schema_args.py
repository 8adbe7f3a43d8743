"""``example_arguments``: plausible, deterministic tool arguments that validate against the
tool's JSON Schema.

``validate`` below is a small JSON Schema checker for the keywords these tests use (type,
enum, const, properties/required, items/minItems/maxItems/uniqueItems, numeric bounds,
string lengths, anyOf/oneOf/allOf, local ``$ref``); ``jsonschema`` is not installed.
"""

from __future__ import annotations

import json
import math
import re
import uuid
from datetime import date, datetime, time
from typing import Any
from urllib.parse import urlparse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.demo.schema_args import MAX_DEPTH, call_arguments, example_arguments

TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def _resolve(ref: str, root: dict[str, Any]) -> dict[str, Any]:
    assert ref.startswith("#/"), ref
    node: Any = root
    for key in ref[2:].split("/"):
        node = node[key]
    return node


def validate(value: Any, schema: dict[str, Any], root: dict[str, Any] | None = None) -> list[str]:
    """The problems of ``value`` against ``schema`` (empty: valid)."""
    root = schema if root is None else root
    if "$ref" in schema:
        return validate(value, _resolve(schema["$ref"], root), root)
    problems: list[str] = []
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [kind] if kind else []
    if kinds and not any(TYPES[k](value) for k in kinds):
        return [f"{value!r} is not of type {kind}"]
    if "const" in schema and value != schema["const"]:
        problems.append(f"{value!r} != const {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        problems.append(f"{value!r} not in enum {schema['enum']!r}")
    if TYPES["number"](value):
        for key, ok in (
            ("minimum", lambda b: value >= b),
            ("maximum", lambda b: value <= b),
            ("exclusiveMinimum", lambda b: value > b),
            ("exclusiveMaximum", lambda b: value < b),
        ):
            if key in schema and not ok(schema[key]):
                problems.append(f"{value!r} breaks {key} {schema[key]}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            problems.append(f"{value!r} shorter than minLength")
        if len(value) > schema.get("maxLength", len(value)):
            problems.append(f"{value!r} longer than maxLength")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            problems.append(f"{len(value)} items < minItems")
        if len(value) > schema.get("maxItems", len(value)):
            problems.append(f"{len(value)} items > maxItems")
        if schema.get("uniqueItems") and len({json.dumps(v) for v in value}) < len(value):
            problems.append(f"{value!r} has duplicates (uniqueItems)")
        for item in value:
            problems += validate(item, schema.get("items", {}), root)
    if isinstance(value, dict):
        for name in schema.get("required", []):
            if name not in value:
                problems.append(f"required property {name!r} missing")
        for name, sub in schema.get("properties", {}).items():
            if name in value:
                problems += validate(value[name], sub, root)
    for sub in schema.get("allOf", []):
        problems += validate(value, sub, root)
    if "anyOf" in schema and all(validate(value, s, root) for s in schema["anyOf"]):
        problems.append(f"{value!r} matches no anyOf branch")
    if "oneOf" in schema and sum(not validate(value, s, root) for s in schema["oneOf"]) != 1:
        problems.append(f"{value!r} does not match exactly one oneOf branch")
    return problems


def obj(required: list[str] | None = None, **props: Any) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required is not None:
        schema["required"] = required
    return schema


def test_the_validator_rejects_what_it_should() -> None:
    schema = obj(["a"], a={"type": "integer", "minimum": 2}, b={"enum": ["x"]})
    assert validate({"a": 2, "b": "x"}, schema) == []
    assert validate({"a": 1}, schema) and validate({"b": "x"}, schema)
    assert validate({"a": True}, schema) and validate({"a": 3, "b": "y"}, schema)


def test_weather_tool_gets_named_values() -> None:
    schema = obj(
        ["location"],
        location={"type": "string", "description": "City name"},
        unit={"type": "string", "enum": ["celsius", "fahrenheit"]},
    )
    assert example_arguments(schema) == {"location": "Paris", "unit": "celsius"}


def test_realistic_search_tool() -> None:
    schema = obj(
        ["query", "max_results"],
        query={"type": "string"},
        max_results={"type": "integer", "minimum": 1, "maximum": 50, "default": 5},
        safe={"type": "boolean"},
        sort={"type": "string", "enum": ["relevance", "date"]},
        user_id={"type": "string"},
        Country={"type": "string"},
    )
    args = example_arguments(schema)
    assert args == {
        "query": "streaming APIs",
        "max_results": 5,
        "safe": True,
        "sort": "relevance",
        "user_id": "user id",
        "Country": "France",
    }
    assert validate(args, schema) == []


def test_nested_objects_and_arrays_with_min_items() -> None:
    address = obj(["city", "zip"], city={"type": "string"}, zip={"type": "string", "minLength": 5})
    schema = obj(
        ["address", "tags", "stops"],
        address=address,
        tags={"type": "array", "items": {"type": "string"}, "minItems": 3},
        stops={"type": "array", "items": address},
        blank={"type": "array"},
    )
    args = example_arguments(schema)
    assert args["address"] == {"city": "Paris", "zip": "zipxx"}
    assert args["tags"] == ["tags", "tags", "tags"]
    assert args["stops"] == [{"city": "Paris", "zip": "zipxx"}]
    assert args["blank"] == ["blank"]
    assert validate(args, schema) == []
    assert json.loads(json.dumps(args)) == args


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ({"type": "string", "const": "fixed", "default": "d"}, "fixed"),
        ({"type": "integer", "default": 7, "examples": [3]}, 7),
        ({"type": "string", "examples": ["first", "second"]}, "first"),
        ({"type": "integer", "enum": [10, 20]}, 10),
        ({"enum": ["only"]}, "only"),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, 1),
        ({"oneOf": [{"type": "boolean"}, {"type": "integer"}]}, True),
        ({"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}, None),
        ({"type": ["string", "null"]}, "x"),
        ({"type": ["null", "integer"]}, 1),
        ({"type": ["null"]}, None),
        ({"type": "null"}, None),
        ({"type": "integer"}, 1),
        ({"type": "integer", "minimum": 0}, 1),
        ({"type": "integer", "minimum": 5}, 5),
        ({"type": "integer", "minimum": -5}, 1),
        ({"type": "number"}, 1),  # whole: clients parse such numbers as integers
        ({"type": "number", "minimum": 2.5}, 3),
        ({"type": "number", "minimum": 0.2, "maximum": 0.6}, 0.4),  # no whole one fits
        ({"type": "string", "minLength": 4}, "xxxx"),
        ({}, "x"),
    ],
)
def test_keywords(prop: dict[str, Any], expected: Any) -> None:
    schema = obj(["x"], x=prop)
    args = example_arguments(schema)
    assert args == {"x": expected}
    assert type(args["x"]) is type(expected)
    assert validate(args, schema) == []


@pytest.mark.parametrize(
    ("fmt", "check"),
    [
        ("date", date.fromisoformat),
        ("date-time", lambda v: datetime.fromisoformat(v.replace("Z", "+00:00"))),
        ("time", time.fromisoformat),
        ("email", lambda v: re.fullmatch(r"[^@\s]+@[^@\s]+\.[a-z]+", v) or 1 / 0),
        ("uri", lambda v: urlparse(v).scheme in ("http", "https") or 1 / 0),
        ("uuid", uuid.UUID),
    ],
)
def test_formats(fmt: str, check: Any) -> None:
    value = example_arguments(obj(["when"], when={"type": "string", "format": fmt}))["when"]
    assert isinstance(value, str)
    check(value)


def test_properties_without_type_and_non_object_roots() -> None:
    assert example_arguments({"properties": {"city": {}}}) == {"city": "Paris"}
    assert example_arguments({"type": "string"}) == {}
    assert example_arguments({}) == {}
    assert example_arguments({"type": "object"}) == {}
    assert example_arguments(obj()) == {}


def test_deterministic() -> None:
    schema = obj(["a"], a={"type": "array", "items": obj(b={"type": "number"}), "minItems": 2})
    assert example_arguments(schema) == example_arguments(schema)
    assert json.dumps(example_arguments(schema)) == '{"a": [{"b": 1}, {"b": 1}]}'


def test_deep_nesting_stops_at_the_depth_limit() -> None:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(MAX_DEPTH + 5):
        schema = obj(["child"], child=schema)
    args = example_arguments(schema)
    depth, node = 0, args
    while isinstance(node, dict) and "child" in node:
        node, depth = node["child"], depth + 1
    assert MAX_DEPTH <= depth <= MAX_DEPTH + 1  # deep enough, and bounded
    assert json.loads(json.dumps(args)) == args


# -- constraints a generator must respect (the module promises valid arguments) --------------

# property name -> schema (the name matters for strings: ``country`` is "France")
CONSTRAINED: dict[str, dict[str, Any]] = {
    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
    "offset": {"type": "integer", "minimum": -10, "maximum": -1},
    "retries": {"type": "integer", "exclusiveMinimum": 5},
    "ratio": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    "country": {"type": "string", "minLength": 2, "maxLength": 2},
    "label": {"type": "string", "maxLength": 3},
    "choices": {
        "type": "array",
        "items": {"enum": ["a", "b", "c"]},
        "minItems": 2,
        "uniqueItems": True,
    },
}


@pytest.mark.parametrize("prop", sorted(CONSTRAINED))
def test_bounded_values_validate(prop: str) -> None:
    schema = obj([prop], **{prop: CONSTRAINED[prop]})
    args = example_arguments(schema)
    assert validate(args, schema) == [], args


def test_required_property_without_a_definition_is_present() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a", "q"]}
    args = example_arguments(schema)
    assert "q" in args and args["a"] == 1


def test_refs_to_defs_are_resolved() -> None:
    """What pydantic's ``model_json_schema()`` writes for a nested model."""
    schema = {
        "$defs": {
            "Address": obj(["city", "zip"], city={"type": "string"}, zip={"type": "integer"}),
            "Unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        },
        "type": "object",
        "properties": {"address": {"$ref": "#/$defs/Address"}, "unit": {"$ref": "#/$defs/Unit"}},
        "required": ["address", "unit"],
    }
    args = example_arguments(schema)
    assert args == {"address": {"city": "Paris", "zip": 1}, "unit": "celsius"}
    assert validate(args, schema) == []


def test_recursive_refs_terminate_with_valid_arguments() -> None:
    children = {"type": "array", "items": {"$ref": "#/$defs/Node"}}
    node = obj(["value"], value={"type": "integer"}, children=children)
    schema = {"$defs": {"Node": node}, "$ref": "#/$defs/Node"}
    args = example_arguments(schema)
    assert args.get("value") == 1
    assert validate(args, schema) == []


# -- property: simple schemas always validate ----------------------------------------------------

NAMES = st.text("abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=10) | st.sampled_from(
    ["location", "unit", "query", "email", "date", "name", "url", "City"]
)
SCALARS = st.one_of(
    st.builds(dict, type=st.just("string")),
    st.fixed_dictionaries({"type": st.just("string"), "minLength": st.integers(0, 30)}),
    st.fixed_dictionaries({"type": st.just("integer")}, optional={"minimum": st.integers(-50, 50)}),
    st.fixed_dictionaries(
        {"type": st.just("number")},
        optional={"minimum": st.floats(-50, 50, allow_nan=False) | st.integers(-50, 50)},
    ),
    st.builds(dict, type=st.just("boolean")),
    st.fixed_dictionaries({"enum": st.lists(st.text(max_size=5) | st.integers(), min_size=1)}),
    st.fixed_dictionaries(
        {"type": st.just("string"), "enum": st.lists(st.text(max_size=5), min_size=1)}
    ),
    st.fixed_dictionaries({"type": st.sampled_from([["string", "null"], ["null", "integer"]])}),
)
PROPERTY = SCALARS | st.fixed_dictionaries(
    {"type": st.just("array"), "items": SCALARS}, optional={"minItems": st.integers(0, 4)}
)


@st.composite
def simple_schemas(draw: st.DrawFn) -> dict[str, Any]:
    props = draw(st.dictionaries(NAMES, PROPERTY, max_size=8))
    required = draw(st.lists(st.sampled_from(sorted(props)), unique=True)) if props else []
    return {"type": "object", "properties": props, "required": required}


@settings(max_examples=150, deadline=None)
@given(simple_schemas())
def test_simple_schemas_validate(schema: dict[str, Any]) -> None:
    args = example_arguments(schema)
    assert set(args) == set(schema["properties"])
    assert validate(args, schema) == [], args
    assert json.loads(json.dumps(args)) == args
    assert example_arguments(schema) == args


@pytest.mark.parametrize(
    ("name", "bounds", "path"),
    [("dir", {}, "."), ("dir", {"minLength": 2}, None), ("file", {"maxLength": 3}, None)],
)
def test_a_path_named_property_keeps_its_length_bounds(
    name: str, bounds: dict[str, int], path: str | None
) -> None:
    # (hypothesis found it: a folder is ".", one character short of a minLength of 2; a
    # path that does not fit its bounds gives way to the named text, padded or cut)
    schema = {"type": "object", "properties": {name: {"type": "string", **bounds}}}
    args = example_arguments(schema)
    assert validate(args, schema) == [], args
    if path is not None:
        assert args[name] == path
    else:
        assert args[name] not in (".", "README.md")


@settings(max_examples=150, deadline=None)
@given(
    low=st.integers(-20, 20) | st.floats(-20, 20, allow_nan=False),
    span=st.integers(1, 20) | st.floats(0.01, 20, allow_nan=False),
    exclusive=st.booleans(),
)
def test_a_number_is_whole_when_its_bounds_hold_a_whole_one(
    low: float, span: float, exclusive: bool
) -> None:
    """Codex declares ``number`` for counts and parses an integer: 1.5 was refused."""
    keys = ("exclusiveMinimum", "exclusiveMaximum") if exclusive else ("minimum", "maximum")
    prop = {"type": "number", keys[0]: low, keys[1]: low + span}
    schema = obj(["n"], n=prop)
    value = example_arguments(schema)["n"]
    assert validate({"n": value}, schema) == []
    whole = [
        k
        for k in range(math.floor(low) - 1, math.ceil(low + span) + 2)
        if not validate({"n": k}, schema)
    ]
    if whole:
        assert type(value) is int and value in whole
    assert call_arguments(schema) == {"n": value}


def test_call_arguments_give_the_required_and_the_valued_properties() -> None:
    """What a model gives and an agent runs: no placeholder in an optional property
    (Claude Code's Read took ``pages: "pages"``, its Bash ``run_in_background: true``)."""
    schema = obj(
        ["query"],
        query={"type": "string"},
        limit={"type": "integer", "default": 5},
        sort={"enum": ["relevance", "date"]},
        mode={"const": "fast"},
        lang={"type": "string", "examples": ["fr"]},
        pages={"type": "string"},
        background={"type": "boolean"},
        nested={"$ref": "#/$defs/Unit"},
    )
    schema["$defs"] = {"Unit": {"enum": ["celsius"]}}
    args = call_arguments(schema)
    assert args == {
        "query": "streaming APIs",
        "limit": 5,
        "sort": "relevance",
        "mode": "fast",
        "lang": "fr",
        "nested": "celsius",
    }
    assert validate(args, schema) == []
    assert set(example_arguments(schema)) == set(schema["properties"])


def test_call_arguments_leave_optional_nested_properties_out_too() -> None:
    inner = obj(["city"], city={"type": "string"}, zip={"type": "string"})
    assert call_arguments(obj(["where"], where=inner)) == {"where": {"city": "Paris"}}


@pytest.mark.parametrize(
    ("name", "description", "cwd", "expected"),
    [
        ("path", "Path to the file", None, "README.md"),
        ("file_path", "The absolute path to the file to read", "/work/x", "/work/x/README.md"),
        ("file_path", "The absolute path to the file to read", None, "README.md"),
        ("filename", "", "/work/x", "README.md"),  # relative unless asked otherwise
        ("filePath", "Absolute path.", "C:\\Users\\me", "C:\\Users\\me\\README.md"),
        ("path", "The directory to search in", "/work/x", "."),
        ("dir_path", "Absolute directory path", "/work/x", "/work/x"),
        ("folder", "", None, "."),
        ("pattern", "The glob pattern to match files against", None, "README*"),
    ],
)
def test_paths_point_at_a_harmless_file_that_is_there(
    name: str, description: str, cwd: str | None, expected: str
) -> None:
    schema = obj([name], **{name: {"type": "string", "description": description}})
    assert call_arguments(schema, cwd=cwd) == {name: expected}
    assert example_arguments(schema, cwd=cwd) == {name: expected}
