"""Responses conversation state through the proxy, with openai-python over real sockets.

A second StreamScope proxy serving its demo backend is the first one's upstream in every
protocol (Anthropic, OpenAI Chat, Responses in repair and in passthrough, LM Studio), and
the demo is one too. A client refers back to the proxy's answers (``previous_response_id``,
``item_reference``): a translated upstream gets the whole conversation; a Responses
upstream gets its own ids back as they were sent (and resolves them itself: the second
proxy keeps its answers too) and the proxy's ids as the items they name; an id no one can
resolve gets the Responses API's own error. With a shared database, another replica
resolves what one answered."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from streamscope.config import StorageConfig
from tests.proxy.demo_support import demo_chain, demo_config
from tests.proxy.harness import Running, proxied

TRANSLATED = ["ant", "chat", "lms", "rrep", "demo"]  # every upstream that needs ids resolved


@pytest.fixture(scope="module")
def proxies() -> Iterator[tuple[Running, Running]]:
    """(the front proxy the client talks to, the second proxy serving the demo behind it)."""
    with demo_chain() as pair:
        yield pair


def client(running: Running) -> openai.OpenAI:
    return openai.OpenAI(api_key=running.key, base_url=running.v1, max_retries=0, timeout=30)


def ask(running: Running, model: str, stream: bool = False, **kw: Any) -> Any:
    with client(running) as oc:
        if not stream:
            return oc.responses.create(model=model, **kw)
        with oc.responses.stream(model=model, **kw) as events:
            return events.get_final_response()


def upstream_body(running: Running, nonce: str) -> dict[str, Any]:
    """What the upstream was sent for the request whose body holds ``nonce``."""
    auth = {"Authorization": f"Bearer {running.key}"}
    with httpx.Client(base_url=running.url, headers=auth, timeout=10) as http:
        for flow in http.get("/admin/flows", params={"limit": 500}).json()["flows"]:
            detail = http.get(f"/admin/flows/{flow['id']}").json()
            sent = base64.b64decode(detail["request"].get("body_b64") or "")
            if nonce.encode() in sent:
                upstream = detail["upstream_request"]
                return json.loads(base64.b64decode(upstream["body_b64"]))  # type: ignore[no-any-return]
    raise AssertionError(f"no flow holds {nonce}")


def escaped(text: str) -> str:
    """The start of ``text`` as it reads inside a JSON string."""
    return json.dumps(text)[1:41]


def said_by(error: openai.APIStatusError) -> str:
    """The error envelope's message, as the proxy wrote it."""
    assert isinstance(error.body, dict)
    return str(error.body["message"])


def nonce() -> str:
    return uuid.uuid4().hex[:10]


@pytest.mark.parametrize("up", TRANSLATED)
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_previous_response_id_gives_a_translated_upstream_the_conversation(
    proxies: tuple[Running, Running], up: str, stream: bool
) -> None:
    front, _ = proxies
    first, second = f"first {nonce()}", f"second {nonce()}"
    r1 = ask(front, f"{up}/demo-chat", stream, input=first)
    r2 = ask(front, f"{up}/demo-chat", stream, input=second, previous_response_id=r1.id)
    assert second in r2.output_text  # demo-chat quotes the last user message
    sent = json.dumps(upstream_body(front, second))
    assert first in sent and escaped(r1.output_text) in sent  # the whole conversation
    assert "previous_response_id" not in sent


@pytest.mark.parametrize("up", TRANSLATED)
def test_item_references_become_the_items_for_a_translated_upstream(
    proxies: tuple[Running, Running], up: str
) -> None:
    front, _ = proxies
    first, second = f"first {nonce()}", f"second {nonce()}"
    r1 = ask(front, f"{up}/demo-reasoning", True, input=first)
    refs = [{"type": "item_reference", "id": item.id} for item in r1.output]
    assert [item.type for item in r1.output] == ["reasoning", "message"]
    r2 = ask(
        front,
        f"{up}/demo-chat",
        input=[{"role": "user", "content": first}, *refs, {"role": "user", "content": second}],
    )
    assert second in r2.output_text
    sent = json.dumps(upstream_body(front, second))
    assert escaped(r1.output_text) in sent and "item_reference" not in sent


