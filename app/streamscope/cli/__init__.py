"""The ``streamscope`` command: every sub-command's handler lives in this package.

Without a sub-command it opens the window (with the proxy inside); ``serve`` runs the
proxy headless; ``translate``, ``lint`` (:mod:`.lint`; a ``.har`` file lints each entry's
response) and ``probe`` (:mod:`.probe`) work on streams (``translate --request``, on a
request body: :mod:`.translate_request`); ``doctor`` (:mod:`.doctor`)
checks the config, the port, the upstreams and (opt-in) each account, and says what to
fix; ``clients`` (:mod:`.clients`) installs, lists and runs the real clients. Every failure the
user can cause (a missing file, a stream of an unknown protocol) ends with a one-line
error on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from streamscope import __version__
from streamscope.cli import audit as audit_cli  # streamscope audit
from streamscope.cli import clients as realclients_cli
from streamscope.cli import doctor as doctor_cli
from streamscope.cli import lint as lint_cli
from streamscope.cli import probe as probe_cli
from streamscope.cli import translate_request as request_cli
from streamscope.codecs import PROTOCOLS, get_codec
from streamscope.findings import Finding
from streamscope.wire import FrameTooLarge

if TYPE_CHECKING:
    import asyncio

    from streamscope.config import Config


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
    # Without a sub-command StreamScope opens the window (the proxy runs inside it).
    _proxy_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sv = sub.add_parser(
        "serve",
        help="run the local proxy headless",
        description=(
            "Run the local proxy: OpenAI Chat, Anthropic Messages, OpenAI Responses and LM "
            "Studio clients in, any configured upstream out. Logs one line per request. "
            "Stop with Ctrl-C."
        ),
    )
    _proxy_options(sv)

    tr = sub.add_parser(
        "translate",
        help="rewrite a recorded stream (or, with --request, a request) in another protocol",
        description=(
            "Read a recorded stream (raw SSE, or one JSON payload per line) and write the "
            "same stream in the target protocol to stdout. Findings about the input "
            "(what a strict client would trip over) go to stderr. With --request, read a "
            "request body (JSON) and write the body the proxy sends to an upstream of the "
            "target protocol; what the translation dropped or changed goes to stderr, one "
            "line each."
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
    tr.add_argument(
        "--request",
        action="store_true",
        help="FILE is a request body: write it as the proxy sends it upstream, with what "
        "the translation dropped or changed on stderr",
    )
    tr.add_argument("-q", "--quiet", action="store_true", help="do not print findings or notes")
    tr.add_argument("file", help="the recording, or the request body ('-' for stdin)")
    lint_cli.add_parser(sub)
    realclients_cli.add_parser(sub)
    probe_cli.add_parser(sub)
    audit_cli.add_parser(sub)
    _proxy_options(doctor_cli.add_parser(sub))
    return parser


def _proxy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        help="config file (default: $STREAMSCOPE_CONFIG, else the platform config dir)",
    )
    parser.add_argument("--host", help="address to listen on (default from config: 127.0.0.1)")
    parser.add_argument("--port", type=_port, help="port to listen on (default from config: 8787)")


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"a port is 0 to 65535, not {port}")
    return port


def _print_findings(findings: list[Finding]) -> None:
    for f in findings:
        print(f"streamscope: {f}", file=sys.stderr)


def _translate(args: argparse.Namespace) -> int:
    from streamscope.recording import RecordingError, read_recording
    from streamscope.translation.offline import translate_frames

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


def _load(args: argparse.Namespace) -> tuple[Path, Config, str | None]:
    """The config file named by the options (with ``--host``/``--port`` applied), and
    the local key generated for it when it had none."""
    from streamscope.config import (
        ConfigError,
        default_config_path,
        exposure_problem,
        keys_exposed,
        load_config,
    )
    from streamscope.config.save import ensure_local_key

    path: Path = args.config or default_config_path()
    try:
        config = load_config(path)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    if args.host:
        config.proxy.host = args.host
    if args.port is not None:
        config.proxy.port = args.port
    problem = exposure_problem(config.proxy)
    if problem:
        raise CliError(problem)
    try:
        config.storage.database_url()  # (its variable set: said before any file is written)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    try:
        new_key = ensure_local_key(config, path)
    except ConfigError as exc:
        raise CliError(f"cannot save a generated key: {exc}") from None
    except OSError as exc:
        raise CliError(f"cannot save a generated key to {path}: {exc.strerror or exc}") from None
    warning = keys_exposed(config, path)
    if warning:
        print(f"streamscope: warning: {warning}", file=sys.stderr, flush=True)
    return path, config, new_key


def _without_secrets(config: Config, message: str) -> str:
    """A start error as it may be printed: every secret of the config masked (the
    database's password however its URL gives it: a driver's message may quote it)."""
    from streamscope.redact import Redactor, mask_params

    return mask_params(Redactor.for_config(config).text(message))


def _window(args: argparse.Namespace) -> int:
    """The desktop window, with the proxy running inside it."""
    import os

    from streamscope.gui.display import why_no_window

    reason = why_no_window(os.environ)
    if reason:
        raise CliError(f"{reason}; run `streamscope serve` for the headless proxy")
    try:
        from streamscope.gui.app import run_window
    except ImportError as exc:
        raise CliError(
            f"the window cannot start ({exc}); `streamscope serve` runs headless"
        ) from None
    from streamscope.config import ConfigError
    from streamscope.private import UnusableDatabase
    from streamscope.storage.errors import StorageError

    path, config, new_key = _load(args)
    try:
        return run_window(config, path, new_key=new_key)
    except (StorageError, ConfigError, UnusableDatabase) as exc:
        if new_key:  # saved all the same: the user needs it once this is mended
            print(f"Generated a local API key (saved in the config): {new_key}", flush=True)
        raise CliError(_without_secrets(config, str(exc))) from None


def _fast_loop() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop's event loop where it is installed (``streamscope serve`` only: the window
    runs on Qt's loop), for less added time to first byte (README, "What the proxy
    adds"). The standard loop otherwise, or when ``STREAMSCOPE_LOOP=asyncio`` asks for it."""
    import os

    if os.environ.get("STREAMSCOPE_LOOP", "").lower() == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


