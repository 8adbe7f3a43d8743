"""The official SDKs' request and stream types, walked, and the names each *place* of
:mod:`streamscope.codecs.vocabulary` holds for the installed, pinned SDKs.

The walker reads annotations as the SDKs declare them (``typing.get_type_hints(...,
include_extras=True)``) and follows what they are made of: TypedDicts (wire names from an
``Annotated[..., PropertyInfo(alias=...)]``, ``Required``/``NotRequired`` and each
declaring class's totality, since ``__required_keys__`` is wrong for the SDKs' string
annotations on Python 3.11), unions and ``Optional``, type aliases (plain values at
runtime), ``Literal``, containers (``Iterable``, ``List``, ``SequenceNotStr``, ``Dict``),
``Annotated`` discriminated unions, and pydantic models (field aliases) for stream types.

No SDK name is listed here. :func:`walk` follows a path through a type (a field, the
items of a container, the union members whose ``type`` or ``role`` is some literal);
:func:`tags`, :func:`keys` and :func:`choices` read the names found there, and
:func:`conforms` says whether a JSON value is one the type allows. The places of
vocabulary.py are paths of this kind (:mod:`tests.codecs.sdk_places`).
"""

from __future__ import annotations

import collections.abc as cabc
import types
import typing
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import pydantic
import typing_extensions as te

NoneType = type(None)
_WRAPPERS = {te.Required, te.NotRequired, te.ReadOnly, typing.Required, typing.NotRequired}
_SEQUENCES = {
    list,
    set,
    frozenset,
    cabc.Iterable,
    cabc.Sequence,
    cabc.Collection,
    cabc.MutableSequence,
    cabc.Set,
}
_MAPPINGS = {dict, cabc.Mapping, cabc.MutableMapping}


# -- reading one annotation ----------------------------------------------------------------


def strip(tp: Any) -> Any:
    """``tp`` without ``Required``/``NotRequired``/``ReadOnly`` and ``Annotated`` around it."""
    while True:
        origin = typing.get_origin(tp)
        if origin in _WRAPPERS:
            tp = typing.get_args(tp)[0]
        elif origin is typing.Annotated or origin is te.Annotated:
            tp = tp.__origin__
        else:
            return tp


def _required_marker(tp: Any) -> bool | None:
    """True for ``Required[...]``, False for ``NotRequired[...]``, None for neither (the
    marker may sit inside an ``Annotated``)."""
    while True:
        origin = typing.get_origin(tp)
        if origin in (te.Required, typing.Required):
            return True
        if origin in (te.NotRequired, typing.NotRequired):
            return False
        if origin in (te.ReadOnly,):
            tp = typing.get_args(tp)[0]
        elif origin is typing.Annotated:
            tp = tp.__origin__
        else:
            return None


def _alias(tp: Any) -> str | None:
    """The wire name an ``Annotated[..., PropertyInfo(alias=...)]`` gives, anywhere in the
    wrappers around ``tp``."""
    while True:
        origin = typing.get_origin(tp)
        if origin in _WRAPPERS:
            tp = typing.get_args(tp)[0]
        elif origin is typing.Annotated:
            for meta in tp.__metadata__:
                alias = getattr(meta, "alias", None)
                if isinstance(alias, str) and alias:
                    return alias
            tp = tp.__origin__
        else:
            return None


def is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and te.is_typeddict(tp)


def is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, pydantic.BaseModel)


def is_shape(tp: Any) -> bool:
    """A TypedDict or a pydantic model: something with named fields."""
    return is_typeddict(tp) or is_model(tp)


def members(tp: Any) -> list[Any]:
    """The members of a union (flattened; ``Optional`` gives ``NoneType``), or ``[tp]``."""
    tp = strip(tp)
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        return [m for arg in typing.get_args(tp) for m in members(arg)]
    return [tp]


def literals(tp: Any) -> list[Any]:
    """The ``Literal`` values among ``tp``'s members."""
    out: list[Any] = []
    for m in members(tp):
        if typing.get_origin(m) in (Literal, te.Literal):
            out += typing.get_args(m)
    return out


def container(tp: Any) -> tuple[str, Any] | None:
    """``("list", item)`` for a sequence-like type, ``("dict", value)`` for a mapping with
    string keys, ``("tuple", args)`` for a tuple; None for anything else."""
    tp = strip(tp)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in _SEQUENCES or tp in _SEQUENCES:
        return ("list", args[0] if args else object)
    if origin in _MAPPINGS or tp in _MAPPINGS:
        return ("dict", args[1] if len(args) == 2 else object)
    if origin is tuple:
        return ("tuple", args)
    return None


def items(tp: Any) -> list[Any]:
    """The item types of the containers among ``tp``'s members, as union members."""
    out: list[Any] = []
    for m in members(tp):
        c = container(m)
        if c is not None and c[0] == "list":
            out += members(c[1])
    return out


# -- shapes --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    name: str  # the Python name (a TypedDict key the SDK's methods take)
    wire: str  # the name on the wire (the alias when there is one)
    tp: Any  # the annotation, wrappers kept (strip() it to read it)
    required: bool


