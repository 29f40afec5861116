"""``python -m fakemaster record --host HOST --port PORT --out DIR``: a real primary's binlog files
and its answers to a replica's setup statements, recorded for ``serve`` to replay
(docs/record.md)."""

from __future__ import annotations

import argparse
import ssl
from pathlib import Path

from fakemaster.cli.common import EXIT_OK, CommandError, Subparsers, int_range, seconds
from fakemaster.cli.options import (
    add_client_compress_option,
    add_client_tls_options,
    add_connection_options,
    add_deprecated_alias,
    client_tls_context,
)

__all__ = ["add_parser", "run"]


def add_parser(subparsers: Subparsers) -> None:
    parser = subparsers.add_parser(
        "record",
        help="record a real primary's binlog and answers, for serve to replay",
        description=(
            "Connect to a MariaDB primary as a replica and record what it serves into DIR: its "
            "binlog files from the first one, byte for byte (as mariadb-binlog --raw writes "
            "them), their index, and fakemaster-replay.json with its answers to a replica's "
            "setup statements (docs/record.md). `serve --binlog-dir DIR` replays it. By "
            "default the recording ends at the end of the primary's binlog."
        ),
    )
    add_connection_options(parser, listening=False, host="127.0.0.1", port=3306, user="root")
    add_deprecated_alias(
        parser,
        "--upstream",
        replacement="--host HOST --port PORT",
        dest="host",
        convert=_host_port,
        metavar="HOST:PORT",
    )
    parser.add_argument(
        "--out",
        required=True,
        type=Path,
        metavar="DIR",
        help="where the recording goes (created; must hold no binlog index)",
    )
    until = parser.add_mutually_exclusive_group()
    until.add_argument(
        "--until-idle",
        type=seconds,
        metavar="SECONDS",
        help="follow the binlog, stop once no event came for SECONDS",
    )
    until.add_argument(
        "--stop-at",
        metavar="GTID|FILE:POS",
        help="follow the binlog, stop once the group of GTID (D-S-N, or a list) "
        "or the position FILE:POS is recorded whole",
    )
    parser.add_argument(
        "--server-id",
        type=int_range(1, 0xFFFFFFFF),
        metavar="N",
        help="the server id to register as a replica with (default: 4000000001)",
    )
    parser.add_argument(
        "--max-retries",
        type=int_range(0, 1000),
        default=10,
        metavar="N",
        help="give up after N lost connections in a row that recorded no new whole event "
        "group (%(default)s); the directory is then marked incomplete",
    )
    add_client_tls_options(parser)
    add_client_compress_option(parser)
    parser.set_defaults(handler=run)


def _tls(args: argparse.Namespace) -> ssl.SSLContext | None:
    try:
        return client_tls_context(args)
    except (OSError, ssl.SSLError) as exc:
        raise CommandError(f"record: TLS settings: {exc}") from None


def _host_port(text: str, namespace: argparse.Namespace) -> None:
    """``--upstream HOST:PORT`` (deprecated) as ``--host HOST --port PORT``."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not host or not 0 < int(port) <= 65535:
        raise ValueError(f"expected HOST:PORT, got {text!r}")
    namespace.host, namespace.port = host.strip("[]"), int(port)


def run(args: argparse.Namespace) -> int:
    from fakemaster.record.recorder import (
        DEFAULT_REPLICA_SERVER_ID,
        RecordOptions,
        StopRule,
        record,
    )
    from fakemaster.vocabulary.errors import FakemasterError

    if args.stop_at is not None:
        try:
            stop = StopRule.parse_stop_at(args.stop_at)
        except ValueError as exc:
            raise CommandError(f"--stop-at: {exc}") from None
    else:
        stop = StopRule(until_idle=args.until_idle)
    options = RecordOptions(
        host=args.host,
        port=args.port,
        out=args.out,
        user=args.user,
        password=args.password,
        stop=stop,
        server_id=args.server_id or DEFAULT_REPLICA_SERVER_ID,
        max_retries=args.max_retries,
        tls=_tls(args),
        compress=args.compress,
    )
    try:
        summary = record(options, progress=lambda text: print(text, flush=True))
    except (FakemasterError, OSError) as exc:
        raise CommandError(f"record: {exc}") from None
    last, size = summary.files[-1]
    print(
        f"recorded {len(summary.files)} binlog file(s), {summary.events} events, to {last}:{size}"
        f" (GTIDs {summary.gtids or 'none'}; stopped by {summary.stopped_by}); replay file "
        f"{summary.replay}"
    )
    return EXIT_OK
