"""The flow source seam (capture/source.py): this machine's flow store and a proxy
elsewhere's both answer what the traffic view reads, the same way."""

from __future__ import annotations

import inspect

from streamscope.capture.source import FlowSource
from streamscope.capture.store import FlowStore
from streamscope.remote.store import RemoteStore


def members(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(getattr(cls, name))
        for name in dir(FlowSource)
        if not name.startswith("_") and callable(getattr(FlowSource, name))
    }


def test_both_stores_have_every_method_of_the_source_with_its_parameters() -> None:
    wanted = members(FlowSource)
    assert set(wanted) == {
        "subscribe",
        "summaries",
        "summary",
        "stored_summary",
        "keep_summary",
        "get",
    }
    for store in (FlowStore, RemoteStore):
        found = members(store)
        for name, signature in wanted.items():
            assert list(found[name].parameters) == list(signature.parameters), (store, name)
