"""The proxy's ASGI application: endpoints, local auth, the DNS-rebinding guard, CORS.

Endpoints and the protocol each speaks (its error envelope included):

    GET  /v1/models             OpenAI list (Anthropic's shape when anthropic-version is sent)
    POST /v1/chat/completions   openai-chat
    POST /v1/messages           anthropic
    POST /v1/responses          responses
    POST /api/v1/chat           lmstudio
    POST /v1/messages/count_tokens  anthropic (the upstream's count, or an estimate; no flow)
    POST /v1beta/models/{model}:generateContent, :streamGenerateContent, :countTokens,
    GET  /v1beta/models         gemini, /v1/... too (:mod:`~streamscope.proxy.gemini_api`)
    GET  /admin/pool, POST /admin/pool/{upstream}/{account}/enable|disable,
    GET|DELETE /admin/flows…, POST /admin/flows/import,
    GET|DELETE /admin/refusals                                              (admin.py)

Each endpoint also answers without its ``/v1`` (``/chat/completions``, ``/messages``,
``/responses``, ``/models``), and a path that is none gets a 404 in the envelope of the
protocol it looks like, naming what it probably meant (:mod:`~streamscope.proxy.paths`).
The local key is accepted as ``Authorization: Bearer``, ``x-api-key``, ``api-key``,
``x-goog-api-key`` or (not on /admin) ``?key=`` (:mod:`~streamscope.proxy.keys`).
``/admin`` answers no request a web page made (``Origin`` or ``Sec-Fetch-Site``, a CORS
preflight included: 403, and never a CORS header), and with ``[proxy] admin_keys`` set it
takes only those keys (a client key gets 403), which the client endpoints do not take.

A request turned away at the door (no key, a wrong key, a refused Host, an unknown path
or method, a body that is not JSON) is not a flow: it is counted in :attr:`ProxyApp.
refusals` (:mod:`~streamscope.proxy.refusals`), so a flood of them never pushes real
flows out of the capture's retention.

The account pool (``state_path``: its SQLite file; None keeps it in memory) is started
and closed with the ASGI lifespan. Every log line passes a filter masking the keys.

Every failure becomes the client protocol's own error envelope with its HTTP status;
an unexpected exception is logged and answered with a 500 envelope, never a traceback.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path
from typing import Any

from streamscope.capture.outcome import Outcome, short_detail
from streamscope.capture.recorder import FlowRecorder
from streamscope.capture.store import FlowStore
from streamscope.codecs import Codec, get_codec
from streamscope.config import AccountConfig, Config
from streamscope.conversation.turn import begin_turn, turn_notes
from streamscope.model import errors
from streamscope.model.errors import ProxyError
from streamscope.model.request import RequestError
from streamscope.pool.pool import AccountPool
from streamscope.proxy import gemini_api as gemini
from streamscope.proxy.admin import handle_admin
from streamscope.proxy.asgi import Receive, Scope, Send, header, receive_body, send_json
from streamscope.proxy.attempts import Attempts
from streamscope.proxy.core import Core
from streamscope.proxy.count_tokens import count_tokens, named_model
from streamscope.proxy.door import Door, Refused, from_browser, is_admin
from streamscope.proxy.exchange import error_outcome, handle_exchange
from streamscope.proxy.exchange_record import Exchange
from streamscope.proxy.keys import sent_key
from streamscope.proxy.outbound import answer_headers, client_send
from streamscope.proxy.paths import (
    COUNT_TOKENS,
    HEALTH,
    MODELS,
    GeminiCall,
    endpoint,
    endpoint_codec,
    miss,
)
from streamscope.proxy.plan import make_plan
from streamscope.proxy.refusals import RefusalLog
from streamscope.proxy.relay import until_disconnect
from streamscope.proxy.routing import ModelCatalog, Router
from streamscope.proxy.tap import NULL_TAP
from streamscope.proxy.upstream import Upstream
from streamscope.proxy.upstreams import UpstreamClients, make_upstreams
from streamscope.redact import RedactingFilter, Redactor
from streamscope.wire import strictjson

log = logging.getLogger("streamscope.proxy")
# Loggers whose records are redacted at the source (a logger's filters do not apply to
# its children's records, so httpcore's are named); the root logger's handlers get the
# filter too, for anything else that logs through them.
LOGGERS = (
    "streamscope.proxy",
    "streamscope.pool",
    "httpx",
    "httpcore",
    "httpcore.connection",
    "httpcore.http11",
    "httpcore.http2",
    "httpcore.proxy",
)

CORS_METHODS = b"GET, POST, OPTIONS"


class ProxyApp:
    """The ASGI app, serving requests with a :class:`~streamscope.proxy.core.Core` (the
    stores: pool, flows, refusals, redactor), given or built from the config and the
    paths. ``upstreams`` may be given (tests, the GUI); else built from config."""

    def __init__(
        self,
        config: Config,
        upstreams: dict[str, Upstream] | None = None,
        state_path: Path | None = None,
        capture_path: Path | None = None,
        core: Core | None = None,
    ) -> None:
        """``state_path``: the pool's SQLite file, ``capture_path``: the flows' (None
        keeps either in memory); both ignored when ``core`` is given."""
        self.core = core if core is not None else Core(config, state_path, capture_path)
        self.config = self.core.config
        self.clients = UpstreamClients(self.config.proxy)
        self.upstreams = (
            upstreams if upstreams is not None else make_upstreams(self.config, self.clients)
        )
        self.router = Router(self.config, ModelCatalog(self.upstreams, self.pool.peek))
        self._log_filter = RedactingFilter(self.redactor)
        for name in LOGGERS:
            logging.getLogger(name).addFilter(self._log_filter)
        self._filtered = list(logging.getLogger().handlers)
        for handler in self._filtered:
            handler.addFilter(self._log_filter)
        self.door = Door(self.config.proxy)

    # The core's stores, as the app's own (the proxy's code and the tests read them here).
    @property
    def pool(self) -> AccountPool:
        return self.core.pool

    @property
    def flows(self) -> FlowStore | None:
        return self.core.flows

    @property
    def refusals(self) -> RefusalLog:
        return self.core.refusals

    @property
    def redactor(self) -> Redactor:
        return self.core.redactor

    async def start(self) -> None:
        await self.core.start(self._probe)

    async def aclose(self) -> None:
        await self.core.aclose()
        for name in LOGGERS:
            logging.getLogger(name).removeFilter(self._log_filter)
        for handler in self._filtered:
            handler.removeFilter(self._log_filter)
        await self.clients.aclose()

    async def _probe(self, upstream: str, account: AccountConfig) -> bool:
        """A switched-off account answers a model listing: it is usable again."""
        try:
            await self.upstreams[upstream].list_models(account)
        except ProxyError:
            return False
        return True

    # -- ASGI -----------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        exchange = Exchange(uuid.uuid4().hex, scope["method"], scope["path"])
        # /admin answers no CORS at all
        origin = None if is_admin(scope["path"]) else header(scope, b"origin")
        extra = answer_headers(exchange.request_id, origin)
        tracked = client_send(send, exchange, self.redactor, extra)
        try:
            await self._serve(scope, receive, tracked, exchange)
        finally:
            exchange.info.outcome_detail = short_detail(
                self.redactor.text(exchange.info.outcome_detail)
            )
            if scope["method"] != "OPTIONS" and scope["path"] != HEALTH:
                if exchange.refused is None:
                    log.info("%s", exchange.line())
                else:  # a flood of refusals is said in few lines (refusals.py)
                    self.refusals.log(exchange.line(), exchange.refused)
            self._close_capture(exchange, keep=True)

    async def _serve(self, scope: Scope, receive: Receive, send: Send, exchange: Exchange) -> None:
        """The request, answered: every failure becomes an answer in the client protocol's
        envelope (or the end of a response already begun) and the exchange's outcome."""
        codec = endpoint_codec(endpoint(scope["path"]))  # where the protocol is first known
        try:
            await self._dispatch(scope, receive, send, exchange)
        except Refused as exc:
            # Not a flow: the recorder (if the request got that far) is dropped unsent.
            self._close_capture(exchange, keep=False)
            self._refused(scope, exc)
            exchange.refused = exc.reason
            # a request without a good key ends its connection, and with it
            # whatever it pipelined behind it (proxy/limits.py)
            close = [(b"connection", b"close")] if exc.status in (401, 403) else None
            await send_json(send, exc.status, exc.codec.encode_error(exc.error), close)
        except ProxyError as exc:
            if not exchange.status:  # the response has not started
                await send_json(send, exc.status, codec.encode_error(exc.error), exc.headers)
            if exchange.info.outcome is None:
                exchange.info.outcome, exchange.info.outcome_detail = error_outcome(exc)
        except ConnectionResetError:
            exchange.info.outcome = Outcome.CLIENT_CANCELLED
            exchange.info.outcome_detail = "the client's connection was reset"
        except Exception:
            log.exception("internal error on %s %s", scope["method"], scope["path"])
            exchange.info.outcome = Outcome.ERROR_ANSWER
            exchange.info.outcome_detail = "internal proxy error (see the proxy log)"
            if not exchange.status:
                err = ProxyError(500, "internal proxy error (see the proxy log)", "api_error")
                await send_json(send, 500, codec.encode_error(err.error))
            else:
                await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _open_capture(self, exchange: Exchange, protocol: str) -> None:
        """Start capturing ``exchange`` as a flow (once it is known not to be refused)."""
        if self.flows is None:
            return
        rec = FlowRecorder(exchange.request_id, protocol, self.core.flow_limit)
        # Every client send is masked (outbound.client_send) before it is recorded, with
        # the redactor the store masks with: the capture need not scan those bytes again.
        rec.client_masked = self.flows.redactor is self.redactor
        exchange.tap = rec
        self.core.in_flight += 1

    def _close_capture(self, exchange: Exchange, keep: bool) -> None:
        """Take the capture's recorder off ``exchange`` and, with ``keep``, hand its flow
        to the store. (The app opens and closes capture; nothing else asks whether a
        flow is captured: it only calls its tap.)"""
        rec, exchange.tap = exchange.tap, NULL_TAP
        if not isinstance(rec, FlowRecorder):  # (not captured: refused early, or no store)
            return
        self.core.in_flight -= 1
        flows = self.flows  # (there is one: _open_capture made the recorder for it)
        if keep and flows:
            rec.done()
            flows.submit(rec, exchange.info)

    def _refused(self, scope: Scope, exc: Refused) -> None:
        self.refusals.add(
            scope["method"],
            self.redactor.text(scope["path"]),  # (a Google key may stand in a path)
            exc.reason,
            exc.status,
            self.redactor.text(exc.error.message),
            origin=header(scope, b"origin"),
            user_agent=header(scope, b"user-agent"),
            key=sent_key(scope, query=not is_admin(scope["path"])),
            host=header(scope, b"host"),
        )

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await self.start()
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _preflight(self, scope: Scope, send: Send) -> None:
        requested = header(scope, b"access-control-request-headers") or ""
        headers = [
            (b"access-control-allow-methods", CORS_METHODS),
            (b"access-control-allow-headers", requested.encode("latin-1")),
            (b"access-control-max-age", b"600"),
        ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    # -- routing --------------------------------------------------------------------------

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send, ex: Exchange) -> None:
        method, raw_path = scope["method"], scope["path"]
        path = endpoint(raw_path)
        codec = endpoint_codec(path)
        self.door.check_host(scope, codec)
        if raw_path == HEALTH and method == "GET":  # a load balancer's check: no key
            await send_json(send, 200, self.core.health())
            return
        admin = is_admin(raw_path)
        if admin and from_browser(scope):  # a web page (or its preflight): never /admin
            message = "/admin answers no browser request (this one came from a web page)"
            raise Refused("admin-origin", codec, errors.forbidden(message))
        if method == "OPTIONS" and header(scope, b"origin") is not None:
            await self._preflight(scope, send)  # preflights carry no credentials (SOP)
            return
        self.door.check_key(scope, codec, admin)
        if admin:
            await handle_admin(self.core, scope, receive, send)
            return
        if path is None:
            wrong = miss(method, raw_path)
            raise Refused(
                "unknown-path", get_codec(wrong.protocol), errors.not_found(wrong.message)
            )
        if path in (MODELS, gemini.MODELS):
            if method != "GET":
                raise Refused("method", codec, _not_allowed(method, raw_path, "GET"))
            await self._models(scope, send, path)
            return
        if method != "POST":
            raise Refused("method", codec, _not_allowed(method, raw_path, "POST"))
        if path == COUNT_TOKENS:  # no flow: nothing is generated
            await self._count_tokens(scope, receive, send, ex, codec)
            return
        call = gemini.call_at(raw_path)  # (Gemini's path names the model and the mode)
        if call is not None and call.counts:  # no flow either: an estimate
            ex.info.upstream, ex.info.model = "estimate", call.model
            await gemini.count_tokens((await self._json_body(scope, receive, codec))[1], call, send)
            return
        await self._flow(scope, receive, gemini.framed(scope, call, send), ex, codec, call)

    async def _flow(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        ex: Exchange,
        codec: Codec,
        call: GeminiCall | None,
    ) -> None:
        """A request that is a flow: captured, decoded, routed, planned, then exchanged
        until it is answered or the client goes away."""
        method, raw_path = scope["method"], scope["path"]
        self._open_capture(ex, codec.name)
        raw, body = await self._json_body(scope, receive, codec)
        body = gemini.with_model(call, body)
        # (raw header pairs: a recorder decodes them in the store's writer)
        ex.tap.request(method, raw_path, scope["headers"], raw, scope.get("query_string", b""))
        ex.info.model = named_model(body)  # kept if the body is refused
        # Responses conversation state: earlier answers' ids resolved for the route.
        conversations = self.core.conversations
        turn = await begin_turn(conversations, codec.name, body, self.router, self.upstreams)
        try:
            request = codec.decode_request(turn.decoded)
        except RequestError as exc:
            raise errors.bad_request(exc.message, exc.param) from None
        request = gemini.with_mode(call, request)
        ex.info.model = request.model
        if not request.model.strip():
            raise errors.bad_request("model is required", "model")
        route = await self.router.resolve(request.model)
        ex.info.upstream = route.upstream.name
        attempts = Attempts(self.pool, self.upstreams[route.upstream.name], ex, self.redactor)
        proxy = self.config.proxy
        plan = make_plan(scope, codec, turn.body, request, route, attempts.upstream, proxy)
        send = turn.recording(send, route.upstream.name, plan.passthrough)  # keeps the answer
        ex.info.request_notes = [*turn_notes(turn.notes), *plan.notes]
        work = handle_exchange(send, ex, plan, request, attempts, proxy)
        if await until_disconnect(receive, work, lambda: ex.answered):
            ex.info.outcome = Outcome.CLIENT_CANCELLED
            ex.info.outcome_detail = (
                "the client went away mid-answer"
                if ex.status
                else "the client went away before its answer began"
            )

    async def _json_body(self, scope: Scope, receive: Receive, codec: Codec) -> tuple[bytes, Any]:
        """The request's body and its JSON, within the size limit (else the refusals say
        why)."""
        limit = self.config.proxy.max_body_bytes
        raw = await receive_body(receive, limit, header(scope, b"content-length"))
        try:
            return raw, strictjson.loads(raw)  # also: lone surrogates, nesting too deep
        except ValueError as exc:
            error = errors.bad_request(f"the request body is not valid JSON ({exc})")
            raise Refused("not-json", codec, error) from None

    async def _count_tokens(
        self, scope: Scope, receive: Receive, send: Send, ex: Exchange, codec: Codec
    ) -> None:
        _, body = await self._json_body(scope, receive, codec)
        ex.info.model = named_model(body)
        ex.info.upstream = await count_tokens(scope, body, self, send)

    async def _models(self, scope: Scope, send: Send, path: str) -> None:
        # Anthropic's SDK lists models with its version header, Google's clients with their
        # key header; everyone else gets OpenAI's.
        protocol = gemini.models_protocol(scope, path)
        body = get_codec(protocol).models_body(await self.router.all_models())
        await send_json(send, 200, body)


def _not_allowed(method: str, path: str, allowed: str) -> ProxyError:
    return ProxyError(
        405,
        f"{method} is not allowed on {path} (use {allowed})",
        "invalid_request_error",
        headers=[(b"allow", allowed.encode())],
    )
