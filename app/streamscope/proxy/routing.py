"""Which upstream serves a model, and which models there are.

A requested model resolves, in this order:

1. an alias from ``[aliases]`` (the user's explicit mapping wins), resolved once more;
2. ``upstream/model`` when the first segment is an upstream's name (many real model
   ids contain a slash, ``deepseek-ai/DeepSeek-V3`` say, so only a known name counts);
3. a bare model found in an upstream's model list (configured, or fetched from the
   upstream and cached for ``models_ttl_seconds`` — except an upstream whose list is
   local, the demo's, which is asked each time, so a recording dropped in its replay
   folder is listed and routed at once), upstreams in config order;
4. the upstream marked ``default = true``, with the model name unchanged;
5. otherwise 404 ``model_not_found``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from streamscope.config import AccountConfig, Config, UpstreamConfig
from streamscope.model.errors import ProxyError, not_found
from streamscope.proxy.upstream import Upstream

log = logging.getLogger("streamscope.proxy")
RETRY_FAILED_FETCH = 10.0  # seconds


@dataclass(frozen=True, slots=True)
class Route:
    upstream: UpstreamConfig
    model: str  # the model name the upstream gets


def lists_locally(upstream: Upstream) -> bool:
    """True for an upstream whose model list costs no request (its ``models_are_local``
    attribute): it is asked each time instead of cached."""
    return bool(getattr(upstream, "models_are_local", False))


class ModelCatalog:
    """Model lists per upstream: the configured one, else fetched and cached (a local
    list is fetched each time; only a failure is kept, for ``RETRY_FAILED_FETCH``)."""

    def __init__(
        self,
        upstreams: dict[str, Upstream],
        account_for: Callable[[str], AccountConfig | None] | None = None,
    ) -> None:
        self._upstreams = upstreams
        # Which credential lists an upstream's models (the pool's first usable one).
        self._account_for = account_for or (
            lambda name: next(iter(upstreams[name].config.accounts), None)
        )
        self._cache: dict[str, tuple[float, list[str]]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def models(self, name: str) -> list[str]:
        upstream = self._upstreams[name]
        config = upstream.config
        if config.models is not None:
            return list(config.models)
        ttl = 0.0 if lists_locally(upstream) else config.models_ttl_seconds
        cached = self._cache.get(name)
        now = time.monotonic()
        if cached is not None and now - cached[0] < ttl:
            return cached[1]
        lock = self._locks.setdefault(name, asyncio.Lock())
        async with lock:  # one fetch at a time per upstream
            cached = self._cache.get(name)
            if cached is not None and time.monotonic() - cached[0] < ttl:
                return cached[1]
            account = self._account_for(name)
            try:
                ids = await upstream.list_models(account)
                fetched_at = time.monotonic()
            except ProxyError as exc:
                log.warning("%s", exc)
                ids = cached[1] if cached else []
                # Try again soon rather than serving a failed fetch for the whole TTL.
                fetched_at = time.monotonic() - ttl + RETRY_FAILED_FETCH
            self._cache[name] = (fetched_at, ids)
            return ids


class Router:
    """Which upstream and model a requested model name means (see the module docstring):
    an alias, ``upstream/model``, the first upstream that lists it, the default upstream,
    else 404. One per proxy app; :meth:`resolve` per request."""

    def __init__(self, config: Config, catalog: ModelCatalog) -> None:
        self.config = config
        self.catalog = catalog

    async def resolve(self, model: str, _depth: int = 0) -> Route:
        config = self.config
        target = config.aliases.get(model)
        if target is not None and _depth == 0:
            return await self.resolve(target, 1)
        head, sep, rest = model.partition("/")
        if sep and rest:
            upstream = config.upstream(head)
            if upstream is not None:
                return Route(upstream, rest)
        for upstream in config.upstreams:
            if model in await self.catalog.models(upstream.name):
                return Route(upstream, model)
        default = next((u for u in config.upstreams if u.default), None)
        if default is not None:
            return Route(default, model)
        raise not_found(
            f"model {model!r} is not served here: no upstream lists it, it is no alias, "
            "and no upstream is the default",
            "model_not_found",
        )

    async def all_models(self) -> list[tuple[str, str]]:
        """(model id, owner) for ``/v1/models``: every upstream's models, then aliases;
        the first occurrence of an id wins."""
        seen: set[str] = set()
        out: list[tuple[str, str]] = []
        for upstream in self.config.upstreams:
            for model in await self.catalog.models(upstream.name):
                if model not in seen:
                    seen.add(model)
                    out.append((model, upstream.name))
        for alias, target in self.config.aliases.items():
            if alias not in seen:
                seen.add(alias)
                out.append((alias, f"alias of {target}"))
        return out
