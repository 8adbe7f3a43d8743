"""streamscope serve: a start error never prints the shared database's password, however
the config gives it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.postgres import free_port

PASSWORD = "serve-pw-Walrus-77"


@pytest.mark.parametrize("given", ["url", "url_env"])
def test_serve_without_its_database_says_so_without_a_query_password(
    given: str, tmp_path: Path
) -> None:
    url = f"postgresql://ss@127.0.0.1:{free_port()}/ss?password={PASSWORD}"
    storage = f'url = "{url}"' if given == "url" else 'url_env = "STREAMSCOPE_TEST_SERVE_DB"'
    config = tmp_path / "config.toml"
    config.write_text(
        f'[proxy]\napi_keys = ["sk-local-abcdefghijklmnop1234"]\n\n[storage]\n{storage}\n'
    )
    config.chmod(0o600)
    env = {
        **os.environ,
        "STREAMSCOPE_TEST_SERVE_DB": url,
        "STREAMSCOPE_DATA_DIR": str(tmp_path / "data"),
    }
    proc = subprocess.run(
        [sys.executable, "-m", "streamscope", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        env=env,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert "cannot reach the database" in err and "password=***" in err, err
    assert PASSWORD not in err
