"""Demo accounts with faults drive the account pool without a provider; the default
configuration (no upstreams configured) is the demo with a healthy and an exhausted
account, and lists the scenarios and the replay catalogue."""

from __future__ import annotations

import time
from typing import Any

import httpx
import openai
import pytest

from streamscope.config import Config
from streamscope.demo.replay import ReplayCatalogue
from tests.proxy.demo_support import FAST
from tests.proxy.harness import KEY, Running, make_config, proxied
from tests.proxy.pool_support import account_states, chat, error_of


def _faulty(fault: str, **demo: Any) -> Config:
    upstream = {
        "name": "demo",
        "protocol": "demo",
        "default": True,
        "demo": {**FAST, **demo},
        "accounts": [{"name": "bad", "fault": fault}, {"name": "good"}],
    }
    return make_config([upstream], keepalive_seconds=2.0)


def _demo_chat(running: Running, stream: bool = True) -> httpx.Response:
    return chat(running, stream=stream, model="demo-chat")


# fault -> (class the pool gives it, status the account ends in)
RETRIED = {
    "401": ("invalid_credential", "disabled"),
    "429": ("exhausted", "cooling"),
    "402": ("exhausted", "disabled"),
    "403-insufficient": ("insufficient_tokens", "active"),
    "network": ("network", "active"),
}


@pytest.mark.parametrize("fault", list(RETRIED))
def test_a_faulty_demo_account_is_classified_like_a_real_one(fault: str) -> None:
    failure_class, status = RETRIED[fault]
    with proxied(_faulty(fault)) as running:
        for stream in (True, False):
            response = _demo_chat(running, stream)
            assert response.status_code == 200
        states = account_states(running)
        assert states["bad"]["failures"][failure_class] >= 1
        assert states["bad"]["status"] == status
        assert states["good"]["successes"] == 2
        if fault == "429":  # the demo sends Retry-After: 60
            assert 55 < states["bad"]["cooling_seconds_left"] <= 60


def test_a_too_large_fault_goes_to_the_client() -> None:
    with proxied(_faulty("403-too-large")) as running:
        response = _demo_chat(running)
        assert response.status_code == 403
        assert "estimated cost" in error_of(response)["message"]
        assert account_states(running)["good"]["requests"] == 0


def test_a_slow_account_answers_late() -> None:
    with proxied(_faulty("slow", slow_seconds=0.4)) as running:
        started = time.monotonic()
        assert _demo_chat(running, stream=False).status_code == 200
        assert time.monotonic() - started >= 0.4
        assert account_states(running)["bad"]["successes"] == 1


def test_the_default_config_is_the_demo_with_a_healthy_and_an_exhausted_account() -> None:
    with proxied(make_config([])) as running:
        oc = openai.OpenAI(api_key=KEY, base_url=running.v1, max_retries=0)
        ids = [m.id for m in oc.models.list()]
        assert "demo-chat" in ids and "demo-error" in ids
        shipped = ReplayCatalogue.default(None).names()
        assert shipped and set(shipped) <= set(ids)  # the replay catalogue is listed

        # lru: the healthy account first, then the exhausted one, which cools down
        # while the healthy one answers the same request.
        for _ in range(2):
            reply = oc.chat.completions.create(
                model="demo-chat", messages=[{"role": "user", "content": "hi"}]
            )
            assert reply.choices[0].message.content.startswith('You said: "hi"')
        states = account_states(running)
        assert states["healthy"]["successes"] == 2
        assert states["exhausted"]["status"] == "cooling"
        assert states["exhausted"]["failures"] == {"exhausted": 1}


def test_a_fault_on_a_real_upstreams_account_is_refused() -> None:
    from streamscope.config import ConfigError, parse_config

    text = (
        '[[upstreams]]\nname = "x"\nprotocol = "openai-chat"\nbase_url = "http://h/v1"\n'
        '[[upstreams.accounts]]\nfault = "401"\n'
    )
    with pytest.raises(ConfigError, match="only accounts of a demo upstream can have a fault"):
        parse_config(text)
