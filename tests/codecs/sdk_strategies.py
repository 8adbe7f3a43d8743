"""Hypothesis strategies for request bodies, built from the official SDKs' TypedDicts by
the walker of :mod:`tests.codecs.sdk_types` (``st.from_type`` makes iterators of an
``Iterable``, bytes and files of ``FileTypes``: nothing an SDK can put in a JSON body).

- :func:`params`: the keyword arguments of an SDK's ``create()`` (Python names; the SDK
  writes the wire names itself) or, with ``wire=True``, a body with the wire names.
  Required keys are always there, a few optional ones sometimes; values are JSON (no NaN,
  no lone surrogates: the SDKs send UTF-8), sizes are bounded and nesting is cut at a
  depth, so bodies stay small enough for hypothesis to keep them.
- :func:`planted`: the same, holding a given name at a given place (one content block
  type, item type, tool type, role, top-level param): hypothesis's own choices among 30
  item types leave some unseen in a test's examples, so each name gets bodies of its own.
- :func:`sdk_request`: the HTTP request the SDK itself builds from those arguments, caught
  in a mock transport before it leaves: its path, headers and exact body bytes. That is
  the body a client of the SDK sends (some TypedDict keys go out as headers:
  Anthropic's ``workspace_id``, ``user_profile_id``).
"""

from __future__ import annotations

import json
import typing
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import anthropic
import httpx
import httpx2
import openai
from hypothesis import strategies as st

from tests.codecs import sdk_places
from tests.codecs import sdk_types as t

MAX_DEPTH = 3  # shapes nested deeper than this get their required fields only
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
JSON_SCALAR = st.one_of(
    st.none(), st.booleans(), st.integers(-1000, 1000), TEXT, st.floats(-10, 10, width=32)
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(TEXT, inner, max_size=2),
    max_leaves=4,
)
_LEAVES: dict[Any, st.SearchStrategy[Any]] = {
    str: TEXT,
    int: st.integers(0, 4096),  # bounded: the Anthropic SDK refuses a long non-stream call
    float: st.floats(0, 2, allow_nan=False, allow_infinity=False),
    bool: st.booleans(),
    type(None): st.none(),
    object: JSON_VALUE,
    typing.Any: JSON_VALUE,
}


@cache
def strategy(tp: Any, depth: int = 0, wire: bool = False) -> st.SearchStrategy[Any] | None:
    """Values of ``tp`` that a JSON body can hold; None when it has none (files, streams)."""
    options = []
    for member in t.members(tp):
        one = _member(member, depth, wire)
        if one is not None:
            options.append(one)
    if not options:
        return None
    return options[0] if len(options) == 1 else st.one_of(options)


def _member(tp: Any, depth: int, wire: bool) -> st.SearchStrategy[Any] | None:
    if typing.get_origin(tp) is Literal:
        return st.sampled_from(typing.get_args(tp))
    if t.is_shape(tp):
        return shape(tp, depth + 1, wire)
    c = t.container(tp)
    if c is not None:
        kind, inner = c
        if kind == "tuple":
            return None  # only the SDKs' file tuples, which no JSON body holds
        most = 0 if depth > MAX_DEPTH else (3 if depth <= 1 else 1)
        values = strategy(inner, depth, wire)
        if values is None:
            return st.just([]) if kind == "list" else st.just({})
        if kind == "list":
            return st.lists(values, max_size=most)
        return st.dictionaries(TEXT, values, max_size=most)
    leaf = _LEAVES.get(tp)
    if leaf is not None:
        return leaf
    if isinstance(tp, type) and issubclass(tp, str):  # a str enum
        return st.sampled_from([str(v) for v in tp.__members__.values()])  # type: ignore[attr-defined]
    return None  # IO, PathLike, bytes: files the SDK uploads, not JSON


