"""The check of a codec's declared vocabulary against the pinned SDK's types, shared by
tests/codecs/<protocol>/test_vocabulary_sdk.py (one per protocol with an official SDK).

- :func:`check_every_sdk_name_is_declared`: every name the SDK defines at every place of
  :mod:`streamscope.codecs.vocabulary` (its docstring's list, plus the places of
  :data:`~tests.codecs.sdk_places.MISSING_PLACES` the codec chooses to declare) is
  mapped, carried or dropped by the codec; a failure lists every name it lacks, by place,
  so upgrading an SDK shows what a codec has to learn.
- :func:`check_every_declared_place_is_read`: a declared place no walk reads fails (a
  typo, or a place nothing would check).
- :func:`table`: the lines the terminal summary prints (tests/codecs/conftest.py): per
  place, what is mapped, carried, dropped or unknown, the params the SDK sends as headers,
  and the names the codec declares that the SDK does not define. Those are listed, not
  failed: the APIs take names their SDKs no longer (or never) typed (older tool versions,
  Anthropic's ``temperature``, beta params), and a codec that keeps knowing them is right.
"""

from __future__ import annotations

import textwrap

import anthropic
import openai

from streamscope.codecs import get_codec
from streamscope.codecs.vocabulary import Vocabulary
from tests.codecs import sdk_places
from tests.codecs.sdk_strategies import header_keys, places_sent

SDK_VERSION = {
    "anthropic": f"anthropic-python {anthropic.__version__}",
    "openai-chat": f"openai-python {openai.__version__}",
    "responses": f"openai-python {openai.__version__}",
}


def vocabulary_of(protocol: str) -> Vocabulary | None:
    found = getattr(get_codec(protocol), "vocabulary", None)
    return found if isinstance(found, Vocabulary) else None


def checked_places(protocol: str, vocabulary: Vocabulary | None) -> dict[str, tuple[str, ...]]:
    """The SDK's names at each place checked: vocabulary.py's list (``request``: the keys
    the SDK puts in the body), and the proposed places the codec declares."""
    found = dict(places_sent(protocol))
    declared = set(vocabulary.places) if vocabulary else set()
    for place, names in sdk_places.places(protocol, missing=True).items():
        if place in declared:
            found[place] = names
    return found


def table(protocol: str, vocabulary: Vocabulary | None) -> list[str]:
    """The summary's lines for one protocol."""
    lines = [f"{protocol} ({SDK_VERSION[protocol]})"]
    if vocabulary is None:
        lines.append("  the codec declares no vocabulary (codec.vocabulary)")
    typed = {**sdk_places.places(protocol), **sdk_places.places(protocol, missing=True)}
    for place, names in checked_places(protocol, vocabulary).items():
        by: dict[str, list[str]] = {"mapped": [], "carried": [], "dropped": [], "UNKNOWN": []}
        for name in names:
            handling = vocabulary.handling(place, name) if vocabulary else None
            by[handling or "UNKNOWN"].append(name)
        counts = ", ".join(f"{len(v)} {k}" for k, v in by.items() if v)
        lines.append(f"  {place}: {len(names)} in the SDK: {counts}")
        rows = dict(by)
        if place == "request" and header_keys(protocol):
            rows["sent as headers by the SDK"] = list(header_keys(protocol))
        declared = vocabulary.places.get(place, {}) if vocabulary else {}
        rows["declared, not in the SDK"] = sorted(set(declared) - set(typed.get(place, ())))
        for label, row in rows.items():
            if row:
                text = f"{label}: {' '.join(row)}"
                lines += textwrap.wrap(text, 100, initial_indent="    ", subsequent_indent="      ")
    return lines


def check_every_sdk_name_is_declared(protocol: str, summary: list[str]) -> None:
    """Fails listing every SDK name the codec does not declare; adds the protocol's table
    to ``summary`` first, so it shows whatever the outcome."""
    vocabulary = vocabulary_of(protocol)
    summary.extend(table(protocol, vocabulary))
    assert vocabulary is not None, f"the {protocol} codec declares no vocabulary yet"
    unknown = {
        place: vocabulary.unknown(place, names)
        for place, names in checked_places(protocol, vocabulary).items()
    }
    unknown = {place: names for place, names in unknown.items() if names}
    assert not unknown, (
        f"names the {SDK_VERSION[protocol]} types define that the {protocol} codec does not "
        "declare (mapped, carried or dropped), by place:\n"
        + "\n".join(f"  {place}: {' '.join(names)}" for place, names in unknown.items())
    )


def check_every_declared_place_is_read(protocol: str) -> None:
    vocabulary = vocabulary_of(protocol)
    assert vocabulary is not None, f"the {protocol} codec declares no vocabulary yet"
    known = set(sdk_places.places(protocol)) | set(sdk_places.places(protocol, missing=True))
    stray = sorted(set(vocabulary.places) - known)
    assert not stray, (
        f"the {protocol} codec declares places no SDK walk reads (a typo, or a place to add "
        f"to tests/codecs/sdk_places.py): {', '.join(stray)}"
    )


__all__ = [
    "SDK_VERSION",
    "check_every_declared_place_is_read",
    "check_every_sdk_name_is_declared",
    "checked_places",
    "table",
    "vocabulary_of",
]
