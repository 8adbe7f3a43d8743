"""What the proxy tells whoever watches a flow: :class:`FlowTap`, its hooks, one per moment.

The proxy calls each hook where the moment happens and never asks who listens. The
capture's :class:`~streamscope.capture.recorder.FlowRecorder` is one tap (it keeps the
flow); :data:`NULL_TAP` is the other, for a request nobody captures: every hook does
nothing, at the price of one call.

When each hook is called:

- :meth:`~FlowTap.request`: the request as the client sent it (once it is a flow);
- :meth:`~FlowTap.upstream_attempt`: the account loop begins an attempt;
- :meth:`~FlowTap.upstream_sent`: the attempt's request as it goes on the wire (the
  upstream's ``sent`` hook);
- :meth:`~FlowTap.upstream_response`: the attempt's status and headers;
- :meth:`~FlowTap.upstream_body_whole`: a whole-body answer (an error's body too);
- :meth:`~FlowTap.log_batch`: a batch of upstream frames and the client chunks they made;
  False says the tap wants no more frames (the relay stops handing them over, so a
  request nobody captures pays for one batch, not one per frame);
- :meth:`~FlowTap.check`: whether the tap still takes frames (the relay's tail read);
- :meth:`~FlowTap.client_chunks`: chunks the proxy writes of its own (keepalives,
  closing frames);
- :meth:`~FlowTap.client_message`: every ASGI message the client is sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from streamscope.wire.frame import Frame


class FlowTap(Protocol):
    """The hooks the proxy calls as one flow goes through it (see the module docstring).
    They run on the proxy's loop, some once per batch of frames: they must be cheap."""

    def request(
        self, method: str, url: str, headers: list[Any], body: bytes, query: bytes = b""
    ) -> None: ...

    def upstream_attempt(self, protocol: str) -> None: ...

    def upstream_sent(self, url: str, headers: list[Any], body: bytes) -> None: ...

    def upstream_response(self, status: int, headers: Iterable[tuple[str, str]]) -> None: ...

    def upstream_body_whole(self, body: bytes) -> None: ...

    def log_batch(self, batch: Sequence[Frame], out: list[bytes], marks: Sequence[int]) -> bool:
        """False: the tap takes no more frames."""
        ...

    def check(self) -> bool:
        """False: the tap takes no more frames."""
        ...

    def client_chunks(self, chunks: list[bytes]) -> None: ...

    def client_message(self, message: Any) -> None: ...


class NullTap:
    """The tap of a request nobody captures: every hook does nothing, and it takes no
    frames (so the relay stops handing them over after the first batch)."""

    __slots__ = ()

    def request(
        self, method: str, url: str, headers: list[Any], body: bytes, query: bytes = b""
    ) -> None:
        return None

    def upstream_attempt(self, protocol: str) -> None:
        return None

    def upstream_sent(self, url: str, headers: list[Any], body: bytes) -> None:
        return None

    def upstream_response(self, status: int, headers: Iterable[tuple[str, str]]) -> None:
        return None

    def upstream_body_whole(self, body: bytes) -> None:
        return None

    def log_batch(self, batch: Sequence[Frame], out: list[bytes], marks: Sequence[int]) -> bool:
        return False

    def check(self) -> bool:
        return False

    def client_chunks(self, chunks: list[bytes]) -> None:
        return None

    def client_message(self, message: Any) -> None:
        return None


NULL_TAP: FlowTap = NullTap()  # (stateless: one for every uncaptured request)

__all__ = ["NULL_TAP", "FlowTap", "NullTap"]