def shape(
    cls: Any, depth: int, wire: bool, forced: Mapping[str, st.SearchStrategy[Any]] | None = None
) -> st.SearchStrategy[dict[str, Any]] | None:
    """A TypedDict (or pydantic model, as its JSON) with its required keys and a few of the
    optional ones (fewer the deeper it sits, so bodies stay small enough for hypothesis to
    keep; none beyond :data:`MAX_DEPTH`); ``forced``: keys always there, with their own
    values. None when a required field has no JSON value."""
    required: dict[str, st.SearchStrategy[Any]] = {}
    optional: dict[str, st.SearchStrategy[Any]] = {}
    for f in t.fields(cls).values():
        key = f.wire if wire else f.name
        if forced and f.wire in forced:  # forced keys go by their wire names
            required[key] = forced[f.wire]
            continue
        if not f.required and depth > MAX_DEPTH:
            continue
        values = strategy(f.tp, depth, wire)
        if values is None:
            if f.required:
                return None
            continue
        (required if f.required else optional)[key] = values
    most = 8 if depth <= 1 else (3 if depth == 2 else 2)
    return _some_of(required, optional, most)


@st.composite
def _some_of(
    draw: st.DrawFn,
    required: dict[str, st.SearchStrategy[Any]],
    optional: dict[str, st.SearchStrategy[Any]],
    most: int,
) -> dict[str, Any]:
    out = {k: draw(v) for k, v in required.items()}
    if optional:
        for k in sorted(draw(st.sets(st.sampled_from(sorted(optional)), max_size=most))):
            out[k] = draw(optional[k])
    return out


def params(
    root: Any, model: str, wire: bool = False, omit: Iterable[str] = (), **fixed: Any
) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments for a ``create()`` whose params TypedDict (or union of them) is ``root``,
    with ``model`` set, the ``fixed`` keys given their values and the ``omit`` ones left
    out (what the SDK sends as headers: see :func:`header_keys`)."""
    bodies = strategy(root, 0, wire)
    assert bodies is not None, f"{root!r} has no JSON body"
    return _finished(bodies, model, omit, fixed)


def _finished(
    bodies: st.SearchStrategy[dict[str, Any]],
    model: str,
    omit: Iterable[str],
    fixed: dict[str, Any],
) -> st.SearchStrategy[dict[str, Any]]:
    left_out = frozenset(omit)

    def finish(body: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in body.items() if k not in left_out} | {"model": model, **fixed}

    return bodies.map(finish)


def planted(
    protocol: str, place: sdk_places.Place, name: str, model: str, omit: Iterable[str] = ()
) -> st.SearchStrategy[dict[str, Any]]:
    """Like :func:`params`, for bodies that hold ``name`` at ``place`` (a request place)
    at least once: hypothesis's own choice among 30 item types leaves some unseen in a
    test's examples, a planted one cannot be missed."""
    root = sdk_places.ROOTS[protocol]()[place.root]
    bodies = _plant(t.members(root), place.steps, place.final, name, 0, {})
    assert bodies is not None, f"{protocol} {place.name} {name!r}: no body holds it"
    return _finished(bodies, model, omit, {})


def _plant(
    at: list[Any],
    steps: tuple[str, ...],
    final: str,
    name: str,
    depth: int,
    forced: dict[str, st.SearchStrategy[Any]],
) -> st.SearchStrategy[Any] | None:
    """Values of the union ``at`` that hold ``name`` where ``steps`` then ``final`` lead
    (see :class:`~tests.codecs.sdk_places.Place`); ``forced``: keys this value must have
    (from a ``key=value`` step)."""
    if steps and steps[0] == "[]":
        inner = [i for m in at for i in t.items(m)]
        child = _plant(inner, steps[1:], final, name, depth, {})
        others = strategy(t.union(inner), depth)
        if child is None:
            return None
        around = st.lists(others, max_size=1) if others is not None else st.just([])
        return st.tuples(around, child, around).map(lambda a: [*a[0], a[1], *a[2]])
    if steps and "=" in steps[0]:
        key, value = steps[0].split("=", 1)
        chosen = [s for m in at for s in t.where(m, key, value)]
        return _plant(chosen, steps[1:], final, name, depth, {**forced, key: st.just(value)})
    options = []
    for s in t.shapes(t.union(at)):
        here = dict(forced)
        if steps:
            f = t.fields(s).get(steps[0])
            child = (
                None
                if f is None
                else _plant(t.members(f.tp), steps[1:], final, name, depth + 1, {})
            )
            if child is None:
                continue
            here[steps[0]] = child
        elif final == "keys":
            f = t.fields(s).get(name)
            values = None if f is None else strategy(f.tp, depth + 1)
            if values is None:
                continue
            here[name] = values
        elif name in t.tag(s, "type" if final == "choices" else final):
            here["type" if final == "choices" else final] = st.just(name)
        else:
            continue
        one = shape(s, depth + 1, False, here)
        if one is not None:
            options.append(one)
    if not steps and final == "choices" and name in t.literals(t.union(at)):
        options.append(st.just(name))
    return st.one_of(options) if options else None


