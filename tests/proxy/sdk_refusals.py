"""What the proxy refuses, breaks or changes of the bodies the official SDKs build: a
report, not a test (``python -m tests.proxy.sdk_refusals [examples per route]``).

Runs many bodies per route of tests/proxy/test_plan_sdk_bodies.py (same proxy, same
scripted upstream, same strategies), groups what went wrong by kind and message (indexes
and random values blanked), and shrinks one body of each group greedily to a minimal one
that still goes wrong the same way and still conforms to the SDK's types (list items and
optional keys removed, strings emptied). Prints each group with the routes it was seen
on and its minimal body, so a codec's fix can be checked against it.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.strategies import SearchStrategy

from tests.codecs.sdk_places import PLACES, ROOTS, places
from tests.codecs.sdk_strategies import header_keys, params, planted
from tests.codecs.sdk_types import conforms
from tests.proxy.sdk_bodies_support import (
    ROUTES,
    UPSTREAMS,
    Env,
    call,
    client_model,
    differences,
    own_error_for_a_reference,
    running,
    upstream_model,
)


def _blank(message: str) -> str:
    """A message with indexes and random values blanked, kept type names (``'document'``)."""
    message = re.sub(r"\[\d+\]", "[i]", message)

    def quoted(m: re.Match[str]) -> str:
        inner = m.group(1)
        return m.group(0) if re.fullmatch(r"[a-z][a-z0-9_.\-]{0,39}", inner) else "'…'"

    return re.sub(r"'([^']*)'", quoted, message)[:300]


class _Crashes(logging.Handler):
    """The proxy's logged exceptions: where a 500 came from."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.last = ""

    def emit(self, record: logging.LogRecord) -> None:
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{frame.filename.split('/app/')[-1]}:{frame.lineno}"
            self.last = f"{type(exc).__name__}: {exc} at {where}"


CRASHES = _Crashes()


def verdict(env: Env, client: str, upstream: str, kwargs: dict[str, Any]) -> str | None:
    """What went wrong with one body on one route, as a group key; None: nothing."""
    CRASHES.last = ""
    c = call(env, client, kwargs)
    if own_error_for_a_reference(c):
        return None
    if c.status >= 400:
        crash = f" [{CRASHES.last}]" if c.status >= 500 and CRASHES.last else ""
        return f"{c.status} {_blank(str(c.error.get('message') or c.answer[:200]))}{crash}"
    protocol, _ = UPSTREAMS[upstream]
    if c.upstream is None:
        return "never reached the upstream"
    if protocol == client:
        want = {**c.sent.json, "model": upstream_model(upstream)}
        diff = differences(c.upstream.json, want)
        if diff:
            return "same-protocol body changed: " + ", ".join(sorted({_blank(d) for d in diff}))
    return None


@dataclass
class Group:
    key: str
    routes: set[str] = field(default_factory=set)
    seen: int = 0
    example: tuple[str, str, dict[str, Any]] | None = None  # client, upstream, kwargs


def explore(env: Env, examples: int) -> dict[str, Group]:
    """``examples`` random bodies per route, then bodies holding each name of each request
    place (``examples // 20`` per route, at least one)."""
    groups: dict[str, Group] = {}
    for client, upstream in ROUTES:
        omit = header_keys(client)
        bodies = params(ROOTS[client]()["request"], client_model(upstream), omit=omit)
        _explore(env, client, upstream, bodies, examples, groups)
        for place in PLACES[client]:
            if place.root != "request":
                continue
            for name in places(client)[place.name]:
                if name not in omit:
                    bodies = planted(client, place, name, client_model(upstream), omit)
                    _explore(env, client, upstream, bodies, max(1, examples // 20), groups)
    return groups


def _explore(
    env: Env,
    client: str,
    upstream: str,
    bodies: SearchStrategy[dict[str, Any]],
    examples: int,
    groups: dict[str, Group],
) -> None:

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(bodies)
    def run(kwargs: dict[str, Any]) -> None:
        key = verdict(env, client, upstream, kwargs)
        if key is None:
            return
        g = groups.setdefault(key, Group(key))
        g.routes.add(f"{client}->{upstream}")
        g.seen += 1
        if g.example is None or len(json.dumps(kwargs)) < len(json.dumps(g.example[2])):
            g.example = (client, upstream, kwargs)

    run()


def _smaller(value: Any) -> Iterator[Any]:
    """Values one step smaller than ``value``: an item or a key removed, a string emptied,
    anywhere inside."""
    if isinstance(value, dict):
        for k in list(value):
            yield {x: v for x, v in value.items() if x != k}
        for k, v in value.items():
            for s in _smaller(v):
                yield {**value, k: s}
    elif isinstance(value, list):
        for i in range(len(value)):
            yield value[:i] + value[i + 1 :]
        for i, v in enumerate(value):
            for s in _smaller(v):
                yield [*value[:i], s, *value[i + 1 :]]
    elif isinstance(value, str) and value:
        yield ""
    elif isinstance(value, int) and not isinstance(value, bool) and value > 1:
        yield 1


def shrink(env: Env, group: Group) -> dict[str, Any]:
    assert group.example is not None
    client, upstream, kwargs = group.example
    root = ROOTS[client]()["request"]
    changed = True
    while changed:
        changed = False
        for candidate in _smaller(kwargs):
            if candidate.get("model") != kwargs["model"] or not conforms(candidate, root):
                continue
            if verdict(env, client, upstream, candidate) == group.key:
                kwargs, changed = candidate, True
                break
    return kwargs


def main(examples: int) -> None:
    logging.getLogger("streamscope").addHandler(CRASHES)
    with running() as env:
        groups = explore(env, examples)
        print(f"{len(groups)} distinct problems, {examples} bodies per route\n")
        for g in sorted(groups.values(), key=lambda g: (-len(g.routes), g.key)):
            small = shrink(env, g)
            assert g.example is not None
            print(f"* {g.key}")
            print(f"  seen {g.seen}x on {', '.join(sorted(g.routes))}")
            print(f"  minimal ({g.example[0]} -> {g.example[1]}): {json.dumps(small)}\n")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
