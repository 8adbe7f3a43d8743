"""What a codec knows of its protocol's wire vocabulary, declared as data.

Each codec lists, by *place*, the names its protocol's official SDK types define and what
the codec does with each:

- ``mapped``: read into (or written from) a canonical slot, so it translates;
- ``carried``: kept in the protocol's own JSON (an :class:`~streamscope.model.request.
  OpaquePart`, ``Request.extra``, an opaque :class:`~streamscope.model.events.ServerTool`
  or :class:`~streamscope.model.events.Citation`), so it goes back to the same protocol
  unchanged and is reported as dropped when another protocol's upstream cannot take it;
- ``dropped``: understood and deliberately not carried (said in the request's notes).

A name that no codec declares is still never refused: the decoders carry what they do not
know. The declarations exist so that ``tests/codecs/<protocol>/test_vocabulary_sdk.py`` can
walk the pinned SDKs' types and fail on anything new, printing it: upgrading an SDK shows
what a codec has to learn. Place names, by protocol:

- anthropic: ``request`` (top-level params), ``message.role``, ``user.content``,
  ``assistant.content``, ``system.content``, ``tool_result.content``, ``tool`` (tool
  ``type``; ``custom`` for a client tool), ``tool_choice``, ``thinking``,
  ``output_config``, ``image.source``, ``document.source``, ``citation`` (a text block's
  citations); stream: ``stream.event``, ``stream.block``, ``stream.delta``,
  ``stream.citation``.
- openai-chat: ``request``, ``message.role``, ``user.content``, ``system.content``,
  ``developer.content``, ``assistant.content``, ``tool.content``, ``assistant.field``,
  ``tool`` (tool ``type``), ``tool_choice``, ``response_format``; stream: ``chunk`` (the
  chunk's fields), ``chunk.choice``, ``chunk.delta``, ``chunk.tool_call``.
- responses: ``request``, ``input.item`` (item ``type``), ``message.role``,
  ``input.content``, ``function_call_output.output``, ``reasoning.summary``, ``tool``,
  ``tool_choice``, ``text.format``, ``include``; stream: ``stream.event``,
  ``output.item``, ``output.content``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

Handling = Literal["mapped", "carried", "dropped"]


def names(handling: Handling, words: str) -> dict[str, Handling]:
    """``{name: handling}`` for the space-separated ``words``."""
    return {w: handling for w in words.split()}


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """One protocol's declared vocabulary: place -> name -> handling."""

    protocol: str
    places: Mapping[str, Mapping[str, Handling]] = field(default_factory=dict)

    def handling(self, place: str, name: str) -> Handling | None:
        """What the codec does with ``name`` at ``place``; None: it does not know it."""
        return self.places.get(place, {}).get(name)

    def unknown(self, place: str, found: Iterable[str]) -> list[str]:
        """The names of ``found`` (what an SDK defines at ``place``) not declared here."""
        known = self.places.get(place, {})
        return sorted(n for n in set(found) if n not in known)

    def mapped(self, place: str) -> frozenset[str]:
        return frozenset(n for n, h in self.places.get(place, {}).items() if h == "mapped")


__all__ = ["Handling", "Vocabulary", "names"]
