"""Trying an upstream's accounts until one answers: the one retry loop of every path.

Every request (three client protocols, streaming or not, repair or passthrough) opens its
upstream through :meth:`Attempts.open`, with its :class:`~streamscope.proxy.plan.Plan`.
Each attempt picks an account from the pool (each account at most once per request, at
most the upstream's ``max_retries``); how it ended goes to
:func:`~streamscope.proxy.decide.decide`, a pure function of the result, the pool's state
and its rules, and the loop does what that says (use the account, try the next, return
the failure, or give up). The pool's rules classify a failure:

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
from dataclasses import dataclass
from typing import Any, assert_never

from streamscope.config import AccountConfig
from streamscope.model.errors import (
    ProxyError,
    UpstreamUnreachable,
    UpstreamUnreadable,
)
from streamscope.pool.pool import AccountPool
from streamscope.pool.rules import NETWORK_STATUS
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
from streamscope.proxy.decide import (
    Accepted,
    AttemptResult,
    Exhausted,
    Failed,
    OutOfTime,
    PoolState,
    Rejected,
    Retry,
    Return,
    Unanswered,
    Unreadable,
    Use,
    decide,
)
from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.plan import Plan
from streamscope.proxy.upstream import Upstream, UpstreamResponse
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


@dataclass(slots=True)
class _Tried:
    """How one attempt ended: its result for :func:`decide`, the error a client would
    get for it (a :class:`Return`), what the flow's attempt records, and an accepted
    attempt's answer."""

    result: AttemptResult
    error: Exception | None = None
    message: str = ""
    response: UpstreamResponse | None = None


