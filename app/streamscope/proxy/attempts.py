"""Trying an upstream's accounts until one answers: the one retry loop of every path.

Every request (three client protocols, streaming or not, repair or passthrough) opens its
upstream through :meth:`Attempts.open`. Each attempt picks an account from the pool (each
account at most once per request, at most the upstream's ``max_retries``), and the pool's
rules classify a failure:

- an HTTP error status is read and classified by status and body; ``return`` sends it to
  the client (:class:`UpstreamRejected`), ``next``/``disable`` go on to the next account;
- no HTTP answer (refused, reset, timeout, a connection that dies before its first body
  byte) is the ``network`` class.

For a stream, the first batch of frames is read before the attempt counts as a success,
so an upstream that accepts and then drops the connection is retried too.

One first-byte budget (``first_byte_timeout_seconds``) bounds the whole loop: every
account's headers and a stream's first frame share it, each attempt gets what is left,
and when it is spent the answer is a 504 ``upstream_timeout``. A streaming client that
has heard nothing for the keepalive interval gets its stream started early (SSE headers,
then keepalive comments; :class:`EarlyStart`), also while an upstream keeps its headers
back. Accounts may still be tried after that (the client only sees keepalives), but any
failure becomes the stream's error frame instead of an HTTP status, and an upstream
that sent its headers is committed to once the stream has started.

An upstream without accounts gets one attempt and its failure as it is (a 502, a 504 or
the upstream's error); with accounts, running out of them is a 503 that names each
account tried and why it failed — never a key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
from contextlib import AsyncExitStack
from typing import Any

from streamscope.codecs import Codec
from streamscope.config import AccountConfig
from streamscope.model.errors import (
    ProxyError,
    UpstreamUnreachable,
    UpstreamUnreadable,
)
from streamscope.pool.pool import AccountPool
from streamscope.pool.rules import NETWORK_STATUS, Verdict, classify
from streamscope.pool.state import Attempt
from streamscope.proxy.commit import (
    BudgetSpent,
    EarlyStart,
    buffer_whole,
    error_body,
    left,
    prefetch,
    within,
)
from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.upstream import MAX_ERROR_BODY, Upstream, UpstreamResponse
from streamscope.redact import Redactor

JSON = dict[str, Any]
MESSAGE_LIMIT = 300


class UpstreamRejected(Exception):
    """The upstream's error answer, for the client (its rule said ``return``)."""

    def __init__(self, response: UpstreamResponse, body: bytes) -> None:
        super().__init__(f"upstream status {response.status}")
        self.status = response.status
        self.content_type = response.content_type
        self.body = body


