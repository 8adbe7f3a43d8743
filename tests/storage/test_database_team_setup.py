"""The README's set-up of the shared database ("Running it for a team"), run as written
against a throwaway PostgreSQL server: the role and database its psql commands make are
enough for a replica (storage/database.py) to create its tables and keep flows."""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path
from typing import Any

from streamscope.config import Config
from tests.proxy.demo_support import ask_streamed
from tests.proxy.harness import KEY, proxied

README = (Path(__file__).resolve().parents[2] / "README.md").read_text()


def _setup_commands() -> list[list[str]]:
    section = README.split("\n## Running it for a team\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    [block] = [b for b in blocks if "CREATE ROLE" in b]
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_the_readmes_role_and_database_are_enough_for_a_replica(postgres_server: Any) -> None:
    server = postgres_server
    commands = _setup_commands()
    assert [c[:4] for c in commands] == [["sudo", "-u", "postgres", "psql"]] + [
        ["sudo", "-u", "postgres", "createdb"]
    ]
    for command in commands:  # as the superuser, over the test server's socket
        tool, args = command[3], command[4:]
        connect = ["-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres"]
        subprocess.run([str(server.bin / tool), *connect, *args], check=True, timeout=60)
    password = re.search(r"PASSWORD '([^']+)'", " ".join(commands[0]))
    assert password is not None
    url = f"postgresql://streamscope:{password.group(1)}@127.0.0.1:{server.port}/streamscope"
    config = Config.model_validate(
        {
            "proxy": {"host": "127.0.0.1", "port": 0, "api_keys": [KEY]},
            "storage": {"url": url},
            "upstreams": [{"name": "demo", "protocol": "demo", "default": True}],
        }
    )
    with proxied(config) as running:  # the first replica creates the tables as the role
        flow_id = ask_streamed(running)
        flows = running.server.app.flows
        assert flows is not None
        flows.flush()
        listed, total = flows.summaries(0, 10)
        assert total == 1 and listed[0].id == flow_id and listed[0].replica
    tables = subprocess.run(
        [str(server.bin / "psql"), "-h", "127.0.0.1", "-p", str(server.port), "-U", "postgres",
         "-d", "streamscope", "-Atc", "SELECT tableowner FROM pg_tables WHERE schemaname='public'"],
        check=True, capture_output=True, text=True, timeout=60,
    ).stdout.split()  # fmt: skip
    assert tables and set(tables) == {"streamscope"}
