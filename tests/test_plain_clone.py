"""The suite passes on a plain clone: nothing it reads lives beside the repository.

``tests/conftest.py`` refuses reads beside the checkout; here that guard is checked, and the
suite is collected (and a part of it run) in a copy of the checkout with nothing beside it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import guarded_areas
from tests.packaging.support import clean_checkout
from tests.support import FIXTURES, REPO

# The suite held well over 4000 tests when this was written; far fewer means a part of it
# was not collected.
MIN_COLLECTED = 2000


def test_fixtures_are_in_the_repository() -> None:
    assert FIXTURES.is_relative_to(REPO)
    assert (FIXTURES / "SOURCES.md").is_file()


def test_the_guard_covers_the_folder_beside_a_checkout() -> None:
    """Where a clone sits next to other folders, everything beside it is guarded and the
    clone itself is not; a clone in a folder the system uses (the temp folder) guards
    nothing there rather than refuse the system's own files."""
    guarded, allowed = guarded_areas(Path("/srv/ci/run-7/main"))
    assert "/srv/ci/run-7/" in guarded and "/srv/ci/run-7/main/" in allowed
    assert guarded_areas(Path(tempfile.gettempdir()) / "main") == ((), ())
    assert guarded_areas(Path("/main")) == ((), ())
    # A clone one folder down in the temp folder: its folder is guarded, whole (the temp
    # folder's exemption would have let everything beside it be read).
    ci = Path(tempfile.gettempdir()) / "ci-9"
    guarded, allowed = guarded_areas(ci / "main")
    beside = os.path.join(str(ci / "next-to-main"), "")
    assert any(beside.startswith(g) for g in guarded)
    assert not any(beside.startswith(a) for a in allowed)


def test_reading_beside_the_repository_is_refused(outside_reads: list[str]) -> None:
    if not guarded_areas(REPO)[0]:
        pytest.skip(f"the checkout's folder {REPO.parent} is one the system uses: not guarded")
    beside = REPO.parent / f"next-to-{REPO.name}" / "README.md"  # the guard comes first
    with pytest.raises(PermissionError, match="tests must not read outside the repository"):
        beside.read_text()
    with (
        pytest.raises(PermissionError, match="copy it into tests/fixtures"),
        open(os.path.relpath(beside)),  # relative paths are guarded too
    ):
        pass
    with pytest.raises(PermissionError, match="outside the repository"):
        list((REPO / ".." / beside.parent.name).iterdir())
    assert outside_reads and all(p.startswith(str(beside.parent)) for p in outside_reads)
    outside_reads.clear()  # refused on purpose: this test must not fail for it


def test_reading_in_the_repository_and_temp_is_allowed(tmp_path: Path) -> None:
    assert (REPO / "README.md").read_bytes()
    assert any(FIXTURES.iterdir())
    (tmp_path / "note").write_text("ok")
    assert (tmp_path / "note").read_text() == "ok"


@pytest.fixture(scope="module")
def plain_clone() -> Iterator[Path]:
    """A copy of the checkout (what git tracks, plus new files it does not ignore) alone in
    a fresh temporary folder: no ``shared`` or anything else beside it."""
    alone = Path(tempfile.mkdtemp(prefix="streamscope-plain-clone-"))
    try:
        clone = clean_checkout(alone / "main")
        assert sorted(p.name for p in alone.iterdir()) == ["main"]
        yield clone
    finally:
        shutil.rmtree(alone, ignore_errors=True)


def run_in(clone: Path, *args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    """``python *args`` in the clone, importing streamscope from the clone's ``app``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "STREAMSCOPE_"))}
    env.update(PYTHONPATH=str(clone / "app"), QT_QPA_PLATFORM="offscreen")
    return subprocess.run(
        [sys.executable, *args],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_clone_imports_its_own_streamscope(plain_clone: Path) -> None:
    # The repository is installed editable into the venv; PYTHONPATH must win over it, or
    # the clone's tests would run against this checkout's code.
    done = run_in(plain_clone, "-c", "import streamscope; print(streamscope.__file__)", timeout=60)
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()).is_relative_to(plain_clone / "app"), done.stdout


@pytest.mark.timeout(600)
def test_the_suite_collects_on_a_plain_clone(plain_clone: Path) -> None:
    started = time.monotonic()
    done = run_in(
        plain_clone, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", timeout=300
    )
    took = time.monotonic() - started
    output = done.stdout + done.stderr
    summary = output.strip().splitlines()[-1] if output.strip() else ""
    assert done.returncode == 0, output[-4000:]
    assert "error" not in summary.lower(), output[-4000:]
    counted = re.search(r"(\d+) tests? collected", summary)
    assert counted and int(counted.group(1)) > MIN_COLLECTED, summary
    assert took < 240, f"collecting took {took:.0f} s"


@pytest.mark.timeout(600)
def test_fixture_tests_pass_on_a_plain_clone(plain_clone: Path) -> None:
    done = run_in(
        plain_clone,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/lint/test_check_fixtures.py",
        "tests/codecs/lmstudio",
        timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    assert re.search(r"\d+ passed", output) and "error" not in output.splitlines()[-1].lower()


CAUGHT_READ = '''\
"""Reads beside the repository at import and swallows the refusal."""
from pathlib import Path

try:
    Path(__file__).resolve().parents[2].joinpath("beside.txt").read_text()
except OSError:
    pass
'''


@pytest.mark.timeout(600)
@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["serial", "xdist"])
def test_a_read_beside_the_clone_at_collection_fails_the_run(
    plain_clone: Path, workers: tuple[str, ...]
) -> None:
    # Code that catches the guard's refusal at import still fails the run: the module's
    # collection is an error, which xdist's controller reports as the run's own.
    module = plain_clone / "tests" / "test_zz_caught_read.py"
    module.write_text(CAUGHT_READ)
    try:
        done = run_in(
            plain_clone, "-m", "pytest", "-q", "-p", "no:cacheprovider", *workers,
            "tests/test_zz_caught_read.py", "tests/lint/test_check_fixtures.py", timeout=300,
        )  # fmt: skip
    finally:
        module.unlink()
    output = done.stdout + done.stderr
    # (serially the run stops at the collection error; xdist's runs the rest, then fails)
    assert done.returncode in (pytest.ExitCode.TESTS_FAILED, pytest.ExitCode.INTERRUPTED), output[
        -4000:
    ]
    assert "tests must not read outside the repository" in output, output[-4000:]
    assert "beside.txt" in output, output[-4000:]
