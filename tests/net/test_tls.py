"""The one TLS context of every HTTP client (:mod:`streamscope.net.tls`): built once, checks
certificates and host names against certifi's roots, offers only HTTP/1.1.

The ALPN offer is read where it counts, by a server: a handshake over memory BIOs with a
server that prefers ``h2`` (a throwaway certificate from trustme; the client need not
trust it, the server has chosen its protocol before the client checks the certificate).
"""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path

import httpx
import pytest
import trustme

from streamscope.net.clients import admin_http
from streamscope.net.tls import tls_context, trust
from tests.net.test_http1 import server


def test_the_context_is_built_once() -> None:
    assert tls_context() is tls_context()


def test_certificates_and_host_names_are_checked_against_certifis_roots() -> None:
    context = tls_context()
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] > 100  # certifi's bundle, not nothing


def test_only_http_1_1_is_offered_even_to_a_server_that_prefers_h2() -> None:
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("upstream.test").configure_cert(server_context)
    server_context.set_alpn_protocols(["h2", "http/1.1"])

    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    client = tls_context().wrap_bio(c_in, c_out, server_hostname="upstream.test")
    server = server_context.wrap_bio(s_in, s_out, server_side=True)
    with pytest.raises(ssl.SSLWantReadError):
        client.do_handshake()  # the ClientHello, with the client's ALPN offer
    s_in.write(c_out.read())
    with pytest.raises(ssl.SSLWantReadError):
        server.do_handshake()  # the server's answer: its pick among what was offered
    assert server.selected_alpn_protocol() == "http/1.1"


async def test_a_teams_own_ca_is_trusted_once_named(tmp_path: Path) -> None:
    """An admin client (what an attached window uses) against a real TLS server whose
    certificate a private CA signed: refused with certifi's roots alone, accepted once
    ``trust`` names the CA's PEM file."""
    ca = trustme.CA()
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("localhost").configure_cert(server_context)
    pem = tmp_path / "team-ca.pem"
    ca.cert_pem.write_to_path(str(pem))

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        await writer.drain()

    try:
        async with server(answer, tls=server_context) as (url, _):
            async with admin_http("sk-admin-test", 5.0) as client:
                with pytest.raises(httpx.ConnectError):
                    await client.get(url + "/admin/pool")
            trust([pem])
            async with admin_http("sk-admin-test", 5.0) as client:
                assert (await client.get(url + "/admin/pool")).text == "ok"
    finally:
        tls_context.cache_clear()  # the next test's context trusts certifi's roots only


def test_a_ca_file_that_cannot_be_used_is_named(tmp_path: Path) -> None:
    try:
        with pytest.raises(ValueError, match="cannot use .*missing.pem"):
            trust([tmp_path / "missing.pem"])
        junk = tmp_path / "junk.pem"
        junk.write_text("not a certificate")
        with pytest.raises(ValueError, match="cannot use .*junk.pem"):
            trust([junk])
    finally:
        tls_context.cache_clear()
