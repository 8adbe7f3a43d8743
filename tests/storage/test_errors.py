"""storage.errors: what the database's users catch, importable without the driver, so the
single-machine default (SQLite) never loads asyncpg."""

from __future__ import annotations

import subprocess
import sys

from streamscope.storage.errors import StorageError, StorageUnavailable


def test_an_outage_is_a_storage_error() -> None:
    assert issubclass(StorageUnavailable, StorageError)


def test_the_default_proxy_and_window_never_load_the_driver() -> None:
    code = (
        "import sys\n"
        "from streamscope.config import Config\n"
        "from streamscope.proxy.core import Core\n"
        "import streamscope.proxy.server, streamscope.proxy.admin, streamscope.cli\n"
        "import streamscope.gui.proxy_control\n"
        "core = Core(Config())\n"
        "assert core.database is None and core.health()['storage'] == 'sqlite'\n"
        "print('asyncpg' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert out.stdout.strip() == "False"
