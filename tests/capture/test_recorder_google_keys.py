"""Google API keys in an imported HAR masked as captured flows' are
(``capture.masking.mask_flow``), through a real proxy's
``POST /admin/flows/import``.

A HAR saved from a browser calling Google's API directly carries the key in clear: in
``x-goog-api-key``, in the URL's ``?key=``, in the body. Covers: each is masked in the
stored flow (the header by its name whatever its value, the query parameter, a key's
shape in the body), in ``/admin/flows``, and in the flow's HAR export (``request.url``
and ``queryString``), none of which holds the key.
"""

from __future__ import annotations

import json
from typing import Any

import httpx

from tests.capture.test_har import devtools_har
from tests.capture.test_recorder import _config, _flow, proxied
from tests.proxy.harness import KEY
from tests.upstream_server import run_in_thread

GOOGLE = "AIzaSyB-imported-HAR-key_0123456789abcd"
OTHER = "ya29-not-a-key-shape-but-a-credential-4321"  # only the header's name tells


def _gemini_har() -> Any:
    har = devtools_har()
    request = har["log"]["entries"][0]["request"]
    base = "https://generativelanguage.googleapis.com/v1beta/models/g:streamGenerateContent"
    request["url"] = f"{base}?alt=sse&key={GOOGLE}"
    request["queryString"] = [{"name": "alt", "value": "sse"}, {"name": "key", "value": GOOGLE}]
    request["headers"].append({"name": "x-goog-api-key", "value": OTHER})
    request["postData"]["text"] = json.dumps({"contents": [{"parts": [{"text": GOOGLE}]}]})
    return har


def test_an_imported_hars_google_keys_are_masked_everywhere() -> None:
    har = _gemini_har()
    headers = {"x-api-key": KEY, "content-type": "application/har+json"}
    with run_in_thread() as up, proxied(_config(up.url)) as (server, _):
        r = httpx.post(
            server.url + "/admin/flows/import",
            content=json.dumps(har).encode(),
            headers=headers,
            timeout=10,
        )
        assert r.status_code == 201, r.text
        first = _flow(server, r.json()["flows"][0]["id"])
        listed = httpx.get(server.url + "/admin/flows", headers=headers, timeout=10).text
        exported = httpx.get(
            server.url + f"/admin/flows/{first.id}.har", headers=headers, timeout=10
        ).json()
    assert first.request.url.endswith(f"streamGenerateContent?alt=sse&key=…{GOOGLE[-4:]}")
    assert dict(first.request.headers)["x-goog-api-key"] == f"…{OTHER[-4:]}"
    assert (
        first.request.body
        == json.dumps({"contents": [{"parts": [{"text": "*" * 35 + GOOGLE[-4:]}]}]}).encode()
    )
    request = exported["log"]["entries"][0]["request"]
    assert request["url"].endswith(f"?alt=sse&key=…{GOOGLE[-4:]}")
    assert {"name": "key", "value": f"…{GOOGLE[-4:]}"} in request["queryString"]
    text = json.dumps(first.to_json()) + listed + json.dumps(exported)
    assert GOOGLE not in text and OTHER not in text
