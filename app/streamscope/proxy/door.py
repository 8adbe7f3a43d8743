"""Who may come in: the checks a request passes before it is served, and :class:`Refused`.

- **The Host** (:meth:`Door.check_host`): a loopback name, a ``*.localhost`` one, or one of
  ``[proxy] allowed_hosts``. A web page on a DNS-rebinding domain reaches 127.0.0.1 with
  its own Host, and is turned away here.
- **The key** (:meth:`Door.check_key`): one of the local keys (``api_keys``), sent
  wherever the client's protocol puts it (:mod:`~streamscope.proxy.keys`); on /admin,
  with ``admin_keys`` set, one of those only. Keys are compared in constant time.
- **/admin from a web page** (:func:`from_browser`): never answered.

A request turned away is :class:`Refused`: answered in its protocol's envelope and
counted (:mod:`~streamscope.proxy.refusals`), not a flow.
"""

from __future__ import annotations

import hmac

from streamscope.codecs import Codec
from streamscope.config import ProxyConfig
from streamscope.model import errors
from streamscope.model.errors import ProxyError
from streamscope.proxy.asgi import Scope, header
from streamscope.proxy.keys import HOW_TO_SEND, sent_key
from streamscope.proxy.refusals import Reason

LOOPBACK = {"localhost", "127.0.0.1", "::1"}


class Refused(ProxyError):
    """A request turned away before it became a flow (:mod:`~streamscope.proxy.refusals`):
    answered in ``codec``'s envelope and counted under ``reason``."""

    def __init__(self, reason: Reason, codec: Codec, error: ProxyError) -> None:
        super().__init__(error.status, str(error), error.error.error_type, error.error.code)
        self.error = error.error
        self.headers = error.headers
        self.reason = reason
        self.codec = codec


def host_name(host: str) -> str:
    """The name in a ``Host`` header, without its port."""
    if host.startswith("["):  # [::1]:8787
        return host[1 : host.find("]")]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Door:
    """The checks of :mod:`~streamscope.proxy.door` with the proxy's settings (its keys,
    its allowed hosts)."""

    def __init__(self, proxy: ProxyConfig) -> None:
        self._keys = [k.get_secret_value().encode() for k in proxy.api_keys]
        self._admin_keys = [k.get_secret_value().encode() for k in proxy.admin_keys]
        self._allowed_hosts = {h.lower() for h in proxy.allowed_hosts}

    def check_host(self, scope: Scope, codec: Codec) -> None:
        host = header(scope, b"host")
        if host is None:
            raise Refused("host", codec, errors.forbidden("requests need a Host header"))
        name = host_name(host).lower()
        allowed = self._allowed_hosts
        if name in LOOPBACK or name.endswith(".localhost") or name in allowed or "*" in allowed:
            return
        # A web page on a rebinding domain reaches 127.0.0.1 with its own Host.
        raise Refused(
            "host",
            codec,
            errors.forbidden(
                f"Host {name!r} is not a loopback name; add it to [proxy] allowed_hosts to allow it"
            ),
        )

    def check_key(self, scope: Scope, codec: Codec, admin: bool = False) -> None:
        """The key a request sent: one of ``[proxy] admin_keys`` on /admin when any is
        set, else one of the local keys (``api_keys``)."""
        given = sent_key(scope, query=not admin)
        only_admin = admin and bool(self._admin_keys)
        if not given:
            which = "[proxy] admin_keys" if only_admin else "the proxy's local keys"
            raise Refused(
                "no-key",
                codec,
                errors.unauthorized(f"no API key: send one of {which} as {HOW_TO_SEND}"),
            )
        key = given.encode()
        if only_admin:
            if any(hmac.compare_digest(key, k) for k in self._admin_keys):
                return
            if any(hmac.compare_digest(key, k) for k in self._keys):
                message = "this key is a client key; /admin needs one of [proxy] admin_keys"
                raise Refused("client-key", codec, errors.forbidden(message))
            message = "this API key is not one of the proxy's [proxy] admin_keys"
            raise Refused("wrong-key", codec, errors.unauthorized(message))
        if not any(hmac.compare_digest(key, k) for k in self._keys):
            raise Refused(
                "wrong-key",
                codec,
                errors.unauthorized(
                    "this API key is not one of the proxy's local keys "
                    "(an upstream's key belongs in the config's accounts, not in the client)"
                ),
            )


def is_admin(path: str) -> bool:
    return path == "/admin" or path.startswith("/admin/")


def from_browser(scope: Scope) -> bool:
    """A request a web page made: browsers send ``Origin`` on every cross-origin request
    and preflight, and ``Sec-Fetch-Site`` (other than ``none``, the address bar) on all."""
    site = (header(scope, b"sec-fetch-site") or "none").lower()
    return header(scope, b"origin") is not None or site != "none"


__all__ = ["LOOPBACK", "Door", "Refused", "from_browser", "host_name", "is_admin"]
