"""config.model, [tls]: a team's own CAs, trusted by every client once the core starts."""

from __future__ import annotations

from pathlib import Path

import pytest
import trustme

from streamscope.config import ConfigError, parse_config
from streamscope.net.tls import tls_context
from streamscope.proxy.core import Core


def test_no_tls_table_trusts_the_usual_roots_only() -> None:
    assert parse_config("").tls.ca_files == []


def test_the_core_trusts_the_named_cas_and_refuses_one_it_cannot_use(tmp_path: Path) -> None:
    pem = tmp_path / "team-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(pem))
    before = tls_context().cert_store_stats()["x509_ca"]
    try:
        core = Core(parse_config(f'[tls]\nca_files = ["{pem}"]\n'))
        assert tls_context().cert_store_stats()["x509_ca"] == before + 1
        assert core.flows is not None
        core.flows.close()
        with pytest.raises(ConfigError, match=r"\[tls\] ca_files: cannot use .*nope.pem"):
            Core(parse_config(f'[tls]\nca_files = ["{tmp_path / "nope.pem"}"]\n'))
    finally:
        tls_context.cache_clear()