# -- the request the SDK builds -------------------------------------------------------------


@dataclass(frozen=True)
class SdkRequest:
    method: str
    path: str
    headers: dict[str, str]
    content: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.content)


class _Caught(Exception):
    """Raised in the mock transport: the request is kept, nothing is sent."""


def _caught(kept: list[Any]) -> Any:
    def handle(request: Any) -> Any:
        request.read()
        kept.append(request)
        raise _Caught

    return handle


@cache
def _clients() -> dict[str, Any]:
    kept: list[Any] = []
    a = anthropic.Anthropic(
        api_key="sk-ant-sdk-types",
        base_url="http://sdk.invalid",
        max_retries=0,
        http_client=httpx2.Client(transport=httpx2.MockTransport(_caught(kept))),
    )
    o = openai.OpenAI(
        api_key="sk-sdk-types",
        base_url="http://sdk.invalid/v1",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(_caught(kept))),
    )
    return {
        "kept": kept,
        "anthropic": a.messages.create,
        "openai-chat": o.chat.completions.create,
        "responses": o.responses.create,
    }


def sdk_request(protocol: str, kwargs: dict[str, Any]) -> SdkRequest:
    """The request ``protocol``'s official SDK builds for ``create(**kwargs)``."""
    clients = _clients()
    kept: list[Any] = clients["kept"]
    kept.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated models, params: not what is tested
        try:
            clients[protocol](**kwargs)
        except (_Caught, anthropic.APIConnectionError, openai.APIConnectionError):
            pass
    assert len(kept) == 1, f"the {protocol} SDK sent {len(kept)} requests"
    r = kept[0]
    return SdkRequest(r.method, r.url.path, dict(r.headers), r.content)


# -- what reaches the body --------------------------------------------------------------------

_MINIMAL: dict[Any, Any] = {str: "", int: 1, float: 0.5, bool: False, type(None): None}


def minimal(tp: Any) -> Any:
    """The simplest JSON value of ``tp`` (a shape with its required fields only); raises
    ValueError when it has none."""
    for m in t.members(tp):
        if typing.get_origin(m) is Literal:
            return typing.get_args(m)[0]
        if t.is_shape(m):
            try:
                return {f.name: minimal(f.tp) for f in t.fields(m).values() if f.required}
            except ValueError:
                continue
        c = t.container(m)
        if c is not None and c[0] != "tuple":
            return [] if c[0] == "list" else {}
        if m in _MINIMAL:
            return _MINIMAL[m]
        if m in (object, typing.Any):
            return {}
    raise ValueError(f"{tp!r} has no JSON value")


@cache
def body_keys(protocol: str) -> frozenset[str]:
    """The top-level keys the SDK writes into the body when ``create()`` is given every
    key of its params TypedDict (the others go out as headers)."""
    root = sdk_places.ROOTS[protocol]()["request"]
    every: dict[str, Any] = {}
    for shape_ in t.shapes(root):
        for f in t.fields(shape_).values():
            if f.name not in every:
                every[f.name] = minimal(f.tp)
    every["stream"] = False
    return frozenset(sdk_request(protocol, every).json)


@cache
def places_sent(protocol: str) -> dict[str, tuple[str, ...]]:
    """:func:`~tests.codecs.sdk_places.places`, with the ``request`` place holding only the
    keys the SDK sends in the body (measured by :func:`body_keys`)."""
    found = dict(sdk_places.places(protocol))
    found["request"] = tuple(n for n in found["request"] if n in body_keys(protocol))
    return found


def header_keys(protocol: str) -> tuple[str, ...]:
    """The params TypedDict's keys the SDK sends as headers, not in the body."""
    return tuple(n for n in sdk_places.places(protocol)["request"] if n not in body_keys(protocol))


__all__ = [
    "JSON_VALUE",
    "SdkRequest",
    "body_keys",
    "header_keys",
    "minimal",
    "params",
    "planted",
    "places_sent",
    "sdk_request",
    "shape",
    "strategy",
]
