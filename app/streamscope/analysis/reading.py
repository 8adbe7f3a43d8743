"""One reading of a leg: decoded once, and every view of it taken from that decoding.

:class:`LegReading` decodes a captured leg's SSE frames with its protocol's codec once
(:func:`streamscope.analysis.decode.decode_leg`) and gives, each computed when first
asked for and kept:

- ``events``: the canonical events, each with its frame number (None: the decoder's end);
- ``answer``: the assembled response (a whole body's: its protocol's response);
- ``timing`` and ``series``: the figures and the chart series (``analysis.timing``);
- ``lint``: the lint report, for what the request asked (``stream_asked``) and how the
  flow ended (``cancelled``), None when there is nothing to lint.

A frame's number is the same in all of them: its index among the leg's SSE frames, the
row the frames table shows it in.

The lint's leg headers are linted only when they are the real ones, which a leg with
the time its headers came has (a captured or HAR-imported leg); an imported ``.sse``
file has only a stand-in Content-Type. Frame times are checked for long silences (an
imported file without timing has every frame at 0: no silence).
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import Any

from streamscope.analysis.decode import Decoded, Numbered, decode_leg
from streamscope.analysis.timing import LegSeries, LegTiming, Scan, scan, series_of, timing_of
from streamscope.capture.flow import Leg
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.lint.check import LintError, lint
from streamscope.lint.report import LintReport
from streamscope.model.assemble import assemble
from streamscope.model.response import Response

JSON = dict[str, Any]


class LegReading:
    """A leg read once (see the module docstring). ``protocol``: the one to read it as
    (default: the leg's own, when it is a known one)."""

    def __init__(
        self,
        leg: Leg,
        protocol: str | None = None,
        *,
        stream_asked: bool | None = None,
        cancelled: bool = False,
        cut: str = "",
    ) -> None:
        """``cut``: what the capture did not keep of the flow, and why (a truncated
        leg with none was cut at the capture's size limit)."""
        if protocol is None and leg.protocol in PROTOCOLS:
            protocol = leg.protocol
        self.leg = leg
        self.protocol = protocol
        self.stream_asked = stream_asked
        self.cancelled = cancelled
        self.cut = cut
        self.decoded: Decoded = decode_leg(leg, protocol)

    @property
    def events(self) -> list[Numbered]:
        """The canonical events with their frame numbers (none for a body)."""
        return self.decoded.events

    def events_json(self) -> list[JSON]:
        """The events as the admin API shows them: ``{"frame": number, **event}``."""
        return [{"frame": n, **dataclasses.asdict(ev)} for n, ev in self.decoded.events]

    @cached_property
    def answer(self) -> Response | None:
        """The assembled response: a stream's events, or a whole body read as its
        protocol's response (None: a body that is none, or no known protocol)."""
        if self.leg.body is None:
            return assemble(ev for _, ev in self.decoded.events) if self.protocol else None
        if not self.protocol:
            return None
        return get_codec(self.protocol).read_body(self.leg.body).response

    @cached_property
    def _scan(self) -> Scan | None:
        return scan(self.leg, self.decoded) if self.leg.body is None and self.leg.frames else None

    @cached_property
    def timing(self) -> LegTiming:
        return timing_of(self.leg, self.decoded, self._scan)

    @cached_property
    def series(self) -> LegSeries:
        return series_of(self.leg, self.decoded, self._scan)

    @cached_property
    def lint(self) -> LintReport | None:
        """The linter's findings and verdicts (None: nothing to lint, as a leg with no
        answer, or one whose protocol cannot be told)."""
        leg = self.leg
        if leg.status is None:
            return None
        content_type = next((v for k, v in leg.headers if k.lower() == "content-type"), None)
        try:
            report = lint(
                self.decoded.frames,
                self.protocol,
                content_type=content_type,
                status=leg.status,
                body=leg.body,
                headers=leg.headers if leg.headers_ns is not None else None,
                stream_asked=self.stream_asked,
                decoded=self.decoded,
            )
        except LintError:
            return None
        if self.cancelled:
            report = report.cancelled_by_client()
        if leg.truncated:
            why = self.cut or "the flow outgrew the capture's size limit"
            report = report.cut_by_capture(why, streamed=leg.body is None)
        return report


def read_leg(
    leg: Leg,
    protocol: str | None = None,
    *,
    stream_asked: bool | None = None,
    cancelled: bool = False,
) -> LegReading:
    """``LegReading(leg, ...)``: the leg decoded once."""
    return LegReading(leg, protocol, stream_asked=stream_asked, cancelled=cancelled)


__all__ = ["LegReading", "read_leg"]
