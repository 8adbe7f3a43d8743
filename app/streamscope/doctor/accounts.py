"""The account checks (opt-in): one tiny request per account through the proxy's own
:class:`~streamscope.proxy.upstream.HttpUpstream`, its failure classified by the pool's
rules, so the words are the pool panel's (``exhausted (429): …``)."""

from __future__ import annotations

import asyncio
import math

import httpx

from streamscope.client.compose import Composition, Params, body
from streamscope.config import AccountConfig, UpstreamConfig
from streamscope.doctor.check import Check, Status, count, one_line
from streamscope.doctor.upstreams import Listing
from streamscope.model.errors import UpstreamUnreachable
from streamscope.net.http1 import Http1Client
from streamscope.pool.rules import NETWORK_STATUS, Rule, Verdict, classify
from streamscope.proxy.upstream import HttpUpstream


def accounts_opt_in(accounts: int) -> Check:
    """The one line that stands for the account checks when they were not asked for."""
    if not accounts:
        return Check("accounts", "skip", "no accounts of HTTP upstreams to check")
    return Check(
        "accounts",
        "skip",
        f"{count(accounts, 'account')} not checked: opt in with --accounts "
        "(one tiny request per account, which spends a token each)",
    )


async def check_accounts(
    u: UpstreamConfig,
    listing: Listing,
    client: httpx.AsyncClient,
    wire: Http1Client,
    rules: tuple[Rule, ...],
) -> list[Check]:
    """Each account of ``u`` tried with the first configured model, else the first one
    ``listing`` found; skipped when there is none or the upstream did not answer."""
    if not u.accounts:
        return []
    names = [f"account {u.name}/{a.name}" for a in u.accounts]
    model = u.models[0] if u.models else next(iter(listing.models), None)
    if not listing.answered:
        return [Check(n, "skip", f"upstream {u.name} is unreachable (see above)") for n in names]
    if model is None:
        why = f"no model to ask: upstream {u.name} listed none and its config names none"
        fix = f'set models = ["..."] for upstream {u.name}'
        return [Check(n, "skip", why, fix) for n in names]
    upstream = HttpUpstream(u, client, wire)
    jobs = [
        _try_account(upstream, a, n, model, rules) for a, n in zip(u.accounts, names, strict=True)
    ]
    return list(await asyncio.gather(*jobs))


# OpenAI's Responses API refuses max_output_tokens below 16; every other protocol takes 1.
TINY_TOKENS = {"responses": 16}


async def _try_account(
    upstream: HttpUpstream, account: AccountConfig, name: str, model: str, rules: tuple[Rule, ...]
) -> Check:
    """One non-streaming "ping" with the fewest tokens, sent as real traffic is."""
    u = upstream.config
    params = Params(stream=False, include_usage=False, max_tokens=TINY_TOKENS.get(u.protocol, 1))
    composed = Composition(
        url=u.base_url, protocol=u.answers_in, model=model, params=params, turns=[("user", "ping")]
    )
    # (a Gemini body has no model, its path does: the upstream puts it there from this field)
    request = {**body(composed), "model": model}
    try:
        async with upstream.open(request, stream=False, account=account, forward={}) as answer:
            raw = await answer.read()
            if answer.status < 400:
                return Check(name, "ok", f"accepted: {model} answered (HTTP {answer.status})")
            verdict = classify(rules, answer.status, raw, answer.headers)
            status, message = answer.status, upstream.codec.decode_error_body(raw).message
    except UpstreamUnreachable as exc:
        verdict = classify(rules, NETWORK_STATUS)
        status, message = NETWORK_STATUS, exc.error.message
    return _verdict_check(name, verdict, status, message, model)


FIXES = {
    "invalid_credential": "check the account's api_key",
    "exhausted": "the account is out of quota or rate limited: wait, or add credit",
    "insufficient_tokens": "the account's plan or token budget is used up",
    "network": "the upstream did not answer in time: retry with a longer --timeout",
}


def _verdict_check(name: str, verdict: Verdict, status: int, message: str, model: str) -> Check:
    """The pool's words for the failure (``exhausted (429): …``) and what it would do:
    a failure when the pool would switch the account off for good, else a warning."""
    level: Status
    if verdict.action == "disable" and verdict.cooldown is None:
        does, level = "the pool would disable it until someone enables it", "fail"
    elif verdict.action == "disable":
        does, level = f"the pool would cool it for {math.ceil(verdict.cooldown or 0)} s", "warn"
    elif verdict.action == "next":
        does, level = "the pool would try the next account", "warn"
    else:
        does, level = "returned to the client; no account is at fault", "warn"
    answer = str(status) if status != NETWORK_STATUS else "no answer"
    detail = f"{verdict.failure_class} ({answer}): {one_line(message)} -> {does}"
    fix = FIXES.get(verdict.failure_class)
    if fix is None:
        fix = (
            f"the upstream refused the test request itself ({model}), not the key: "
            "check the model, or name one first in the upstream's models"
            if verdict.rule is None
            else f"the pool's rule: {verdict.rule.describe()}"
        )
    return Check(name, level, detail, fix)


__all__ = ["accounts_opt_in", "check_accounts"]
