"""A hostile upstream hides the account key from a search of its bytes:
it writes the key with JSON ``\\u`` escapes, or sends it as deltas of 1 to 7
characters (each its own network write, or all in one). Through the real proxy, in
passthrough and repair, the client's assembled text, the captured flow (both legs), its
HAR and the SQLite file are searched for the key in every form it was sent in.
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path
from typing import Any

import httpx
import pytest

from streamscope.capture.har import to_har
from streamscope.proxy.server import ProxyServer
from tests.proxy.harness import KEY, make_config, proxied
from tests.upstream_server import RecordedRequest, Script, run_in_thread

MODEL = "hostile-model"
# Random-looking like a real key, of characters the filler text never uses.
KEY_CHARS = string.ascii_uppercase + string.digits
_RNG = random.Random(31)
ACCOUNT_KEY = "sk-" + "".join(_RNG.choice(KEY_CHARS) for _ in range(44))
FILLER = "here it is: "


def _sse(payload: dict[str, Any]) -> bytes:
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _delta(raw_text: str) -> bytes:
    """A Chat delta whose content is ``raw_text`` as written inside the JSON string."""
    choice = {"index": 0, "delta": {"content": "\x00"}, "finish_reason": None}
    payload = {"id": "c", "object": "chat.completion.chunk", "model": MODEL, "choices": [choice]}
    return _sse(payload).replace(b"\\u0000", raw_text.encode())


def _escaped(text: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in text)


def _hostile(req: RecordedRequest) -> Script:
    """The key the request came with, sent back as the request's ``user`` asks:
    ``escaped``, or ``pieces-N`` (N characters a delta, a write each) or ``pieces-N-one``
    (all in one write)."""
    key = req.headers.get("authorization", "").removeprefix("Bearer ")
    how = (req.json or {}).get("user", "")
    if how == "escaped":
        deltas = [_delta(FILLER), _delta(_escaped(key)), _delta(" bye")]
    else:
        size = int(how.split("-")[1])
        deltas = [_delta(FILLER), *(_delta(key[i : i + size]) for i in range(0, len(key), size))]
        deltas.append(_delta(" bye"))
    done = {"index": 0, "delta": {}, "finish_reason": "stop"}
    tail = [_sse({"id": "c", "object": "chat.completion.chunk", "choices": [done]})]
    tail.append(b"data: [DONE]\n\n")
    chunks: list[bytes | float] = []
    if how.endswith("-one"):
        chunks = [b"".join(deltas + tail)]
    else:
        for d in deltas + tail:
            chunks += [d, 0.003]  # (a write each: the proxy reads them apart)
    return Script(headers={"content-type": "text/event-stream"}, chunks=chunks)


def _joined(data: bytes) -> str:
    """The text a Chat client assembles from a stream's bytes."""
    out = ""
    for line in data.split(b"\n"):
        if line.startswith(b"data: {"):
            for choice in json.loads(line[6:]).get("choices") or []:
                out += (choice.get("delta") or {}).get("content") or ""
    return out


def _shown(text: str) -> str:
    """What a reader sees of the key in an assembled text: the rest, stars and filler
    taken away."""
    return text.replace(FILLER, "").replace(" bye", "").replace("*", "")


def _config(url: str, mode: str) -> Any:
    upstream = {
        "name": "up",
        "protocol": "openai-chat",
        "base_url": url + "/v1",
        "default": True,
        "mode": mode,
        "accounts": [{"name": "a", "api_key": ACCOUNT_KEY}],
        "models": [MODEL],
    }
    return make_config([upstream])


def _stored(server: ProxyServer, request_id: str) -> tuple[bytes, bytes, bytes]:
    """The captured flow's upstream leg, client leg and its HAR, as stored."""
    flows = server.app.flows
    assert flows is not None
    flows.flush()
    flow = flows.get(request_id)
    assert flow is not None
    har = json.dumps(to_har([flow])).encode()
    return flow.upstream_leg.raw(), flow.client_leg.raw(), har


CASES = ["escaped"] + [f"pieces-{n}" for n in range(1, 8)] + ["pieces-3-one", "pieces-7-one"]


@pytest.mark.parametrize("mode", ["passthrough", "repair"])
def test_a_key_hidden_from_a_byte_search_reaches_no_client_and_no_capture(
    mode: str, tmp_path: Path
) -> None:
    capture = tmp_path / "flows.sqlite3"
    with run_in_thread() as up:
        up.route("POST", "/v1/chat/completions", _hostile)
        with proxied(_config(up.url, mode), capture_path=capture) as running:
            results = {}
            for how in CASES:
                body = {"model": MODEL, "stream": True, "user": how, "messages": []}
                r = httpx.post(
                    running.url + "/v1/chat/completions",
                    json=body,
                    headers={"authorization": f"Bearer {KEY}"},
                    timeout=10,
                )
                assert r.status_code == 200, r.text
                results[how] = (r.content, *_stored(running.server, r.headers["x-request-id"]))
        disk = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
    assert all(r.headers["authorization"] == f"Bearer {ACCOUNT_KEY}" for r in up.requests)
    hidden = [ACCOUNT_KEY.encode(), _escaped(ACCOUNT_KEY).encode()]
    problems = {}
    for how, (client, upstream, _client_stored, har) in results.items():
        client_text = _joined(client)
        # The stream itself came through (only the key is gone)...
        assert client_text.startswith(FILLER) and client_text.endswith(" bye"), client_text
        # ...and of the key a client shows at most the first 2 characters (a chunk that
        # ended with them went out before the rest came), or its last 4 (the mask of a
        # key that stood whole).
        shown = _shown(client_text)
        if not (shown == ACCOUNT_KEY[-4:] or (len(shown) <= 2 and ACCOUNT_KEY.startswith(shown))):
            problems[f"{how}: client"] = shown
        # The capture keeps the upstream's leg masked whole (it has all of it at once).
        shown = _shown(_joined(upstream))
        if shown not in ("", ACCOUNT_KEY[-4:]):
            problems[f"{how}: captured upstream leg"] = shown
        for where, data in (("client bytes", client), ("HAR", har)):
            if any(h in data for h in hidden):
                problems[f"{how}: {where}"] = "the key as it was sent"
    assert not any(h in disk for h in hidden)
    assert problems == {}


def test_a_secret_in_json_escapes_is_masked_in_messages_and_logs() -> None:
    # A message an upstream's JSON error carried, quoted still escaped (a log line).
    from streamscope.redact import Redactor

    redactor = Redactor([ACCOUNT_KEY])
    line = f'upstream said {{"error": "bad key {_escaped(ACCOUNT_KEY)}"}}'
    masked = redactor.text(line)
    assert _escaped(ACCOUNT_KEY) not in masked and masked.endswith(f'…{ACCOUNT_KEY[-4:]}"}}')
    raw = line.encode()
    assert _escaped(ACCOUNT_KEY).encode() not in redactor.data(raw)
    same = redactor.same_length(raw)
    assert len(same) == len(raw) and _escaped(ACCOUNT_KEY).encode() not in same
