"""Private files: the data dir is 0700, the databases (with their WAL) and the exports
0600, whatever the umask; a config holding keys that others can read is warned about.

Real files: a real proxy serves and captures a flow, then the modes are read back.
"""

from __future__ import annotations

import argparse
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from streamscope import cli
from streamscope.capture.store import FlowStore
from streamscope.config import keys_exposed, load_config
from streamscope.doctor.config import check_config
from streamscope.pool.store import PoolStore
from streamscope.private import connect, write_private
from streamscope.proxy.server import ProxyServer
from streamscope.redact import Redactor
from tests.proxy.harness import KEY, make_config
from tests.support import running_in_thread

pytestmark = pytest.mark.skipif(os.name == "nt", reason="POSIX modes")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture(params=[0o022, 0o002, 0o000])
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    old = os.umask(request.param)
    try:
        yield request.param
    finally:
        os.umask(old)


def test_a_served_and_captured_flow_leaves_only_private_files(tmp_path: Path, umask: int) -> None:
    data = tmp_path / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)  # as an older version left it
    flows = data / "flows.sqlite3"
    state = tmp_path / "config" / "config.pool.sqlite3"
    config = make_config([{"name": "demo", "protocol": "demo", "default": True}])

    async def start() -> ProxyServer:
        server = ProxyServer(config, state_path=state, capture_path=flows)
        await server.start()
        return server

    async def stop(server: ProxyServer) -> None:
        await server.stop()

    body = {"model": "demo-chat", "stream": True, "messages": [{"role": "user", "content": "hi"}]}
    with running_in_thread(start, stop, "proxy") as (server, _):
        answer = httpx.post(
            f"{server.url}/v1/chat/completions",
            json=body,
            headers={"authorization": f"Bearer {KEY}"},
            timeout=30,
        )
        assert answer.status_code == 200 and "data:" in answer.text
        store = server.app.flows
        assert store is not None
        store.flush()
        # While open: the WAL and its index exist and are private.
        for side in ("-wal", "-shm"):
            assert mode(flows.with_name(flows.name + side)) == 0o600, side
            assert mode(state.with_name(state.name + side)) == 0o600, side
    assert mode(data) == 0o700
    assert mode(flows) == 0o600
    assert mode(state) == 0o600
    leftovers = [p for p in data.iterdir() if mode(p) & 0o077]
    assert leftovers == []


def test_existing_wide_databases_are_narrowed(tmp_path: Path, umask: int) -> None:
    path = tmp_path / "old.sqlite3"
    db = connect(path)
    db.execute("CREATE TABLE t (x)")
    db.execute("INSERT INTO t VALUES (1)")
    for p in tmp_path.iterdir():
        os.chmod(p, 0o644)
    db2 = connect(path)  # a restart of a newer version
    assert db2.execute("SELECT x FROM t").fetchall() == [(1,)]
    assert {p.name: mode(p) for p in tmp_path.iterdir()} == {
        "old.sqlite3": 0o600,
        "old.sqlite3-wal": 0o600,
        "old.sqlite3-shm": 0o600,
    }
    db.close()
    db2.close()


def test_the_stores_create_private_files(tmp_path: Path, umask: int) -> None:
    store = FlowStore(tmp_path / "new-data" / "flows.sqlite3", Redactor([]))
    pool = PoolStore(tmp_path / "cfg" / "c.pool.sqlite3")
    try:
        assert mode(tmp_path / "new-data") == 0o700
        for path in [*tmp_path.glob("new-data/*"), *tmp_path.glob("cfg/*")]:
            assert mode(path) == 0o600, path
    finally:
        store.close()
        pool.close()


def test_exports_are_private_even_over_a_wider_file(tmp_path: Path, umask: int) -> None:
    target = tmp_path / "flow.har"
    target.write_text("old")
    os.chmod(target, 0o644)
    write_private(target, '{"log": {}}')
    write_private(tmp_path / "leg.sse", b"data: x\n\n")
    assert mode(target) == 0o600 and target.read_text() == '{"log": {}}'
    assert mode(tmp_path / "leg.sse") == 0o600


def _keyed_config(tmp_path: Path, file_mode: int) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('[proxy]\napi_keys = ["sk-local-abcdefgh"]\n')
    os.chmod(path, file_mode)
    return path


def test_a_config_with_keys_readable_by_others_is_warned_about(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _keyed_config(tmp_path, 0o644)
    config = load_config(path)
    warning = keys_exposed(config, path)
    assert warning is not None and str(path) in warning and "0644" in warning

    checks, _ = check_config(path)  # doctor
    assert [(c.status, c.name) for c in checks] == [("ok", "config"), ("warn", "config")]
    assert "chmod 600" in (checks[1].fix or "")

    args = argparse.Namespace(config=path, host=None, port=None)
    cli._load(args)  # serve and the window start here
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "other users can read it" in err and str(path) in err


def test_a_private_config_or_one_without_keys_is_not_warned_about(tmp_path: Path) -> None:
    path = _keyed_config(tmp_path, 0o600)
    assert keys_exposed(load_config(path), path) is None
    assert [c.status for c in check_config(path)[0]] == ["ok"]
    plain = tmp_path / "plain.toml"
    plain.write_text("[capture]\nmax_flows = 5\n")
    os.chmod(plain, 0o644)
    assert keys_exposed(load_config(plain), plain) is None