class Attempts:
    """The account loop of one request (see the module docstring): tries the upstream
    with one account after another, as the pool picks them and its rules decide, until an
    answer is accepted (:meth:`open`), the rules return the error to the client, or the
    first-byte budget is spent. Tells the pool and the flow's tap about each attempt."""

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
        self, stack: AsyncExitStack, plan: Plan, early: EarlyStart | None = None
    ) -> UpstreamResponse:
        """The response of the first account the upstream accepts for ``plan``, entered
        on ``stack``.

        A non-streaming passthrough answer is read whole (up to the plan's
        ``read_limit``) before success is declared. ``early``: starts the client's stream
        if the upstream's first frames are slow; once it has, the account is committed
        to (a failure after that is the stream's error, not a retry). The plan's
        ``first_frame`` is the first-byte budget, seconds for the whole loop (every
        account's headers and a stream's first frame, shared: each attempt gets what is
        left); spent, it is a 504 ``upstream_timeout`` (once committed, the stream's
        timeout). ``early`` is armed for the whole loop, so a streaming client hears a
        keepalive also while an upstream keeps its headers back.
        """
        self._budget = plan.first_frame
        deadline = asyncio.get_running_loop().time() + plan.first_frame
        timer = early.arm() if early is not None else None
        try:
            return await self._loop(stack, plan, early, deadline)
        finally:
            if early is not None and timer is not None:
                await early.stop(timer)

    async def _loop(
        self, stack: AsyncExitStack, plan: Plan, early: EarlyStart | None, deadline: float
    ) -> UpstreamResponse:
        """One attempt after another, each doing what :func:`decide` says of the last."""
        pooled = self.pool.has_accounts(self.name)
        limit = self.upstream.config.max_retries if pooled else 1
        tried: list[Attempt] = []
        loop = asyncio.get_running_loop()
        while len(tried) < limit:
            if loop.time() >= deadline:
                raise self._budget_spent(tried)
            account = None
            if pooled:
                account = self.pool.select(self.name, {a.account for a in tried if a.account})
                if account is None:
                    break
            self.exchange.info.account = account.name if account is not None else None
            attempt_stack = AsyncExitStack()
            try:
                done = await self._attempt(attempt_stack, plan, early, deadline, account)
                if not isinstance(done.result, Accepted):
                    await attempt_stack.aclose()
            except BaseException:
                await attempt_stack.aclose()
                self._release(account)
                raise
            state = PoolState(pooled, len(tried), limit, self.pool.clock())
            match decide(done.result, state, self.pool.rules):
                case Use(status):
                    assert done.response is not None  # (accepted: its answer)
                    self._use(account, status)
                    stack.push_async_callback(attempt_stack.aclose)
                    self.account = account
                    return done.response
                case Retry() as failed:
                    tried.append(self._fail(account, failed, done.message))
                case Exhausted() as failed:
                    tried.append(self._fail(account, failed, done.message))
                    break
                case OutOfTime() as failed:
                    tried.append(self._fail(account, failed, done.message))
                    raise self._budget_spent(tried, done.message) from None
                case Return() as failed:
                    self._fail(account, failed, done.message)
                    raise self._for_client(done.error) from None
                case unknown:
                    assert_never(unknown)
        raise self._none_left(tried)

    async def _attempt(
        self,
        stack: AsyncExitStack,
        plan: Plan,
        early: EarlyStart | None,
        deadline: float,
        account: AccountConfig | None,
    ) -> _Tried:
        """One attempt with ``account``, entered on ``stack``: how it ended, for
        :func:`decide` (a failure the rules do not know, or a cancel, is raised)."""
        tap = self.exchange.tap
        tap.upstream_attempt(plan.upstream.name)
        status = NETWORK_STATUS  # (until the upstream answers)
        try:
            async with within(deadline, self._budget):
                response = await stack.enter_async_context(
                    self.upstream.open(
                        plan.body,
                        stream=plan.stream,
                        account=account,
                        forward=plan.forward,
                        codec=plan.upstream,
                        sent=tap.upstream_sent,
                    )
                )
                status = response.status
                tap.upstream_response(status, response.headers.items())
                raw = await error_body(response) if status >= 400 else b""
            if status >= 400:
                tap.upstream_body_whole(raw)
                masked = self.redactor.data(raw)  # before anything cuts it
                message = plan.upstream.decode_error_body(masked).message
                rejected = UpstreamRejected(response, masked)
                return _Tried(Rejected(status, raw, response.headers), rejected, message)
            whole = (
                plan.passthrough and not plan.stream
            ) or "json" in response.content_type.lower()
            response = await (
                buffer_whole(response, plan.read_limit)
                if whole
                else prefetch(response, early, left(deadline), self._budget)
            )
            return _Tried(Accepted(response.status), response=response)
        except UpstreamUnreadable as exc:  # the server's doing: no account blamed
            return _Tried(Unreadable(status), exc, exc.error.message)
        except UpstreamUnreachable as exc:
            return _Tried(Unanswered(isinstance(exc, BudgetSpent)), exc, exc.error.message)

    def _for_client(self, error: Exception | None) -> Exception:
        """The failure a :class:`Return` sends the client: the upstream's rejection, or
        the proxy's error with its message masked (a new exception: the one raised,
        which the upstream's message may have put a key in, is left as it was)."""
        if not isinstance(error, ProxyError):
            assert error is not None  # (every failure carries the error it would return)
            return error
        masked = ProxyError.__new__(type(error))  # (its own class: BudgetSpent's __init__
        ProxyError.__init__(  # takes only a message)
            masked,
            error.status,
            self.redactor.text(error.error.message),
            error.error.error_type,
            error.error.code,
            error.error.param,
            error.headers,
        )
        return masked

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
            self.redactor.cut(message, MESSAGE_LIMIT) if message else "",  # (ok: none)
        )
        self.exchange.info.attempts.append(attempt)
        return attempt

    def _fail(self, account: AccountConfig | None, failed: Failed, message: str) -> Attempt:
        """A failed attempt, recorded (the flow's attempts, the pool's counts); its
        account released."""
        verdict = failed.verdict
        attempt = self._record(
            account, verdict.failure_class, failed.action, failed.status, message
        )
        self.pool.record(attempt, verdict)
        self._release(account)
        return attempt

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