def test_a_responses_upstream_in_passthrough_gets_its_own_ids_back(
    proxies: tuple[Running, Running],
) -> None:
    front, back = proxies
    first, second, third = (f"{n} {nonce()}" for n in ("first", "second", "third"))
    r1 = ask(front, "rpass/demo-chat", input=first)
    r2 = ask(front, "rpass/demo-chat", True, input=second, previous_response_id=r1.id)
    sent = upstream_body(front, second)
    assert sent["previous_response_id"] == r1.id and sent["input"] == second  # as sent
    # ... and the upstream resolved it: it is a StreamScope proxy that kept its answer.
    assert first in json.dumps(upstream_body(back, second))
    ref = {"type": "item_reference", "id": r2.output[0].id}
    r3 = ask(front, "rpass/demo-chat", input=[ref, {"role": "user", "content": third}])
    assert third in r3.output_text
    assert upstream_body(front, third)["input"][0] == ref


def test_a_responses_upstream_in_repair_mode_gets_items_without_the_proxys_ids(
    proxies: tuple[Running, Running],
) -> None:
    front, _ = proxies
    first, second = f"first {nonce()}", f"second {nonce()}"
    r1 = ask(front, "rrep/demo-reasoning", input=first)
    refs = [{"type": "item_reference", "id": item.id} for item in r1.output]
    ask(front, "rrep/demo-chat", input=[*refs, {"role": "user", "content": second}])
    items = upstream_body(front, second)["input"]
    reasoning, message = items[0], items[1]
    assert "id" not in reasoning and reasoning["encrypted_content"].startswith("demo-sig-")
    assert message == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": r1.output_text}],
    }


def test_ids_no_one_knows_get_the_apis_own_errors(proxies: tuple[Running, Running]) -> None:
    front, _ = proxies
    unknown = {"type": "item_reference", "id": "msg_nobody_knows"}
    with pytest.raises(openai.NotFoundError) as caught:
        ask(front, "ant/demo-chat", input=[unknown, {"role": "user", "content": "hi"}])
    error = caught.value
    assert (error.status_code, error.type, error.param, error.code) == (
        404,
        "invalid_request_error",
        "input",
        None,
    )
    said = said_by(error)
    assert said.startswith("Item with id 'msg_nobody_knows' not found. It is not among")
    assert "upstream 'ant' (anthropic) has no such ids" in said
    with pytest.raises(openai.BadRequestError) as bad:
        ask(front, "demo/demo-chat", input="hi", previous_response_id="resp_nobody_knows")
    assert (bad.value.code, bad.value.param) == (
        "previous_response_not_found",
        "previous_response_id",
    )
    assert "upstream 'demo' keeps no answers" in said_by(bad.value)
    # A Responses upstream may know an id the proxy does not: it is asked, and answers.
    with pytest.raises(openai.NotFoundError) as theirs:
        ask(front, "rpass/demo-chat", input=[unknown, {"role": "user", "content": "hi"}])
    assert said_by(theirs.value).startswith("Item with id 'msg_nobody_knows' not found.")
    assert "upstream 'demo'" in said_by(theirs.value)  # the second proxy's words


def test_store_false_keeps_nothing_to_refer_to(proxies: tuple[Running, Running]) -> None:
    front, _ = proxies
    r1 = ask(front, "chat/demo-chat", input="forget me", store=False)
    with pytest.raises(openai.BadRequestError) as caught:
        ask(front, "chat/demo-chat", input="and?", previous_response_id=r1.id)
    assert caught.value.code == "previous_response_not_found"


def test_an_answer_of_one_upstream_is_resolved_for_another(
    proxies: tuple[Running, Running],
) -> None:
    front, _ = proxies
    second = f"second {nonce()}"
    r1 = ask(front, "rpass/demo-chat", input="first")  # the client sees the upstream's ids
    ref = {"type": "item_reference", "id": r1.output[0].id}
    ask(front, "ant/demo-chat", input=[ref, {"role": "user", "content": second}])
    assert escaped(r1.output_text) in json.dumps(upstream_body(front, second))


def test_replicas_sharing_a_database_resolve_each_others_answers(pg_url: str) -> None:
    def replica() -> Any:
        config = demo_config()
        config.storage = StorageConfig.model_validate({"url": pg_url})
        return proxied(config)

    with replica() as one, replica() as two:
        first, second = f"first {nonce()}", f"second {nonce()}"
        r1 = ask(one, "demo-chat", True, input=first)
        r2 = ask(two, "demo-chat", input=second, previous_response_id=r1.id)
        assert second in r2.output_text
        assert first in json.dumps(upstream_body(two, second))
