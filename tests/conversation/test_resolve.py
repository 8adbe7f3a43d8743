"""Resolving a Responses request's references to the proxy's earlier answers: what the
decoder reads (the whole conversation), what each kind of upstream is sent, the notes on
what changed, and the API's own not-found errors."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamscope.codecs import get_codec
from streamscope.conversation.answers import Answer, Found, ItemHit, Limits
from streamscope.conversation.resolve import Target, is_reference, resolve, wanted
from streamscope.model.errors import ProxyError

LIMITS = Limits(max_answers=50, max_seconds=7200, max_bytes=1024 * 1024)
ANT = Target("ant", "anthropic", keeps_state=False)
DEMO = Target("demo", "responses", keeps_state=False)
OAI = Target("oai", "responses", keeps_state=True)

USER = {"role": "user", "content": [{"type": "input_text", "text": "What is the weather?"}]}
MSG = {
    "id": "msg_1",
    "type": "message",
    "role": "assistant",
    "status": "completed",
    "content": [{"type": "output_text", "text": "Sunny.", "annotations": [], "logprobs": []}],
}
CALL = {
    "id": "fc_1",
    "type": "function_call",
    "status": "completed",
    "call_id": "call_1",
    "name": "get_weather",
    "arguments": '{"city":"Lyon"}',
}
SEALED = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "sealed-1"}
OPEN = {"id": "rs_2", "type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]}
SEARCH = {"id": "ws_1", "type": "web_search_call", "status": "completed"}


def ref(item_id: str) -> dict[str, Any]:
    return {"type": "item_reference", "id": item_id}


def found_from(answer: Answer) -> Found:
    found = Found(answers={answer.id: answer})
    for item in answer.output:
        found.items[item["id"]] = ItemHit(item, answer.id, answer.upstream, answer.passthrough)
    return found


def previous(upstream: str = "ant", passthrough: bool = False) -> Answer:
    return Answer("resp_1", [USER], [SEALED, OPEN, MSG, CALL, SEARCH], upstream, passthrough)


def body(*items: Any, **fields: Any) -> dict[str, Any]:
    return {"model": "m", "input": list(items), "stream": True, **fields}


def test_a_body_without_references_is_left_as_it_is() -> None:
    sent = body(USER)
    done = resolve(sent, Found(), ANT, LIMITS)
    assert done.body is sent and done.decoded is sent and done.notes == []
    assert wanted(sent) == ([], None)


def test_references_become_the_items_for_a_translated_upstream() -> None:
    sent = body(USER, ref("msg_1"), {"id": "fc_1"}, USER)  # (type is optional)
    assert wanted(sent) == (["msg_1", "fc_1"], None)
    kept = copy.deepcopy(sent)
    done = resolve(sent, found_from(previous()), ANT, LIMITS)
    assert done.decoded["input"] == [USER, MSG, CALL, USER]
    assert done.body is done.decoded
    assert sent == kept  # the client's body is not changed in place
    assert [n[0] for n in done.notes] == ["input[1]", "input[2]"]
    field, why, instead = done.notes[0]
    assert "'msg_1'" in why and "resp_1" in why and "'ant' (anthropic) has no such ids" in why
    assert instead == "the item as the client got it"
    get_codec("responses").decode_request(done.decoded)  # the decoder takes it


def test_previous_response_id_expands_into_the_conversation_before_input() -> None:
    sent = body(USER, previous_response_id="resp_1", store=False)
    done = resolve(sent, found_from(previous()), ANT, LIMITS)
    assert "previous_response_id" not in done.decoded
    assert done.decoded["input"] == [USER, SEALED, OPEN, MSG, CALL, SEARCH, USER]
    assert done.decoded["store"] is False and done.body is done.decoded
    assert done.notes[0][0] == "previous_response_id"
    assert "the 6 items of the conversation up to it" in done.notes[0][2]
    as_string = resolve({**sent, "input": "And tomorrow?"}, found_from(previous()), ANT, LIMITS)
    assert as_string.decoded["input"][-1] == {"role": "user", "content": "And tomorrow?"}


def test_a_responses_upstream_gets_its_own_ids_as_they_were_sent() -> None:
    sent = body(USER, ref("msg_1"), ref("rs_2"), previous_response_id="resp_1")
    done = resolve(sent, found_from(previous("oai", passthrough=True)), OAI, LIMITS)
    assert done.body == sent and done.notes == []
    assert done.decoded["input"] == [USER, SEALED, OPEN, MSG, CALL, SEARCH, USER, MSG, OPEN]


def test_other_ids_go_to_a_responses_upstream_as_items_it_can_take() -> None:
    refs = [ref(i) for i in ("msg_1", "fc_1", "rs_1", "rs_2", "ws_1")]
    sent = body(USER, *refs)
    # Its own answer, but in repair mode: the ids the client saw are the proxy's.
    done = resolve(sent, found_from(previous("oai", passthrough=False)), OAI, LIMITS)
    message = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Sunny."}],
    }
    call = {"type": "function_call", "call_id": "call_1", "name": "get_weather"}
    call["arguments"] = CALL["arguments"]
    sealed = {"type": "reasoning", "summary": [], "encrypted_content": "sealed-1"}
    assert done.body["input"] == [USER, message, call, sealed, SEARCH]
    assert [n[0] for n in done.notes] == [f"input[{i}]" for i in range(1, 6)]
    assert done.notes[3][2].startswith("nothing: a reasoning item cannot be sent without its id")
    # Another upstream's: its reasoning and its server-tool items mean nothing here.
    other = resolve(sent, found_from(previous("ant", passthrough=True)), OAI, LIMITS)
    assert other.body["input"] == [USER, message, call]
    assert (
        other.notes[4][2]
        == "nothing: a web_search_call item of upstream 'ant' means nothing to this one"
    )
    assert other.decoded["input"] == [USER, MSG, CALL, SEALED, OPEN, SEARCH]


def test_an_expanded_answer_for_a_responses_upstream_loses_what_it_cannot_read() -> None:
    sent = body(USER, previous_response_id="resp_1")
    done = resolve(sent, found_from(previous("ant")), OAI, LIMITS)
    assert "previous_response_id" not in done.body
    assert [i.get("type", "message") for i in done.body["input"]] == [
        "message",
        "message",
        "function_call",
        "message",
    ]
    assert "left out: reasoning, reasoning, web_search_call" in done.notes[0][2]


def test_ids_this_proxy_does_not_know_go_to_a_responses_upstream_as_sent() -> None:
    sent = body(USER, ref("msg_upstream"), previous_response_id="resp_upstream")
    done = resolve(sent, Found(), OAI, LIMITS)
    assert done.body == sent and done.notes == []
    assert done.decoded == body(USER)  # (what the decoder can read of it)


@pytest.mark.parametrize("target", [ANT, DEMO], ids=["translated", "demo"])
def test_an_unknown_item_is_the_apis_404(target: Target) -> None:
    with pytest.raises(ProxyError) as caught:
        resolve(body(USER, ref("msg_nope")), Found(), target, LIMITS)
    error = caught.value
    assert error.status == 404
    assert (error.error.error_type, error.error.code, error.error.param) == (
        "invalid_request_error",
        None,
        "input",
    )
    message = error.error.message
    assert message.startswith("Item with id 'msg_nope' not found. It is not among")
    assert "last 50 answers for 2 hours, within 1 MiB" in message
    assert target.upstream in message


def test_an_unknown_previous_response_is_the_apis_400_and_says_why() -> None:
    gone = Found(gone={"resp_old": "it was answered 3 hours ago, and this proxy keeps ..."})
    with pytest.raises(ProxyError) as caught:
        resolve(body(USER, previous_response_id="resp_old"), gone, ANT, LIMITS)
    error = caught.value
    assert error.status == 400
    assert (error.error.error_type, error.error.code, error.error.param) == (
        "invalid_request_error",
        "previous_response_not_found",
        "previous_response_id",
    )
    assert error.error.message.startswith(
        "Previous response with id 'resp_old' not found. It was answered 3 hours ago"
    )


def test_malformed_references_are_400s_naming_the_field() -> None:
    with pytest.raises(ProxyError) as caught:
        resolve(body(USER, {"type": "item_reference", "id": 7}), Found(), ANT, LIMITS)
    assert (caught.value.status, caught.value.error.param) == (400, "input[1].id")
    with pytest.raises(ProxyError) as caught:
        resolve(body(USER, previous_response_id=["x"]), Found(), ANT, LIMITS)
    assert (caught.value.status, caught.value.error.param) == (400, "previous_response_id")
    weird = {"model": "m", "input": {"not": "a list"}, "previous_response_id": "resp_1"}
    assert resolve(weird, Found(), ANT, LIMITS).decoded is weird  # the decoder's to say


# -- any mix of items and references --------------------------------------------------------

STORED = [MSG, CALL, SEALED, OPEN]
plain = st.sampled_from(
    [USER, {"type": "function_call_output", "call_id": "call_1", "output": "21 C"}]
)
entries = st.lists(st.one_of(plain, st.sampled_from(STORED).map(lambda i: ref(i["id"]))))


@settings(max_examples=200, deadline=None)
@given(entries, st.booleans(), st.sampled_from([ANT, DEMO, OAI]), st.booleans())
def test_any_conversation_resolves_to_the_items_the_client_saw(
    items: list[dict[str, Any]], chained: bool, target: Target, passthrough: bool
) -> None:
    answer = Answer("resp_1", [USER], STORED, "oai", passthrough)
    extra = {"previous_response_id": "resp_1"} if chained else {}
    sent = body(*items, **extra)
    done = resolve(sent, found_from(answer), target, LIMITS)
    by_id = {i["id"]: i for i in STORED}
    whole = [by_id[i["id"]] if is_reference(i) else i for i in items]
    assert done.decoded["input"] == ([USER, *STORED] if chained else []) + whole
    assert not any(is_reference(i) for i in done.decoded["input"])
    assert "previous_response_id" not in done.decoded
    own = target.keeps_state and passthrough
    if own:
        assert done.body == sent and done.notes == []
    elif target.keeps_state:
        assert not any(is_reference(i) or "id" in i for i in done.body["input"])
        assert len(done.notes) == sum(map(is_reference, items)) + chained
    else:
        assert done.body is done.decoded
    if items or chained:
        get_codec("responses").decode_request(done.decoded)
