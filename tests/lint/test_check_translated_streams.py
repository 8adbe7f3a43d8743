"""The other side of "no false alarms": what StreamScope's own strict encoders write keeps
the contract, so every real recording translated into every protocol lints without an
error-level finding. The only findings allowed are what the source itself says (a tool
call cut by max_tokens stays cut, excused by that cut); what the provider did (the cut,
a refusal, its error) stays an outcome of the translated stream too. A client's own limit
is no error either (a tool call in pieces, which @ai-sdk/xai takes only whole), and the
form the proxy writes for that client (``EncodeOptions.whole_tool_calls``) has none."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamscope.codecs import PROTOCOLS, EncodeOptions
from streamscope.lint import lint_bytes
from streamscope.recording import read_recording
from streamscope.translation.offline import translate_frames
from tests.support import FIXTURES, fixture_files

INHERITED = {"stream.truncated-tool-json"}


@pytest.mark.parametrize("target", list(PROTOCOLS))
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_translated_streams_lint_clean(path: Path, target: str) -> None:
    rec = read_recording(path.read_bytes())
    frames, _ = translate_frames(rec.frames, rec.protocol, target)
    report = lint_bytes(b"".join(frames), target)
    wire = {f.rule_id for f in report.findings if f.kind != "client"}
    assert wire <= INHERITED, [str(f) for f in report.findings]
    whole, _ = translate_frames(
        rec.frames, rec.protocol, target, EncodeOptions(whole_tool_calls=True)
    )
    assert [
        str(f) for f in lint_bytes(b"".join(whole), target).findings if f.kind == "client"
    ] == []
    source = lint_bytes(b"".join(f.raw for f in rec.frames), rec.protocol)
    cut_call = any(f.rule_id == "provider.length-in-tool-call" for f in source.outcomes)
    if target == "lmstudio" and cut_call:
        # LM Studio's chat.end has no stop reason: the cut cannot be said, and what an
        # LM Studio client gets is a call whose arguments do not parse
        assert {f.rule_id for f in report.errors} == {"stream.truncated-tool-json"}
    else:
        assert report.errors == []
    if source.upstream_error is not None:
        assert report.upstream_error is not None  # the provider's error, said as it was