def _serve(args: argparse.Namespace) -> int:
    import asyncio
    import logging
    import signal
    import sqlite3

    from streamscope.config import ConfigError, default_data_dir, pool_state_path
    from streamscope.private import UnusableDatabase
    from streamscope.proxy.server import PortInUse, ProxyServer, tune_gc
    from streamscope.storage.errors import StorageError

    path, config, new_key = _load(args)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    state = pool_state_path(path)
    flows = default_data_dir() / "flows.sqlite3"
    try:
        server = ProxyServer(config.with_defaults(), state_path=state, capture_path=flows)
    except (StorageError, ConfigError, UnusableDatabase) as exc:
        raise CliError(_without_secrets(config, str(exc))) from None
    except (sqlite3.Error, OSError) as exc:
        raise CliError(f"cannot open the state files ({state}, {flows}): {exc}") from None

    tune_gc()
    if new_key:  # said before listening: a taken port or a refused address still saved it
        print(f"Generated a local API key (saved in the config): {new_key}", flush=True)

    async def run() -> None:
        await server.start()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, server.request_stop)
        print(f"StreamScope proxy listening on {server.url}  (config: {path})", flush=True)
        database = server.app.core.database
        if database is not None:  # one of the replicas: how its flows name it
            print(
                f'Replica {database.replica}: the flows it serves say "served by '
                f"{database.replica}\" (the Traffic list's Replica column); pool and flows "
                f"shared on PostgreSQL ({database.where})",
                flush=True,
            )
        names = ", ".join(u.name for u in server.app.config.upstreams)
        print(
            f"Upstreams: {names}. Point an OpenAI client at {server.url}/v1, an "
            f"Anthropic client at {server.url}.",
            flush=True,
        )
        demo = next((u for u in server.app.config.upstreams if u.is_demo), None)
        if demo is not None:
            print(_demo_hint(server.url, new_key is not None), flush=True)
        try:
            await server.wait()
        finally:
            await server.stop()

    try:
        with asyncio.Runner(loop_factory=_fast_loop()) as runner:
            runner.run(run())
    except PortInUse as exc:
        raise CliError(f"{exc.strerror} (choose another with --port)") from None
    except KeyboardInterrupt:
        pass
    return 0


def _demo_hint(url: str, key_is_new: bool) -> str:
    from streamscope.demo.replay import ReplayCatalogue
    from streamscope.demo.scenarios import SCENARIOS

    replays = len(ReplayCatalogue.default(None).names())
    body = '{"model":"demo-chat","stream":true,"messages":[{"role":"user","content":"hi"}]}'
    return (
        f"Demo models (no key or network needed): {', '.join(SCENARIOS)}, and "
        f"replay/<name> ({replays} shipped recordings; GET /v1/models lists them). Try:\n"
        f"  curl -N {url}/v1/chat/completions -H 'Authorization: Bearer "
        f"{'<the key above>' if key_is_new else '<your local key>'}' -H 'content-type: "
        f"application/json' -d '{body}'"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "translate":
            return request_cli.run(args) if args.request else _translate(args)
        if args.command == "lint" and args.clients:
            args.only, args.timeout = None, 30.0
            return realclients_cli.run_file(args)
        if args.command == "clients":
            return realclients_cli.run(args)
        if args.command == "lint":
            from streamscope.analysis import har_lint

            return lint_cli.run_har(args) if har_lint.is_har(args.file) else lint_cli.run(args)
        if args.command == "probe":
            return probe_cli.run(args)
        if args.command == "audit":
            return audit_cli.run(args)
        if args.command == "doctor":
            return doctor_cli.run(args)
        if args.command == "serve":
            return _serve(args)
        if args.command is None:
            return _window(args)
    except CliError as exc:
        print(f"streamscope: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    parser.print_help()
    return 0
