"""A real PostgreSQL server for the suite and the benchmarks: its own cluster in a
temporary folder, on its own loopback port, started and stopped by the tests.

The binaries are Debian's (``postgresql`` package: ``/usr/lib/postgresql/<v>/bin``), or
whatever ``pg_ctl`` is on the PATH; ``.ci/run`` installs the package when it is missing.
PostgreSQL refuses to run as root: as root, the server runs as the ``postgres`` user the
package creates (``runuser``). :func:`why_not` says why no server can be started here,
for a skip's reason.

The cluster trusts loopback connections (a throwaway server: no password to keep) and
runs with ``fsync=off`` unless ``durable`` (tests; the benchmarks ask for durable).
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path


def bindir() -> Path | None:
    """Where ``initdb`` and ``pg_ctl`` are, or None."""
    found = shutil.which("pg_ctl")
    candidates = [str(Path(found).resolve().parent)] if found else []
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    for folder in candidates:
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _run_as() -> list[str]:
    if os.geteuid() != 0:
        return []
    return ["runuser", "-u", "postgres", "--"]


def why_not() -> str | None:
    """None when a server can be started here, else why not (a skip's reason)."""
    if bindir() is None:
        return "PostgreSQL is not installed (no initdb/pg_ctl; .ci/run installs Debian's)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no postgres user to run the server as"
        if shutil.which("runuser") is None:
            return "running as root without runuser to start the server as postgres"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """One throwaway cluster: :meth:`start`, :meth:`stop`, :meth:`restart`, :meth:`kill`;
    :meth:`new_database` gives each test its own database (a URL)."""

    def __init__(self, *, durable: bool = False) -> None:
        folder = bindir()
        if folder is None:
            raise RuntimeError(why_not() or "no PostgreSQL")
        self.bin = folder
        self.durable = durable
        self.root = Path(tempfile.mkdtemp(prefix="streamscope-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if os.geteuid() == 0:
            user = pwd.getpwnam("postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
        self._cmd(
            "initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "-E", "UTF8",
            "--no-sync", "--no-instructions",
        )  # fmt: skip

    def _cmd(self, tool: str, *args: str) -> None:
        subprocess.run(
            [*_run_as(), str(self.bin / tool), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            cwd=self.root,
            timeout=120,
        )

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        options = f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1"
        options += " -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        log = str(self.root / "server.log")
        self._cmd("pg_ctl", "-D", str(self.data), "-l", log, "-o", options, "-w", "start")

    def stop(self, mode: str = "fast") -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self._cmd("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, down_for: float = 0.0) -> None:
        """Stop (closing every connection), stay down ``down_for`` seconds, start again."""
        self.stop()
        time.sleep(down_for)
        self.start()

    def new_database(self) -> str:
        """A fresh empty database on this server; its URL."""
        name = "t_" + uuid.uuid4().hex[:12]
        self._cmd("createdb", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def close(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@contextlib.contextmanager
def running(*, durable: bool = False) -> Iterator[PostgresServer]:
    server = PostgresServer(durable=durable)
    try:
        server.start()
        yield server
    finally:
        server.close()
