"""The vocabulary declarations' own behaviour (:mod:`streamscope.codecs.vocabulary`):
names by handling, what a place holds, and what a list of found names lacks."""

from __future__ import annotations

from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.codecs.vocabulary import Vocabulary, names


def test_names_gives_each_word_its_handling() -> None:
    assert names("carried", "a  b\nc") == {"a": "carried", "b": "carried", "c": "carried"}


def test_a_vocabulary_answers_by_place_and_name() -> None:
    v = Vocabulary("p", {"tool": {**names("mapped", "function"), **names("dropped", "x")}})
    assert v.handling("tool", "function") == "mapped"
    assert v.handling("tool", "x") == "dropped"
    assert v.handling("tool", "custom") is None  # not known here
    assert v.handling("nowhere", "function") is None
    assert v.mapped("tool") == {"function"}
    assert v.mapped("nowhere") == frozenset()
    assert v.unknown("tool", ["x", "custom", "function", "custom", "zeta"]) == ["custom", "zeta"]
    assert v.unknown("nowhere", ["b", "a"]) == ["a", "b"]


def test_every_codec_declares_a_vocabulary_of_its_own_protocol() -> None:
    for protocol in PROTOCOLS:
        vocabulary = getattr(get_codec(protocol), "vocabulary", None)
        assert isinstance(vocabulary, Vocabulary), protocol
        assert vocabulary.protocol == protocol
        assert vocabulary.places, f"{protocol} declares no place"
        for place, declared in vocabulary.places.items():
            assert declared, f"{protocol} {place} is empty"
            assert set(declared.values()) <= {"mapped", "carried", "dropped"}, place
