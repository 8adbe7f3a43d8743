"""Whether a real client can run here (app/streamscope/realclients/specs.py): a Python
client when its SDK is installed, else the extra to install; a Node client as its install
says (tests/realclients/test_node.py has the install itself)."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from streamscope.lint.clients import BY_ID, NODE_MISSING, PYTHON_EXTRA, ClientSpec
from streamscope.realclients.specs import availability, python_version


def test_python_version_is_the_installed_distributions() -> None:
    for package in ("openai", "anthropic", "httpx"):
        assert python_version(package) == importlib.metadata.version(package)
    assert python_version("streamscope-no-such-sdk") is None


def test_a_python_client_runs_when_its_sdk_is_installed() -> None:
    for client in ("openai-python-chat", "openai-python-responses", "anthropic-python"):
        assert availability(BY_ID[client]) is None  # the suite's venv has the extra
    needs_more = ClientSpec(
        "x", "x", "openai-chat", "python", {"openai": "1", "streamscope-no-such-sdk": "1"}
    )
    assert availability(needs_more) == PYTHON_EXTRA


def test_a_node_client_without_node_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no node, no npm
    assert availability(BY_ID["openai-node-chat"], tmp_path) == NODE_MISSING
