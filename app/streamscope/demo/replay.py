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

A recording that carries a real provider's error (an error frame mid-stream, or a body
that is an error envelope) is replayed with that error's message marked as recorded
(:func:`mark_recorded_errors`): a user who sees "Incorrect API key provided" or "overloaded"
in a client, or in the flow's upstream leg, must not take it for their own provider's
answer or their own key's. Only the message changes; the envelope, its type and code and
every other frame stay as recorded, so the failure the recording reproduces is the same.
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
RECORDED = "[recorded in {name}, replayed by the demo: not a live provider's answer] "
"""What a replayed error's message starts with (``name``: the replay's model name)."""
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


def mark_recorded_errors(data: bytes, name: str) -> bytes:
    """``data`` (a frame's SSE bytes, or a whole JSON body) with the message of every
    error it carries prefixed with :data:`RECORDED`; anything else as it was, byte for
    byte. An error is found by its shape, whichever protocol wrote it: an ``error``
    object with a ``message`` (OpenAI's and Google's envelopes, Anthropic's ``error``
    event, a Responses ``response.failed``), or an object of ``type`` ``error`` with a
    ``message`` (a Responses ``error`` event)."""
    note = RECORDED.format(name=name)
    stripped = data.strip()
    if stripped.startswith(b"{"):  # a whole body
        marked = _marked_json(stripped, note)
        return data if marked is None else data.replace(stripped, marked, 1)
    lines = data.splitlines(keepends=True)
    changed = False
    for i, line in enumerate(lines):
        if not line.startswith(b"data:"):
            continue
        body = line[5:].rstrip(b"\r\n")
        marked = _marked_json(body.removeprefix(b" "), note)
        if marked is not None:
            lines[i] = b"data: " + marked + line[len(line.rstrip(b"\r\n")) :]
            changed = True
    return b"".join(lines) if changed else data


def _marked_json(text: bytes, note: str) -> bytes | None:
    """The JSON ``text`` with its errors' messages marked; None when it holds none (or
    is not JSON)."""
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if not _mark(value, note):
        return None
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


def _mark(value: object, note: str) -> bool:
    """Prefix ``note`` to every error message in ``value`` (in place); whether any."""
    found = False
    if isinstance(value, dict):
        error = value.get("error")
        if isinstance(error, dict) and isinstance(error.get("message"), str):
            if not error["message"].startswith(note):
                error["message"] = note + error["message"]
            found = True
        if value.get("type") == "error" and isinstance(value.get("message"), str):
            if not value["message"].startswith(note):
                value["message"] = note + value["message"]
            found = True
        for key, item in value.items():
            if key != "error" and isinstance(item, dict | list):
                found = _mark(item, note) or found
    elif isinstance(value, list):
        for item in value:
            found = _mark(item, note) or found
    return found


def body_protocol(data: bytes) -> str:
    """The protocol of a replayed whole body (OpenAI Chat when none says it is theirs)."""
    return response_protocol(data) or "openai-chat"


__all__ = ["PREFIX", "RECORDED", "Replay", "ReplayCatalogue", "builtin_dir", "mark_recorded_errors"]
