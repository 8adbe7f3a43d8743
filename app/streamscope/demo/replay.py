"""Recorded streams the demo backend replays: model ``replay/<name>``.

Three places are searched, later ones winning on a name clash (a user's own file is
more specific than a shipped one):

- the shipped catalogue in ``resources/replay``: ``recordings/`` (real streams from
  public SDK test suites; ``replay/<stem>``) and ``broken/`` (one per classic
  empty-response cause; ``replay/broken/<stem>``);
- ``replay/`` in the data dir (``replay/<path without extension>``);
- the demo upstream's ``replay_dirs``.

A recording is raw SSE bytes (``.sse``), one JSON payload per line (``.jsonl``), or a
whole non-streaming body (``.json``), which is served as it is, ``200`` with
``application/json`` even to a stream request: the "200 with a body that is not SSE"
failure, reproduced. Folders are read on every lookup, so files added while the app
runs are there at once.

Pacing: a recording may have a sidecar ``<file>.timing`` (``foo.sse.timing``), a JSON
list with each frame's arrival in seconds since the first; the replay keeps that pace.
Without one (or with one that does not fit the frames) frames come at a fixed pace.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from streamscope.recording import Recording, RecordingError, read_recording, response_protocol
from streamscope.resources import resource_path

PREFIX = "replay/"
SUFFIXES = (".sse", ".jsonl", ".json")
MAX_FILE = 64 * 1024 * 1024


def builtin_dir() -> Path:
    """The shipped catalogue, ``resources/replay``."""
    return resource_path("replay")


@dataclass(frozen=True, slots=True)
class Replay:
    name: str  # the model name, ``replay/...``
    path: Path

    @property
    def is_body(self) -> bool:
        """A whole non-streaming body rather than a stream."""
        return self.path.suffix == ".json"

    def recording(self) -> Recording:
        """The frames and protocol (``RecordingError`` when it is neither SSE nor JSON lines)."""
        data = self.path.read_bytes()[:MAX_FILE]
        return read_recording(data)

    def offsets(self, frames: int) -> list[float] | None:
        """Each frame's recorded arrival (seconds since the first), if a ``.timing``
        sidecar gives one per frame, never decreasing; else None."""
        sidecar = self.path.with_name(self.path.name + ".timing")
        try:
            times = json.loads(sidecar.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(times, list) or len(times) != frames:
            return None
        if not all(isinstance(t, int | float) and t >= 0 for t in times):
            return None
        if any(b < a for a, b in itertools.pairwise(times)):
            return None
        return [float(t) for t in times]


class ReplayCatalogue:
    def __init__(self, roots: Iterable[tuple[Path, str]]) -> None:
        """``roots``: (folder, name prefix under ``replay/``), searched in order."""
        self.roots = list(roots)

    @classmethod
    def default(cls, data_dir: Path | None, extra: Iterable[str] = ()) -> ReplayCatalogue:
        shipped = builtin_dir()
        roots = [(shipped / "recordings", ""), (shipped / "broken", "broken/")]
        if data_dir is not None:
            roots.append((data_dir / "replay", ""))
        roots += [(Path(d).expanduser(), "") for d in extra]
        return cls(roots)

    def replays(self) -> dict[str, Replay]:
        found: dict[str, Replay] = {}
        for root, prefix in self.roots:
            if not root.is_dir():
                continue
            for path in sorted(root.rglob("*")):
                if path.suffix not in SUFFIXES or not path.is_file():
                    continue
                relative = path.relative_to(root)
                if any(part.startswith(".") for part in relative.parts):
                    continue  # hidden files and folders (.cache, .git, editor swaps)
                stem = relative.with_suffix("").as_posix()
                name = f"{PREFIX}{prefix}{stem}"
                found[name] = Replay(name, path)
        return found

    def names(self) -> list[str]:
        return sorted(self.replays())

    def get(self, model: str) -> Replay | None:
        if not model.startswith(PREFIX):
            return None
        return self.replays().get(model)

    def protocol(self, model: str) -> str | None:
        """The protocol a replay speaks (None: not a replay, or unreadable)."""
        replay = self.get(model)
        if replay is None:
            return None
        try:
            if replay.is_body:
                return body_protocol(replay.path.read_bytes()[:MAX_FILE])
            return replay.recording().protocol
        except (OSError, RecordingError):
            return None


def body_protocol(data: bytes) -> str:
    """The protocol of a replayed whole body (OpenAI Chat when none says it is theirs)."""
    return response_protocol(data) or "openai-chat"


__all__ = ["PREFIX", "Replay", "ReplayCatalogue", "builtin_dir"]