class Attempts:
    """The account loop of one request (see the module docstring): tries the upstream
    with one account after another, as the pool picks them and its rules decide, until an
    answer is accepted (:meth:`open`), the rules return the error to the client, or the
    first-byte budget is spent. Tells the pool and the flow's recorder about each attempt."""

    def __init__(
        self, pool: AccountPool, upstream: Upstream, exchange: Exchange, redactor: Redactor
    ) -> None:
        self.pool = pool
        self.upstream = upstream
        self.exchange = exchange
        self.redactor = redactor
        self.name = upstream.config.name
        self.account: AccountConfig | None = None  # the account committed to
        self._budget: float | None = None  # the first-byte budget of the running open()

    async def open(
        self,
        stack: AsyncExitStack,
        body: JSON,
        *,
        codec: Codec,
        stream: bool,
        forward: dict[str, str],
        buffered: bool = False,
        read_limit: int = MAX_ERROR_BODY,
        early: EarlyStart | None = None,
        first_frame: float | None = None,
    ) -> UpstreamResponse:
        """The response of the first account the upstream accepts, entered on ``stack``.

        ``buffered``: the body (up to ``read_limit`` bytes) is read whole before success is
        declared (a non-streaming passthrough answer). ``early``: starts the client's
        stream if the upstream's first frames are slow; once it has, the account is
        committed to (a failure after that is the stream's error, not a retry).
        ``first_frame``: the first-byte budget, seconds for the whole loop (every
        account's headers and a stream's first frame, shared: each attempt gets what is
        left); spent, it is a 504 ``upstream_timeout`` (once committed, the stream's
        timeout). ``early`` is armed for the whole loop, so a streaming client hears a
        keepalive also while an upstream keeps its headers back.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + first_frame if first_frame is not None else None
        self._budget = first_frame
        timer = early.arm() if early is not None else None
        try:
            return await self._open(
                stack, body, codec, stream, forward, buffered, read_limit, early, deadline
            )
        finally:
            if early is not None and timer is not None:
                await early.stop(timer)

    async def _open(
        self,
        stack: AsyncExitStack,
        body: JSON,
        codec: Codec,
        stream: bool,
        forward: dict[str, str],
        buffered: bool,
        read_limit: int,
        early: EarlyStart | None,
        deadline: float | None,
    ) -> UpstreamResponse:
        pooled = self.pool.has_accounts(self.name)
        limit = self.upstream.config.max_retries if pooled else 1
        tried: list[Attempt] = []
        loop = asyncio.get_running_loop()
        while len(tried) < limit:
            if deadline is not None and loop.time() >= deadline:
                raise self._budget_spent(tried)
            account = None
            if pooled:
                account = self.pool.select(self.name, {a.account for a in tried if a.account})
                if account is None:
                    break
            self.exchange.info.account = account.name if account is not None else None
            rec = self.exchange.recorder
            if rec is not None:
                rec.upstream_attempt(codec.name)
            attempt_stack = AsyncExitStack()
            try:
                async with within(deadline, self._budget):
                    response = await attempt_stack.enter_async_context(
                        self.upstream.open(
                            body,
                            stream=stream,
                            account=account,
                            forward=forward,
                            codec=codec,
                            sent=rec.upstream_sent if rec is not None else None,
                        )
                    )
                    if rec is not None:
                        rec.upstream_response(response.status, response.headers.items())
                    raw = await error_body(response) if response.status >= 400 else b""
                if response.status >= 400:
                    if rec is not None:
                        rec.upstream_body_whole(raw)
                    await attempt_stack.aclose()
                    verdict = classify(
                        self.pool.rules, response.status, raw, response.headers, self.pool.clock()
                    )
                    masked = self.redactor.data(raw)  # before anything cuts it
                    message = codec.decode_error_body(masked).message
                    self._fail(account, verdict, response.status, message)
                    if verdict.action == "return" or not pooled:
                        raise UpstreamRejected(response, masked)
                    tried.append(self.exchange.info.attempts[-1])
                    continue
                whole = buffered or "json" in response.content_type.lower()
                response = await (
                    buffer_whole(response, read_limit)
                    if whole
                    else prefetch(response, early, left(deadline), self._budget)
                )
            except UpstreamUnreadable as exc:  # the server's doing: no account blamed
                await attempt_stack.aclose()
                exc.error.message = self.redactor.text(exc.error.message)
                unread = Verdict("unreadable", "return", None)
                self._fail(account, unread, response.status, exc.error.message)
                raise
            except UpstreamUnreachable as exc:
                await attempt_stack.aclose()
                verdict = classify(self.pool.rules, NETWORK_STATUS)
                self._fail(account, verdict, NETWORK_STATUS, exc.error.message)
                if isinstance(exc, BudgetSpent):
                    tried.append(self.exchange.info.attempts[-1])
                    raise self._budget_spent(tried, exc.error.message) from None
                if verdict.action == "return" or not pooled:
                    exc.error.message = self.redactor.text(exc.error.message)
                    raise
                tried.append(self.exchange.info.attempts[-1])
                continue
            except BaseException:
                await attempt_stack.aclose()
                self._release(account)
                raise
            self._use(account, response.status)
            stack.push_async_callback(attempt_stack.aclose)
            self.account = account
            return response
        raise self._none_left(tried)

    def finish(self, tokens: int, broken: str | None = None) -> None:
        """The request is over: count its tokens (and a stream broken after commit)."""
        account = self.account
        if account is None:
            return
        self.account = None
        self.pool.add_tokens(self.name, account.name, tokens)
        if broken is not None:
            why = self.redactor.text(broken)
            self.pool.note_failure(self.name, account.name, "stream", why, self._broke(why))
        self._release(account)

    def _broke(self, why: str) -> Attempt | None:
        """The committed attempt, now a ``stream`` failure (it read ``ok``): the flow's
        attempts say what the pool counts. None when no such attempt was recorded."""
        attempts = self.exchange.info.attempts
        for i in range(len(attempts) - 1, -1, -1):
            if attempts[i].failure_class == "ok":
                message = self.redactor.cut(why, MESSAGE_LIMIT)
                attempts[i] = dataclasses.replace(
                    attempts[i], failure_class="stream", message=message
                )
                return attempts[i]
        return None

    # -- recording ------------------------------------------------------------------------

    def _record(
        self, account: AccountConfig | None, cls: str, action: str, status: int, message: str
    ) -> Attempt:
        attempt = Attempt(
            self.exchange.request_id,
            self.name,
            account.name if account is not None else None,
            cls,
            action,
            status,
            self.pool.clock(),
            self.redactor.cut(message, MESSAGE_LIMIT),
        )
        self.exchange.info.attempts.append(attempt)
        return attempt

    def _fail(
        self, account: AccountConfig | None, verdict: Verdict, status: int, message: str
    ) -> None:
        action: str = verdict.action
        if verdict.disables and verdict.cooldown is not None:  # off for a while, not for good
            action = f"cool {math.ceil(verdict.cooldown)} s"
        attempt = self._record(account, verdict.failure_class, action, status, message)
        self.pool.record(attempt, verdict)
        self._release(account)

    def _use(self, account: AccountConfig | None, status: int) -> None:
        self.pool.record(self._record(account, "ok", "use", status, ""))

    def _release(self, account: AccountConfig | None) -> None:
        if account is not None:
            self.pool.release(self.name, account.name)

    def _budget_spent(self, tried: list[Attempt], cause: str = "") -> BudgetSpent:
        why = "; ".join(
            f"{a.account or self.name}: {a.failure_class} "
            f"({a.status if a.status != NETWORK_STATUS else 'no answer'})"
            for a in tried
        )
        budget = self._budget or 0.0
        cause = cause or f"no first byte within the first-byte budget of {budget:g} s"
        message = f"upstream {self.name}: {cause}" + (
            f" (tried {len(tried)}: {why})" if tried else ""
        )
        return BudgetSpent(message)

    def _none_left(self, tried: list[Attempt]) -> ProxyError:
        now = self.pool.clock()
        off = self.pool.unavailable(self.name)
        waits = [s.until - now for _, s in off if s.status == "cooling" and s.until is not None]
        headers = [(b"retry-after", str(math.ceil(min(waits))).encode())] if waits else []
        if tried:
            why = "; ".join(
                f"{a.account}: {a.failure_class} "
                f"({a.status if a.status != NETWORK_STATUS else 'no answer'})"
                for a in tried
            )
            message = (
                f"upstream {self.name}: tried {len(tried)} account(s), none could answer: {why}"
            )
            if off:
                message += f" ({len(off)} more switched off)"
        else:
            why = "; ".join(
                f"{name}: cooling for {max(state.until - now, 0):.0f} s ({state.disabled_by})"
                if state.status == "cooling" and state.until is not None
                else f"{name}: disabled ({state.disabled_by})"
                for name, state in off
            )
            message = f"upstream {self.name}: no account is available: {why}"
        return ProxyError(503, message, "api_error", "no_account_available", headers=headers)


__all__ = ["Attempts", "UpstreamRejected"]
