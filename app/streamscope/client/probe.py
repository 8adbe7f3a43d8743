"""``streamscope probe``'s request: one composed request, run as a client session.

The request is the canonical one a user would compose (a user prompt, streaming, usage
asked for) encoded by the protocol's codec, so it is what that protocol's clients send;
the client session (:mod:`streamscope.client`) sends it, keeps the answer as a capture
leg and computes the same views as for a proxied flow: the assembled response, the
timing and the lint findings. Frames are reported to a callback as they arrive.

URLs are taken the way each protocol's SDK takes its base URL (OpenAI Chat and Responses
with ``/v1``, Anthropic and LM Studio at the server root); a URL that already ends with
the endpoint's path is used as it is.
"""

from __future__ import annotations

from collections.abc import Callable

from streamscope.client.compose import Composition, Params, endpoint
from streamscope.client.result import ClientResult
from streamscope.client.session import ClientSession, SessionCallbacks, SessionLimits
from streamscope.wire.frame import Frame


async def probe(
    url: str,
    protocol: str,
    model: str,
    prompt: str = "Say hello in five words.",
    key: str = "",
    *,
    max_tokens: int | None = 256,
    read_timeout: float = 300.0,
    on_frame: Callable[[int, float, Frame], None] | None = None,
) -> ClientResult:
    """Send one request; ``on_frame(index, ms since sent, frame)`` for each frame."""
    composition = Composition(
        url=url,
        protocol=protocol,
        model=model,
        key=key,
        turns=[("user", prompt)],
        params=Params(stream=True, include_usage=True, max_tokens=max_tokens),
    )

    def frames(batch: list[tuple[int, float, Frame]]) -> None:
        if on_frame is not None:
            for index, t_ms, frame in batch:
                on_frame(index, t_ms, frame)

    session = ClientSession(
        composition,
        callbacks=SessionCallbacks(on_frames=frames),
        limits=SessionLimits(read_timeout=read_timeout),
    )
    return await session.run()


__all__ = ["endpoint", "probe"]
