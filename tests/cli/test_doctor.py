"""``streamscope doctor``'s command line (:mod:`streamscope.cli.doctor`): its options, its
place in the help, and no "None" in its output whatever an upstream answers. The checks
themselves: tests/test_doctor.py and tests/doctor/."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.cli import main
from tests.test_cli import cli

# -- no "None" in any output, whatever goes wrong ----------------------------------------


@pytest.mark.parametrize("protocol", ["openai-chat", "anthropic", "responses", "lmstudio"])
def test_doctor_against_a_404_server_prints_no_none(tmp_path: Path, protocol: str) -> None:
    from tests.cli.test_probe import leaks_none, not_found_server

    with not_found_server() as url:
        base = url + "/v1" if protocol in ("openai-chat", "responses") else url
        config = tmp_path / "config.toml"
        config.write_text(
            '[proxy]\nhost = "127.0.0.1"\nport = 0\n'
            f'[[upstreams]]\nname = "up"\nprotocol = "{protocol}"\nbase_url = "{base}"\n'
            '[[upstreams.accounts]]\nname = "a"\napi_key = "sk-test-000000000000000000000000"\n',
            encoding="utf-8",
        )
        for extra in ([], ["--json"]):
            proc = cli("doctor", "--config", str(config), "--accounts", "--timeout", "5", *extra)
            text = (proc.stdout + proc.stderr).decode()
            assert "404" in text and "Traceback" not in text
            assert not leaks_none(text), text


# -- the command's options ----------------------------------------------------------------


@pytest.mark.parametrize("bad", [["--port", "70000"], ["--timeout", "0"], ["--nope"]])
def test_wrong_options_are_usage_errors(bad: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["doctor", *bad])
    assert exited.value.code == 2


def test_help_lists_doctor(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "doctor" in capsys.readouterr().out
