"""The codecs looked up by protocol name: one codec per name, each whole and consistent,
and a clear error for a name that is none."""

from __future__ import annotations

import importlib

import pytest

from streamscope.codecs import PROTOCOLS, Codec, UnknownProtocol, get_codec


@pytest.mark.parametrize("name", PROTOCOLS)
def test_each_name_gives_its_packages_codec(name: str) -> None:
    codec = get_codec(name)
    assert isinstance(codec, Codec) and codec.name == name
    assert codec is get_codec(name)  # one instance per protocol
    assert codec is importlib.import_module(f"streamscope.codecs.{PROTOCOLS[name]}").CODEC
    # its decoder and encoder say they are that protocol's (findings name it)
    assert codec.stream_decoder().protocol == name
    assert codec.stream_encoder().protocol == name


def test_each_protocol_is_served_at_its_own_path() -> None:
    paths = [get_codec(name).path for name in PROTOCOLS]
    assert len(set(paths)) == len(paths)
    assert all(path.startswith(("/v1/", "/api/v1/", "/v1beta/")) for path in paths)


@pytest.mark.parametrize("name", ["openai", "OpenAI-Chat", "openai_chat", ""])
def test_an_unknown_name_says_which_are_known(name: str) -> None:
    with pytest.raises(UnknownProtocol) as info:
        get_codec(name)
    assert isinstance(info.value, KeyError)  # callers that catch KeyError still do
    message = str(info.value)
    assert message.startswith(f"unknown protocol {name!r}")
    assert all(known in message for known in PROTOCOLS)