def _declared_total(cls: Any, key: str) -> bool:
    """The totality of the TypedDict that declared ``key`` (a base, or ``cls``)."""
    for base in getattr(cls, "__orig_bases__", ()):
        if is_typeddict(base) and key in getattr(base, "__annotations__", {}):
            return _declared_total(base, key)
    return bool(getattr(cls, "__total__", True))


@cache
def fields(cls: Any) -> dict[str, Field]:
    """A shape's fields by wire name."""
    out: dict[str, Field] = {}
    if is_model(cls):  # pydantic has resolved the annotations (Annotated kept as metadata)
        for name, info in cls.model_fields.items():
            wire = info.alias or name
            out[wire] = Field(name, wire, info.annotation, info.is_required())
        return out
    hints = typing.get_type_hints(cls, include_extras=True)
    for name, tp in hints.items():
        marker = _required_marker(tp)
        required = marker if marker is not None else _declared_total(cls, name)
        wire = _alias(tp) or name
        out[wire] = Field(name, wire, tp, required)
    return out


def shapes(tp: Any) -> list[Any]:
    return [m for m in members(tp) if is_shape(m)]


def field_types(tp: Any, key: str) -> list[Any]:
    """The union (as members) of field ``key`` of every shape among ``tp``'s members."""
    out: list[Any] = []
    for s in shapes(tp):
        f = fields(s).get(key)
        if f is not None:
            out += members(f.tp)
    return out


def tag(shape: Any, key: str = "type") -> list[str]:
    """The string literals field ``key`` of a shape may hold."""
    f = fields(shape).get(key)
    return [v for v in literals(f.tp) if isinstance(v, str)] if f else []


def where(tp: Any, key: str, value: str) -> list[Any]:
    """The shapes among ``tp``'s members whose field ``key`` may be the literal ``value``."""
    return [s for s in shapes(tp) if value in tag(s, key)]


def tags(tp: Any, key: str = "type") -> set[str]:
    """Every literal ``key`` of the shapes among ``tp``'s members (``type`` names)."""
    return {v for s in shapes(tp) for v in tag(s, key)}


def keys(tp: Any) -> set[str]:
    """Every field's wire name of the shapes among ``tp``'s members."""
    return {k for s in shapes(tp) for k in fields(s)}


def choices(tp: Any) -> set[str]:
    """The string literals of a union plus the ``type`` names of its shapes (a
    ``tool_choice``: ``"auto"``, or ``{"type": "function", ...}``)."""
    return {v for v in literals(tp) if isinstance(v, str)} | tags(tp)


def walk(tp: Any, *steps: str) -> list[Any]:
    """Follow ``steps`` from ``tp``: ``"[]"`` the items of its containers, ``"key=value"``
    the shapes whose field ``key`` may be ``value``, any other word a field."""
    at = members(tp)
    for step in steps:
        if step == "[]":
            at = [i for m in at for i in items(m)]
        elif "=" in step:
            key, value = step.split("=", 1)
            at = [s for m in at for s in where(m, key, value)]
        else:
            at = [t for m in at for t in field_types(m, step)]
    return at


def union(tps: Iterable[Any]) -> Any:
    """The members as one ``Union`` (for the extractors, which take one type)."""
    found = list(dict.fromkeys(tps))
    return typing.Union[tuple(found)] if found else NoneType  # noqa: UP007


# -- whether a value is one the types allow ---------------------------------------------------

_LEAF_TYPES: dict[Any, tuple[type, ...]] = {
    str: (str,),
    int: (int,),
    float: (int, float),
    bool: (bool,),
    NoneType: (NoneType,),
}


def conforms(value: Any, tp: Any) -> bool:
    """Whether the JSON ``value`` is one ``tp`` allows (a shape: its required keys there,
    no others, each conforming; wire names)."""
    return any(_conforms_member(value, m) for m in members(tp))


def _conforms_member(value: Any, tp: Any) -> bool:
    if typing.get_origin(tp) is Literal:
        return any(value == v and type(value) is type(v) for v in typing.get_args(tp))
    if is_shape(tp):
        if not isinstance(value, dict):
            return False
        known = fields(tp)
        if any(k not in known for k in value) or any(
            f.required and w not in value for w, f in known.items()
        ):
            return False
        return all(conforms(v, known[k].tp) for k, v in value.items())
    c = container(tp)
    if c is not None:
        kind, inner = c
        if kind == "list":
            return isinstance(value, list) and all(conforms(v, inner) for v in value)
        if kind == "dict":
            return isinstance(value, dict) and all(conforms(v, inner) for v in value.values())
        return False
    if tp in (object, typing.Any):
        return True
    if isinstance(tp, type) and issubclass(tp, str):  # a str enum
        return isinstance(value, str)
    allowed = _LEAF_TYPES.get(tp)
    if allowed is None:
        return False
    if tp is not bool and isinstance(value, bool):
        return False
    return isinstance(value, allowed)


__all__ = [
    "Field",
    "choices",
    "conforms",
    "container",
    "field_types",
    "fields",
    "is_model",
    "is_shape",
    "is_typeddict",
    "items",
    "keys",
    "literals",
    "members",
    "shapes",
    "strip",
    "tag",
    "tags",
    "union",
    "walk",
    "where",
]
