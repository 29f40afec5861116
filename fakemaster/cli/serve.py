"""``python -m fakemaster serve``: a fake MariaDB 10.11 primary on a TCP port.

It serves the binlog files of ``--binlog-dir`` (with the answers of a recording's replay file),
a scenario (``--scenario``, optionally released ``--live``), or a small built-in demo stream;
optionally behind a fault proxy (``--faults``) and a capture proxy (``--pcap``). It prints the
address it listens on and stops on SIGINT or SIGTERM. Building its parser imports no other
command's module, and what it serves is imported only for that (issue #7, readiness).

This module holds the options and the run; what is served is chosen in ``serve_source``, the
ServerConfig made in ``serve_settings``, and the server run in ``serve_loop``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from fakemaster.cli.common import CommandError, Subparsers, int_range, seconds
from fakemaster.cli.options import add_connection_options, add_deprecated_alias
from fakemaster.cli.serve_loop import serve_until_stopped
from fakemaster.cli.serve_settings import (
    account_setting,
    check_exposure,
    served_config,
    variable_setting,
)
from fakemaster.cli.serve_source import served_source

__all__ = ["add_parser", "run"]


def _rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a number of transactions per second: {text!r}"
        ) from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"expected a positive rate, got {text}")
    return value


def add_parser(subparsers: Subparsers) -> None:
    from fakemaster.config.server_config import DEFAULT_VERSION, ServerConfig

    defaults = ServerConfig()
    parser = subparsers.add_parser(
        "serve",
        help="run a fake MariaDB 10.11 primary",
        description=(
            "Run a fake MariaDB 10.11 primary that replicas and replication clients "
            "(mariadb-binlog --read-from-remote-server, python-mysql-replication, ...) connect "
            "to. It serves the binlog files of --binlog-dir, or without it a small built-in "
            "demo stream. It prints the address it listens on, and stops on SIGINT or SIGTERM."
        ),
    )
    add_connection_options(
        parser, listening=True, host=defaults.host, port=3306, user=defaults.user
    )
    parser.add_argument(
        "--account",
        dest="accounts",
        action="append",
        type=account_setting,
        default=[],
        metavar="USER:PASSWORD:GRANTS",
        help=(
            "one more account that may log in (USER@HOST for a host other than %%; :GRANTS optional), with GRANTS as a GRANT statement lists them "
            "('cdc:pw:SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT'; "
            "'dump:pw:RELOAD; SELECT, LOCK TABLES ON shop.*'; ON *.* when left out); without "
            "GRANTS a replication account; repeatable"
        ),
    )
    parser.add_argument(
        "--binlog-dir",
        type=Path,
        metavar="DIR",
        help=(
            "serve the binlog files listed in DIR/<basename>.index byte for byte (files appended "
            "to or rotated by another process are picked up); default: the demo stream"
        ),
    )
    parser.add_argument(
        "--scenario",
        metavar="NAME|FILE",
        help=(
            "serve a scenario: a built-in one by name (python -m fakemaster scenarios lists "
            "them) or a TOML file; the served variables (binlog_row_image, "
            "binlog_row_metadata, ...) are the scenario's settings"
        ),
    )
    parser.add_argument(
        "--replay",
        type=Path,
        metavar="FILE",
        help="answer as the primary a recording was made of (python -m fakemaster record): "
        "the replay file's variables where the served binlog does not say otherwise "
        "(default: DIR/fakemaster-replay.json when --binlog-dir has one)",
    )
    parser.add_argument(
        "--binlog-basename",
        metavar="NAME",
        help="the index is DIR/NAME.index (default: the one *.index file in DIR)",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="serve a --binlog-dir holding a recording that did not finish (refused "
        "otherwise: `record` stopped by an error leaves its files but no replay file)",
    )
    parser.add_argument(
        "--allow-empty-password-remote",
        action="store_true",
        help="listen on a --host other than a loopback address even though an account has "
        "no password (refused otherwise: anyone who reaches the port could log in)",
    )
    parser.add_argument(
        "--frame-cache-mb",
        type=int_range(0, 1 << 30),
        default=defaults.frame_cache_bytes >> 20,
        metavar="MB",
        help="disk the frame cache may use: binlog files framed once as dump packets and sent "
        "to every replica (%(default)s); 0 frames per replica",
    )
    parser.add_argument(
        "--frame-cache-dir",
        metavar="DIR",
        help="where the frame cache's (unnamed) files go (default: the temporary directory)",
    )
    parser.add_argument(
        "--dump-thread-niceness",
        type=int_range(0, 19),
        default=defaults.dump_thread_niceness,
        metavar="N",
        help="run the threads that send dumps and frame files N nice steps below the event "
        "loop, which answers logins and KILL (%(default)s; 0 keeps them level; Linux)",
    )
    parser.add_argument(
        "--pcap",
        type=Path,
        metavar="FILE",
        help="record every connection's traffic in FILE (a pcap: `fakemaster pcap FILE` "
        "dissects it); a capture proxy on --host/--port relays to the server (needs no "
        "privileges; extra [scapy] only to dissect)",
    )
    parser.add_argument(
        "--faults",
        type=Path,
        metavar="FILE",
        help="a fault plan (.toml or .json, see docs/faults.md): its [[faults]] are applied "
        "by a fault proxy listening on --host/--port in front of the server, its "
        "[[server_faults]] by the server at their times",
    )
    parser.add_argument(
        "--semi-sync",
        action="store_true",
        help="semi-synchronous replication on (rpl_semi_sync_master_enabled)",
    )
    parser.add_argument(
        "--semi-sync-timeout",
        type=int_range(0, 0xFFFFFFFF),
        default=defaults.semi_sync_timeout_ms,
        metavar="MS",
        help="rpl_semi_sync_master_timeout in milliseconds (%(default)s)",
    )
    parser.add_argument(
        "--gtid-domain-id",
        type=int_range(0, 0xFFFFFFFF),
        metavar="N",
        help=f"@@gtid_domain_id (default: the scenario's, else {defaults.gtid_domain_id})",
    )
    told = parser.add_argument_group(
        "what the binlog tells",
        "By default these are what the served binlog says (its newest FORMAT_DESCRIPTION, "
        "TABLE_MAP and QUERY events), MariaDB's defaults where it cannot tell; a value given "
        "here that contradicts the files is an error. They also shape the demo stream.",
    )
    told.add_argument(
        "--server-id", type=int_range(1, 0xFFFFFFFF), metavar="N", help="@@server_id (demo: 1)"
    )
    told.add_argument(
        "--server-version",
        dest="version_string",
        metavar="VERSION",
        help=f"@@version, without the handshake's 5.5.5- prefix (demo: {DEFAULT_VERSION})",
    )
    add_deprecated_alias(
        told, "--version-string", replacement="--server-version", dest="version_string"
    )
    told.add_argument(
        "--binlog-checksum",
        dest="checksum",
        type=str.upper,
        choices=("CRC32", "NONE"),
        help="@@binlog_checksum, as the server option of that name (demo: CRC32)",
    )
    add_deprecated_alias(
        told,
        "--checksum",
        replacement="--binlog-checksum",
        dest="checksum",
        type=str.upper,
        choices=("CRC32", "NONE"),
    )
    told.add_argument(
        "--variable",
        dest="variables",
        action="append",
        type=variable_setting,
        default=[],
        metavar="NAME=VALUE",
        help=(
            "a global system variable, as the server option of that name "
            "(binlog_row_metadata=FULL, character_set_server=latin1, max_allowed_packet=64M, "
            "log_slave_updates=ON, ...); repeatable"
        ),
    )
    tls = parser.add_argument_group("TLS", "Clients may switch to TLS (have_ssl=YES).")
    tls.add_argument("--ssl-cert", type=Path, metavar="FILE", help="server certificate (PEM)")
    tls.add_argument("--ssl-key", type=Path, metavar="FILE", help="its private key (PEM)")
    parser.add_argument(
        "--heartbeat",
        type=seconds,
        metavar="SECONDS",
        help="heartbeat period for replicas that do not set one (default: none, as MariaDB)",
    )
    parser.add_argument(
        "--live",
        type=_rate,
        metavar="RATE",
        help=(
            "with --scenario: start with none of its transactions in the binlog and release "
            "RATE transactions per second (the SQL snapshot follows what is released)"
        ),
    )
    parser.add_argument(
        "--idle-scale",
        type=_idle_scale,
        default=1.0,
        metavar="FACTOR",
        help=(
            "with --live: an idle period of the scenario pauses the releases for its seconds "
            "times FACTOR (default: 1, as long as the scenario says; 0: no pause)"
        ),
    )
    parser.add_argument(
        "--demo-live",
        type=seconds,
        metavar="SECONDS",
        help="append one more demo transaction (an order) every SECONDS",
    )
    parser.add_argument(
        "--key-file",
        type=Path,
        metavar="FILE",
        help=(
            "file_key_management key file (<id>;<hex key> lines): binlogs written with "
            "encrypt_binlog=ON are sent decrypted, as a primary with the key sends them"
        ),
    )
    parser.set_defaults(handler=run, resumes_collection=True)


def _idle_scale(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"a factor >= 0, not {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    import asyncio

    from fakemaster.vocabulary.errors import ConfigError, FakemasterError

    try:
        store, writer, source = served_source(args)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    except FakemasterError as exc:  # e.g. a --version-string too long for the FDE
        raise CommandError(f"cannot write the demo binlog: {exc}") from None
    try:
        config = served_config(args, store)
        check_exposure(config, args.allow_empty_password_remote)
        faults = _fault_plan(args.faults) if args.faults is not None else None
        live = getattr(args, "live", None)
        idle_scale = getattr(args, "idle_scale", 1.0)
        from fakemaster.server.loop_gate import new_gated_loop

        # The loop's gate: dump threads step aside while it answers logins and queries.
        with asyncio.Runner(loop_factory=new_gated_loop) as runner:
            return runner.run(
                serve_until_stopped(
                    config,
                    store,
                    writer,
                    source,
                    args.demo_live,
                    faults,
                    args.pcap,
                    live,
                    idle_scale,
                )
            )
    except ConfigError as exc:  # e.g. an option the served binlog contradicts
        raise CommandError(str(exc)) from None
    finally:
        close = getattr(store, "close", None)
        if callable(close):
            close()


def _fault_plan(path: Path) -> tuple[Any, tuple[Any, ...]]:
    """(wire fault plan, server faults) of a plan file; one error line for a bad one."""
    from fakemaster.faults.plan import PlanError
    from fakemaster.faults.server_faults import load_plan_file

    try:
        return load_plan_file(path)
    except OSError as exc:
        raise CommandError(f"{path}: {exc.strerror or exc}") from None
    except PlanError as exc:  # names the file already
        raise CommandError(str(exc)) from None
