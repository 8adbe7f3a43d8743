"""First start edits the config as a TOML document: any valid config, in any layout,
keeps its meaning (plus the generated key) after first start and after Save; a config
that isn't UTF-8 gets one line naming the file, from every command that reads it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr

from streamscope.config import Config, load_config, parse_config
from streamscope.config.save import ensure_local_key, save_config

ROOT = Path(__file__).resolve().parents[2]

# -- first start and Save over one file ------------------------------------------------


def first_start_then_save(path: Path, text: str) -> None:
    """Write ``text``, run first start's key insertion, then a Save of a changed value,
    asserting after each that the file means what it meant, plus what was changed."""
    path.write_text(text, encoding="utf-8")
    meant = parse_config(text)
    had_keys = bool(meant.proxy.api_keys)
    config = load_config(path)
    config.proxy.port = 45678  # a --port: never written by first start
    key = ensure_local_key(config, path)
    assert (key is None) == had_keys
    after = load_config(path)  # loads: the file was not corrupted
    if key is not None:
        meant.proxy.api_keys = [SecretStr(key)]
        assert key in path.read_text(encoding="utf-8")
    assert after == meant, path.read_text(encoding="utf-8")
    assert ensure_local_key(after, path) is None  # only once

    after.capture.max_flows = 77  # Save, from the window's settings
    after.proxy.keepalive_seconds = 3.5
    save_config(after, path)
    assert load_config(path) == after, path.read_text(encoding="utf-8")


FOUR_LAYOUTS = [
    "[proxy]\napi_keys = []\n",
    "[proxy] # comment\nport = 9000\n",
    "[ proxy ]\nport = 9001\n",
    "proxy.keepalive_seconds = 5\n",
]


@pytest.mark.parametrize("text", FOUR_LAYOUTS)
def test_the_four_reported_layouts_survive_first_start_and_save(tmp_path: Path, text: str) -> None:
    first_start_then_save(tmp_path / "config.toml", text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n",
        'proxy = { host = "127.0.0.1", api_keys = [] }\n',
        "proxy.port = 1\nproxy.host = '127.0.0.1'\n\n[capture]\nmax_flows = 9\n",
        '[capture]\nenabled = false\n\n[[upstreams]]\nname = "d"\nprotocol = "demo"\n',
        "[proxy]\n",
        "[proxy]\napi_keys = [\n  # none yet\n]\nport = 2 # mine\n",
    ],
)
def test_other_layouts_survive(tmp_path: Path, text: str) -> None:
    first_start_then_save(tmp_path / "config.toml", text)


# -- the property ------------------------------------------------------------------------

_SPACES = st.sampled_from(["", " ", "  ", "\t"])
_COMMENT = st.sampled_from(["", " # note", "  #", " # [proxy] api_keys = 1"])
_BLANK = st.sampled_from(["", "\n", "# a comment line\n", "\n# between\n\n"])


@st.composite
def _assign(draw: st.DrawFn, key: str, value: str) -> str:
    return f"{key}{draw(_SPACES)}={draw(_SPACES)}{value}{draw(_COMMENT)}\n"


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return repr(value)


_PROXY_VALUES = st.fixed_dictionaries(
    {},
    optional={
        "host": st.sampled_from(["127.0.0.1", "localhost"]),
        "port": st.integers(0, 65535),
        "keepalive_seconds": st.sampled_from([0, 5, 2.5]),
        "api_keys": st.sampled_from([[], [], ["sk-local-mine12345"]]),
        "allowed_hosts": st.sampled_from([[], ["a.example"]]),
    },
)
_CAPTURE_VALUES = st.fixed_dictionaries(
    {},
    optional={"enabled": st.booleans(), "max_flows": st.integers(1, 5000)},
)
_ALIASES = st.dictionaries(st.sampled_from(["fast", "smart", "x.y"]), st.just("demo/m"), max_size=2)


@st.composite
def _section(draw: st.DrawFn, name: str, values: dict[str, Any]) -> tuple[str, str]:
    """(text before any table header, text of its own table) for one table's values:
    absent, a header (in its spellings), dotted keys, or an inline table."""
    layout = draw(st.sampled_from(["header", "dotted", "inline", "absent"]))
    if layout == "absent" and values:
        layout = "header"
    if layout == "absent":
        return "", ""
    if layout == "dotted":
        lines = [draw(_assign(f"{name}.{k}", _toml(v))) for k, v in values.items()]
        return "".join(lines), ""
    if layout == "inline":
        inner = ", ".join(
            f"{k}{draw(_SPACES)}={draw(_SPACES)}{_toml(v)}" for k, v in values.items()
        )
        return f"{name} = {{{draw(_SPACES)}{inner}{draw(_SPACES)}}}{draw(_COMMENT)}\n", ""
    header = draw(st.sampled_from([f"[{name}]", f"[ {name} ]", f"[{name}]  ", f"[\t{name}]"]))
    body = "".join(draw(_assign(k, _toml(v))) + draw(_BLANK) for k, v in values.items())
    return "", f"{draw(_BLANK)}{header}{draw(_COMMENT)}\n{body}"


@st.composite
def _upstreams(draw: st.DrawFn) -> str:
    count = draw(st.integers(0, 2))
    if not count:
        return ""
    if draw(st.booleans()):
        entries = ", ".join(
            f'{{ name = "u{i}", protocol = "demo", accounts = [{{ name = "a{i}" }}] }}'
            for i in range(count)
        )
        return f"upstreams = [{entries}]\n"
    out = []
    for i in range(count):
        out.append(
            f'{draw(_BLANK)}[[upstreams]]{draw(_COMMENT)}\nname = "u{i}"\nprotocol = "demo"\n'
        )
        if draw(st.booleans()):
            out.append(f'\n[[upstreams.accounts]]\nname = "a{i}"\napi_key = "sk-acct-{i}xyz"\n')
    return "".join(out)


@st.composite
def configs(draw: st.DrawFn) -> str:
    """A valid config text in a drawn layout (top-level keys, then tables, then arrays)."""
    sections = [
        draw(_section(name, draw(values)))
        for name, values in (("proxy", _PROXY_VALUES), ("capture", _CAPTURE_VALUES))
    ]
    aliases = draw(_ALIASES)
    alias_top, alias_table = draw(
        _section("aliases", {(f'"{k}"' if "." in k else k): v for k, v in aliases.items()})
    )
    order = draw(st.permutations([*sections, (alias_top, alias_table)]))
    upstreams = draw(_upstreams())
    inline_upstreams = upstreams.startswith("upstreams = [")
    top = draw(_BLANK) + "".join(t for t, _ in order) + (upstreams if inline_upstreams else "")
    tables = "".join(t for _, t in order)
    return top + tables + ("" if inline_upstreams else upstreams)


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(text=configs())
def test_any_valid_config_survives_first_start_and_save(tmp_path: Path, text: str) -> None:
    meant = parse_config(text)  # the generator makes valid configs only
    assert isinstance(meant, Config)
    first_start_then_save(tmp_path / "config.toml", text)


# -- a config that isn't UTF-8 ------------------------------------------------------------


@pytest.mark.parametrize(
    "command", [["serve", "--port", "0"], ["doctor"], []], ids=["serve", "doctor", "window"]
)
def test_a_config_that_is_not_utf8_gets_one_line_naming_it(
    tmp_path: Path, command: list[str]
) -> None:
    path = tmp_path / "config.toml"
    path.write_bytes(b'[proxy]\nhost = "caf\xe9"\n')
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "STREAMSCOPE_DATA_DIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "streamscope", *command, "--config", str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out
    assert done.returncode in (1, 2)
    lines = [line for line in out.splitlines() if "not UTF-8" in line]
    assert len(lines) == 1 and str(path) in lines[0], out
    if command != ["doctor"]:  # doctor adds its fix line and a summary
        assert out.strip() == lines[0], out
    assert path.read_bytes() == b'[proxy]\nhost = "caf\xe9"\n'  # never rewritten
