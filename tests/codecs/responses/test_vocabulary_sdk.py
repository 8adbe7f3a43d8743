"""The responses codec's vocabulary (codec.vocabulary) against the pinned
official SDK's request and stream types: every name the SDK defines at every place is
mapped, carried or dropped (tests/codecs/sdk_vocabulary.py says how; the terminal summary
prints the table of what is mapped, carried and dropped)."""

from __future__ import annotations

from tests.codecs.sdk_vocabulary import (
    check_every_declared_place_is_read,
    check_every_sdk_name_is_declared,
)


def test_every_name_the_sdk_defines_is_declared(vocabulary_table: list[str]) -> None:
    check_every_sdk_name_is_declared("responses", vocabulary_table)


def test_every_declared_place_is_one_the_sdk_walk_reads() -> None:
    check_every_declared_place_is_read("responses")
