"""The ``streamscope`` command.

Sub-commands arrive with their issues; today: ``translate``. Every failure the user can
cause (a missing file, a stream of an unknown protocol) ends with a one-line error on
stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from streamscope import __version__
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.findings import Finding
from streamscope.wire import FrameTooLarge


class CliError(Exception):
    """A user-facing failure: printed as one line, exit status 2."""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamscope",
        description=(
            "StreamScope: a workbench and local proxy that makes LLM streaming APIs "
            "visible and correct."
        ),
    )
    parser.add_argument("--version", action="version", version=f"streamscope {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    tr = sub.add_parser(
        "translate",
        help="rewrite a recorded stream in another protocol",
        description=(
            "Read a recorded stream (raw SSE, or one JSON payload per line) and write the "
            "same stream in the target protocol to stdout. Findings about the input "
            "(what a strict client would trip over) go to stderr."
        ),
    )
    tr.add_argument("--to", required=True, choices=list(PROTOCOLS), help="target protocol")
    tr.add_argument(
        "--from",
        dest="source",
        default="auto",
        choices=["auto", *PROTOCOLS],
        help="source protocol (default: detect it)",
    )
    tr.add_argument(
        "--non-stream",
        action="store_true",
        help="write the assembled non-streaming response body (JSON) instead of a stream",
    )
    tr.add_argument("-q", "--quiet", action="store_true", help="do not print findings")
    tr.add_argument("file", help="the recording ('-' for stdin)")
    return parser


def _print_findings(findings: list[Finding]) -> None:
    for f in findings:
        print(f"streamscope: {f}", file=sys.stderr)


def _translate(args: argparse.Namespace) -> int:
    from streamscope.recording import RecordingError, read_recording
    from streamscope.translate import translate_frames

    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        raise CliError(f"cannot read {args.file}: {exc.strerror or exc}") from None
    try:
        rec = read_recording(data, None if args.source == "auto" else args.source)
    except (RecordingError, FrameTooLarge) as exc:
        raise CliError(f"{args.file}: {exc}") from None
    except UnicodeDecodeError:
        raise CliError(f"{args.file}: not UTF-8 text") from None
    frames, pipeline = translate_frames(rec.frames, rec.protocol, args.to)
    out = sys.stdout.buffer
    if args.non_stream:
        body = get_codec(args.to).encode_response(pipeline.assembler.response)
        out.write(json.dumps(body, ensure_ascii=False, indent=2).encode() + b"\n")
    else:
        out.writelines(frames)
    out.flush()
    if not args.quiet:
        _print_findings(rec.findings + pipeline.findings)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "translate":
            return _translate(args)
    except CliError as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    parser.print_help()
    return 0
