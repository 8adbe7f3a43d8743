"""The ``streamscope`` command, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamscope import __version__
from streamscope.recording import read_recording
from tests.support import FIXTURES


def cli(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "streamscope", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
    )


def test_version() -> None:
    proc = cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.decode().strip() == f"streamscope {__version__}"


def test_help_lists_translate() -> None:
    proc = cli("--help")
    assert proc.returncode == 0 and b"translate" in proc.stdout


@pytest.mark.parametrize("target", ["openai-chat", "anthropic", "responses", "lmstudio"])
def test_translate_writes_a_stream_of_the_target_protocol(target: str) -> None:
    src = FIXTURES / "anthropic" / "ant-py_text-then-tool-use.sse"
    proc = cli("translate", "--to", target, str(src))
    assert proc.returncode == 0, proc.stderr
    rec = read_recording(proc.stdout)
    assert rec.protocol == target
    assert proc.stdout.endswith(b"\n\n")
    # The source ends without its final blank line: reported on stderr as a finding.
    assert b"unterminated-final-frame" in proc.stderr


def test_translate_from_stdin_with_explicit_source_and_quiet() -> None:
    src = (FIXTURES / "openai-chat" / "oai-py_text_usage_done.sse").read_bytes()
    proc = cli("translate", "--from", "openai-chat", "--to", "responses", "-q", "-", stdin=src)
    assert proc.returncode == 0 and proc.stderr == b""
    assert b"event: response.completed" in proc.stdout


def test_translate_non_stream_writes_the_assembled_body() -> None:
    src = FIXTURES / "openai-chat" / "oai-py_tool-calls-parallel.sse"
    proc = cli("translate", "--to", "anthropic", "--non-stream", str(src))
    assert proc.returncode == 0, proc.stderr
    body = json.loads(proc.stdout)
    assert body["type"] == "message"
    assert [b["name"] for b in body["content"] if b["type"] == "tool_use"] == [
        "GetWeatherArgs",
        "get_stock_price",
    ]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, b"cannot read"),
        (b"", b"empty"),
        (b"hello world, not a stream\n", b"no SSE data frames"),
        (b'data: {"foo": 1}\n\n', b"cannot tell which protocol"),
        (b'{"a": 1}\nnot json\n', b"line 2 is not JSON"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, content: bytes | None, message: bytes
) -> None:
    path = tmp_path / "in.sse"
    if content is not None:
        path.write_bytes(content)
    proc = cli("translate", "--to", "anthropic", str(path))
    assert proc.returncode == 2
    assert message in proc.stderr
    assert proc.stderr.count(b"\n") == 1 and b"Traceback" not in proc.stderr
    assert proc.stdout == b""


def test_unknown_target_protocol_is_rejected() -> None:
    proc = cli("translate", "--to", "bedrock", "x.sse")
    assert proc.returncode == 2 and b"invalid choice" in proc.stderr


@pytest.mark.parametrize(
    "argv", [["serve", "--port", "70000"], ["serve", "--port", "-1"], ["--port", "http"]]
)
def test_a_port_outside_0_to_65535_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    from streamscope.cli import main

    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "--port" in capsys.readouterr().err


def test_serve_refuses_an_address_others_reach_without_its_guards(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[proxy]\napi_keys = ["sk-local-abcdefghijklmnop1234"]\n')
    proc = cli("serve", "--config", str(config), "--host", "0.0.0.0", "--port", "0")
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "host = '0.0.0.0' is reachable from other machines" in err
    assert "[proxy] admin_keys and [proxy] allowed_hosts" in err


def test_serve_without_its_shared_database_stops_with_one_line(tmp_path: Path) -> None:
    from tests.postgres import free_port

    config = tmp_path / "config.toml"
    url = f"postgresql://ss:db-secret-pw@127.0.0.1:{free_port()}/ss"
    config.write_text(
        f'[proxy]\napi_keys = ["sk-local-abcdefghijklmnop1234"]\n\n[storage]\nurl = "{url}"\n'
    )
    config.chmod(0o600)
    proc = cli("serve", "--config", str(config), "--port", "0")
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "cannot reach the database" in err, err
    assert "db-secret-pw" not in err and "Traceback" not in err


def test_serve_with_an_unset_database_variable_says_which(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(
        '[proxy]\napi_keys = ["sk-local-abcdefghijklmnop1234"]\n\n'
        '[storage]\nurl_env = "STREAMSCOPE_TEST_UNSET_DB"\n'
    )
    config.chmod(0o600)
    before = config.read_text()
    proc = cli("serve", "--config", str(config), "--port", "0")
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "$STREAMSCOPE_TEST_UNSET_DB is not set" in err, err
    assert config.read_text() == before


def _serve_env(data: Path) -> dict[str, str]:
    import os

    return {**os.environ, "STREAMSCOPE_DATA_DIR": str(data)}


@pytest.mark.parametrize("which", ["flows", "pool"])
def test_serve_with_a_corrupt_database_names_the_file(tmp_path: Path, which: str) -> None:
    """Not 'cannot open the state files (a, b)': the one that is bad."""
    config = tmp_path / "config.toml"
    config.write_text('[proxy]\napi_keys = ["sk-local-abcdefghijklmnop1234"]\n')
    config.chmod(0o600)
    bad = (
        tmp_path / "data" / "flows.sqlite3"
        if which == "flows"
        else tmp_path / "config.pool.sqlite3"
    )
    bad.parent.mkdir(exist_ok=True)
    bad.write_bytes(b"not a database, " * 400)
    bad.chmod(0o600)
    proc = subprocess.run(
        [sys.executable, "-m", "streamscope", "serve", "--config", str(config), "--port", "0"],
        capture_output=True,
        timeout=60,
        env=_serve_env(tmp_path / "data"),
    )
    assert proc.returncode == 2, proc.stderr
    err = proc.stderr.decode()
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{bad} is not a database StreamScope can read" in err
    other = "config.pool.sqlite3" if which == "flows" else "flows.sqlite3"
    assert other not in err
    assert bad.read_bytes() == b"not a database, " * 400  # left as it was, for the user


def test_serve_on_a_taken_port_still_prints_the_key_it_generated(tmp_path: Path) -> None:
    """The key is saved before the port is tried: without it printed,
    the user would have to dig it out of the config file."""
    import socket

    config = tmp_path / "config.toml"
    config.write_text("[proxy]\n")
    config.chmod(0o600)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "streamscope", "serve", "--config", str(config)]
            + ["--port", str(port)],
            capture_output=True,
            timeout=60,
            env=_serve_env(tmp_path / "data"),
        )
    assert proc.returncode == 2, proc.stderr
    assert "choose another with --port" in proc.stderr.decode()
    saved = config.read_text().split('api_keys = ["', 1)[1].split('"', 1)[0]
    assert len(saved) >= 24
    assert proc.stdout.decode() == f"Generated a local API key (saved in the config): {saved}\n"
