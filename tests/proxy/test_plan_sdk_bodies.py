"""Bodies the official SDKs' types allow, through the real proxy.

Each body is built by hypothesis from the SDK's own request TypedDicts
(:mod:`tests.codecs.sdk_strategies`), then by the SDK itself (``create()`` into a mock
transport: the exact bytes, path and headers a client of the SDK sends), and posted to a
real proxy on loopback. Behind it one scripted upstream plays every upstream protocol
(openai-chat, anthropic, responses, lmstudio) in repair mode and the three SDK protocols
in passthrough mode, answering 200 with a short valid answer of its protocol
(:mod:`tests.proxy.sdk_bodies_support`), so any 4xx is the proxy's own. Checked:

(a) the proxy answers 2xx: no refusal, no 5xx. The one refusal allowed is for
    a Responses reference (``previous_response_id``, ``item_reference``)
    to an answer the proxy cannot resolve gets the Responses API's own error;
(b) on a same-protocol route, in both modes, the upstream gets the client's body field for
    field with only ``model`` replaced (``up/m`` -> ``m``);
(c) in translation, every field the client sent (each top-level field, and each name at a
    place of :mod:`streamscope.codecs.vocabulary`: a content block, a tool, an item) is
    ``mapped`` by the client codec's vocabulary or named in the flow's request notes
    (``request_notes`` of ``GET /admin/flows/{id}``; a note on an enclosing element
    covers what is inside it). A null carries nothing and needs no note.

Two tests: random bodies on every route (client protocol x upstream x mode), and for every
name the SDK defines at every request place (each content block, item, tool, role,
top-level param) bodies that hold it, on routes hypothesis picks among the client's.

One proxy and one upstream serve the module; the calls are sequential, so the upstream
request and the flow of a call are the newest ones. ``python -m tests.proxy.sdk_refusals``
runs many more bodies and prints each distinct problem with a minimal body.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.codecs.sdk_places import PLACES, ROOTS, places
from tests.codecs.sdk_strategies import header_keys, params, planted
from tests.proxy.sdk_bodies_support import (
    CLIENTS,
    ROUTES,
    UPSTREAMS,
    Env,
    call,
    client_model,
    differences,
    notes_of,
    own_error_for_a_reference,
    running,
    unreported,
    upstream_model,
)

QUICK = settings(
    deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
ROUTE_EXAMPLES = 15  # random bodies per route (15 routes)
NAME_EXAMPLES = 2  # bodies per SDK name (about 270 names)
NAMES = [
    (client, place, name)
    for client in CLIENTS
    for place in PLACES[client]
    if place.root == "request"
    for name in places(client)[place.name]
    if name not in header_keys(client)
]


@pytest.fixture(scope="module")
def env() -> Iterator[Env]:
    with running() as env:
        yield env


def verify(env: Env, client: str, upstream: str, kwargs: dict[str, Any]) -> None:
    """(a), (b) and (c) of the module's docstring for one body on one route."""
    protocol, mode = UPSTREAMS[upstream]
    c = call(env, client, kwargs)
    if own_error_for_a_reference(c):
        return
    # (a) nothing the SDK's types allow is refused, and nothing breaks
    assert c.status < 400, f"the proxy refused a body the {client} SDK builds:" + c.shown()
    assert c.upstream is not None, "the call never reached the upstream" + c.shown()
    body = c.sent.json
    if protocol == client:
        # (b) same protocol, either mode: the client's body, only the model replaced
        want = {**body, "model": upstream_model(upstream)}
        assert c.upstream.json == want, (
            f"the {mode} {client} route changed the body at "
            f"{', '.join(differences(c.upstream.json, want))}:\nthe upstream got "
            f"{json.dumps(c.upstream.json)}" + c.shown()
        )
    else:
        # (c) translation: everything mapped or named in the flow's request notes
        missing = unreported(client, body, notes_of(env))
        assert not missing, (
            f"{client} -> {protocol}: fields neither mapped nor in the request notes: "
            + ", ".join(missing)
            + c.shown()
        )


@pytest.mark.parametrize(("client", "upstream"), ROUTES, ids=[f"{c}_to_{u}" for c, u in ROUTES])
def test_sdk_bodies_pass_every_route(env: Env, client: str, upstream: str) -> None:
    bodies = params(ROOTS[client]()["request"], client_model(upstream), omit=header_keys(client))

    @settings(QUICK, max_examples=ROUTE_EXAMPLES)
    @given(bodies)
    def check(kwargs: dict[str, Any]) -> None:
        verify(env, client, upstream, kwargs)

    check()


@pytest.mark.parametrize(
    ("client", "place", "name"), NAMES, ids=[f"{c}:{p.name}:{n}" for c, p, n in NAMES]
)
def test_every_name_the_sdk_defines_passes(env: Env, client: str, place: Any, name: str) -> None:
    routes = [u for c, u in ROUTES if c == client]

    # No shrinking: a planted body is small already, and shrinking 270 failing tests
    # would take CI many minutes (python -m tests.proxy.sdk_refusals gives minimal ones).
    @settings(QUICK, max_examples=NAME_EXAMPLES, phases=[Phase.explicit, Phase.generate])
    @given(st.data(), st.sampled_from(routes))
    def check(data: st.DataObject, upstream: str) -> None:
        model = client_model(upstream)
        kwargs = data.draw(planted(client, place, name, model, omit=header_keys(client)))
        verify(env, client, upstream, kwargs)

    check()
