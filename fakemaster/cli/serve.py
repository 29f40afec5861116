"""``python -m fakemaster serve``: a fake MariaDB 10.11 primary on a TCP port.

It serves the binlog files of ``--binlog-dir`` (with the answers of a recording's replay file),
a scenario (``--scenario``, optionally released ``--live``), or a small built-in demo stream;
optionally behind a fault proxy (``--faults``) and a capture proxy (``--pcap``). It prints the
address it listens on and stops on SIGINT or SIGTERM. Building its parser imports no other
command's module, and what it serves is imported only for that (issue #7, readiness).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.cli.collection_hold import resume_collection
from fakemaster.cli.common import (
    EXIT_OK,
    CommandError,
    Subparsers,
    int_range,
    load_key_file,
    seconds,
)

if TYPE_CHECKING:
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.server.master import FakeMaster
    from fakemaster.store import BinlogStore
    from fakemaster.store.demo import DemoWriter

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
    from fakemaster.cli.serve_settings import variable_setting
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
    parser.add_argument("--host", default=defaults.host, help="address to listen on (%(default)s)")
    parser.add_argument(
        "--port",
        type=int_range(0, 65535),
        default=3306,
        help="TCP port (%(default)s); 0 picks a free one",
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
        "--user",
        default=defaults.user,
        help="account name (%(default)s); root has all privileges, any other name those of "
        "GRANT REPLICATION SLAVE, REPLICATION CLIENT",
    )
    parser.add_argument(
        "--password", default=defaults.password, help="its password (default: none)"
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
        "--version-string",
        metavar="S",
        help=f"@@version, without the handshake's 5.5.5- prefix (demo: {DEFAULT_VERSION})",
    )
    told.add_argument(
        "--checksum",
        type=str.upper,
        choices=("CRC32", "NONE"),
        help="@@binlog_checksum (demo: CRC32)",
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


def _serve_source(args: argparse.Namespace) -> tuple[BinlogStore, DemoWriter | None, str]:
    """(store, demo writer or None, description) of what ``serve`` serves (the demo and the
    encoder it writes with are imported only to serve the demo)."""
    if getattr(args, "live", None) is not None and args.scenario is None:
        raise CommandError("--live releases a scenario's transactions: give --scenario")
    if args.scenario is not None:
        return _scenario_source(args)
    if args.binlog_dir is None and args.replay is not None:
        raise CommandError("--replay answers for a recording: give its --binlog-dir")
    if args.binlog_dir is None:
        from fakemaster.store.demo import demo_store

        # The demo binlog is written as the options describe its server.
        values = _settings(args).global_variables()
        store, writer = demo_store(
            server_id=int(values["server_id"] or 0),
            server_version=str(values["version"]),
            checksum=values["binlog_checksum"] == "CRC32",
            domain_id=args.gtid_domain_id or 0,
        )
        names = store.file_names()
        return store, writer, f"demo binlog {names[0]} to {names[-1]}"
    if args.demo_live is not None:
        raise CommandError("--demo-live needs the demo stream: leave out --binlog-dir")
    from fakemaster.store.directory import DirectoryBinlogStore

    try:
        directory_store = DirectoryBinlogStore(args.binlog_dir, args.binlog_basename)
        names = directory_store.file_names()
    except OSError as exc:
        raise CommandError(f"{args.binlog_dir}: {exc.strerror or exc}") from None
    if not names:
        directory_store.close()
        raise CommandError(f"{directory_store.index_path}: lists no binlog files")
    try:
        replayed = _apply_replay(args, directory_store)
    except BaseException:
        directory_store.close()
        raise
    return directory_store, None, f"{len(names)} binlog file(s) of {args.binlog_dir}{replayed}"


def _apply_replay(args: argparse.Namespace, store: BinlogStore) -> str:
    """Take the settings of the recording's replay file (``--replay``, else the one in
    ``--binlog-dir``): its variables, less those the options give and those the served files
    contradict (a note on stderr for each; fakemaster.record.replay says why)."""
    from fakemaster.record.replay_file import find_replay

    path = args.replay if args.replay is not None else find_replay(args.binlog_dir)
    if path is None:
        return ""
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.record.replay import Replay, ReplayError, replay_settings

    given = {name for name, _ in args.variables}
    if given & {"character_set_server", "collation_server"}:
        given |= {"character_set_server", "collation_server"}
    options = {
        "server_id": args.server_id,
        "version": args.version_string,
        "binlog_checksum": args.checksum,
        "gtid_domain_id": args.gtid_domain_id,
        "rpl_semi_sync_master_enabled": True if args.semi_sync else None,
    }
    given |= {name for name, value in options.items() if value is not None}
    try:
        replay = Replay.load(path)
        settings = replay_settings(replay, store, given=dict.fromkeys(given))
    except ReplayError as exc:
        raise CommandError(str(exc)) from None
    args.scenario_variables = settings.variables
    if settings.fields.get("rpl_semi_sync_master_enabled"):
        args.semi_sync = True
    timeout = settings.fields.get("rpl_semi_sync_master_timeout")
    if timeout is not None and args.semi_sync_timeout == ServerConfig.semi_sync_timeout_ms:
        args.semi_sync_timeout = int(timeout)
    for note in settings.notes:
        print(f"replay: {note}", file=sys.stderr)
    return f", answering as {replay.upstream or 'the recorded primary'} did ({path})"


def _scenario_source(args: argparse.Namespace) -> tuple[BinlogStore, None, str]:
    """``serve --scenario``: the scenario compiled into a memory store; its settings become
    the served variables (``args.scenario_variables``) and, unless given, the GTID domain."""
    if args.binlog_dir is not None or args.demo_live is not None or args.replay is not None:
        raise CommandError(
            "--scenario serves the scenario: leave out --binlog-dir, --replay and --demo-live"
        )
    from scenarios.errors import ScenarioError
    from scenarios.library import serving
    from scenarios.live import ScenarioStore
    from scenarios.serving import find_scenario, scenario_variables

    # A built-in scenario may be served live by default (live_stream, snapshot_then_stream...).
    # --live starts from nothing; the library's rate from its own start (long_idle: one).
    default = serving(args.scenario)
    start = 0 if getattr(args, "live", None) is not None else default.released
    if getattr(args, "live", None) is None and default.rate is not None:
        args.live = default.rate
    try:
        scenario = find_scenario(args.scenario)
        store = ScenarioStore(scenario, released=start)
    except ScenarioError as exc:
        raise CommandError(str(exc)) from None
    settings = scenario.settings
    told = scenario_variables(settings)
    # server_id, version and checksum the served binlog tells; the options may not contradict.
    args.scenario_variables = {
        name: value
        for name, value in told.items()
        if name not in ("server_id", "version", "binlog_checksum")
    }
    if args.gtid_domain_id is None:
        args.gtid_domain_id = settings.gtid_domain_id
    names = store.file_names()
    return (
        store,
        None,
        f"scenario {args.scenario} ({len(scenario.transactions)} transactions, {names[0]} to {names[-1]})",
    )


def _global(name: str, value: Any) -> Any:
    """The value of global ``name`` when the server option says ``value``."""
    from fakemaster.config.server_config import ServerConfig

    return ServerConfig(variables={name: value}).global_variables()[name]


def _settings(args: argparse.Namespace, **fields: Any) -> ServerConfig:
    """The ServerConfig the options describe (ConfigError for a contradictory one)."""
    from fakemaster.config.server_config import ServerConfig

    variables = dict(getattr(args, "scenario_variables", {}))
    for name, value in args.variables:
        if name in variables and _global(name, variables[name]) != _global(name, value):
            raise CommandError(
                f"--variable {name}={value} contradicts the scenario's {name}={variables[name]}"
            )
        variables[name] = value
    given = {
        "server_id": args.server_id,
        "version": args.version_string,
        "binlog_checksum": args.checksum,
    }
    for name, value in given.items():
        if value is not None and name in variables and variables[name] != value:
            raise CommandError(f"{name} is given twice: {value!r} and {variables[name]!r}")
    return ServerConfig(
        host=args.host,
        port=args.port,
        server_id=args.server_id,
        version=args.version_string,
        user=args.user,
        password=args.password,
        binlog_checksum=args.checksum,
        gtid_domain_id=args.gtid_domain_id or 0,
        semi_sync_enabled=args.semi_sync,
        semi_sync_timeout_ms=args.semi_sync_timeout,
        default_heartbeat_period_ns=round((args.heartbeat or 0) * 1e9),
        variables=variables,
        frame_cache_bytes=args.frame_cache_mb << 20,
        frame_cache_dir=args.frame_cache_dir,
        dump_thread_niceness=args.dump_thread_niceness,
        **fields,
    )


def _serve_config(args: argparse.Namespace, store: BinlogStore) -> ServerConfig:
    keys = load_key_file(args.key_file)
    tls = None
    if args.ssl_cert is not None or args.ssl_key is not None:
        from fakemaster.cli.serve_settings import server_tls_context

        if args.ssl_cert is None or args.ssl_key is None:
            raise CommandError("--ssl-cert and --ssl-key go together")
        tls = server_tls_context(args.ssl_cert, args.ssl_key)
    return _settings(args, binlog_basename=store.basename, binlog_keys=keys, ssl_context=tls)


def _address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _check_exposure(config: ServerConfig, allowed: bool) -> None:
    """Refuse to offer a password-less account beyond this machine unless told to."""
    from fakemaster.cli.serve_settings import is_loopback_host

    if allowed or is_loopback_host(config.host):
        return
    open_accounts = sorted(
        user for user, account in config.all_accounts().items() if not account.password
    )
    if open_accounts:
        raise CommandError(
            f"--host {config.host} is not a loopback address and account(s) "
            f"{', '.join(map(repr, open_accounts))} have no password: give --password, or "
            "--allow-empty-password-remote to serve them anyway"
        )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from fakemaster.vocabulary.errors import ConfigError, FakemasterError

    try:
        store, writer, source = _serve_source(args)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    except FakemasterError as exc:  # e.g. a --version-string too long for the FDE
        raise CommandError(f"cannot write the demo binlog: {exc}") from None
    try:
        config = _serve_config(args, store)
        _check_exposure(config, args.allow_empty_password_remote)
        faults = _fault_plan(args.faults) if args.faults is not None else None
        live = getattr(args, "live", None)
        idle_scale = getattr(args, "idle_scale", 1.0)
        return asyncio.run(
            _serve(
                config, store, writer, source, args.demo_live, faults, args.pcap, live, idle_scale
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
    import json
    import tomllib

    from fakemaster.faults.plan import FaultPlan, PlanError
    from fakemaster.faults.server_faults import load_server_faults

    try:
        text = path.read_text(encoding="utf-8")
        toml = path.suffix != ".json"
        data = tomllib.loads(text) if toml else json.loads(text)
        wire = FaultPlan.from_dict({k: v for k, v in data.items() if k != "server_faults"})
        return wire, load_server_faults(text, toml=toml)
    except OSError as exc:
        raise CommandError(f"{path}: {exc.strerror or exc}") from None
    except (ValueError, PlanError) as exc:  # TOML and JSON errors are ValueErrors
        raise CommandError(f"{path}: {exc}") from None


async def _serve(
    config: ServerConfig,
    store: BinlogStore,
    writer: DemoWriter | None,
    source: str,
    live_period: float | None,
    faults: tuple[Any, tuple[Any, ...]] | None = None,
    pcap: Path | None = None,
    live_rate: float | None = None,
    idle_scale: float = 1.0,
) -> int:
    import asyncio
    import contextlib
    import functools
    import signal

    from fakemaster.server.logs import log_to_stream_in_background
    from fakemaster.server.master import FakeMaster

    if config.semi_sync_enabled:
        from fakemaster.store.semi_sync import semi_sync_master

        # From now on every transaction waits for an ACK, even before a replica connects.
        semi_sync_master(store, config)
    wire_plan, server_faults = faults if faults is not None else (None, ())
    faulty = wire_plan is not None and bool(wire_plan.faults)
    plan: Any = wire_plan
    # With wire faults or a capture the server listens on a loopback port of its own, and the
    # proxies in front of it (the capture outermost: it records what clients see) on the
    # address asked for.
    proxied = faulty or pcap is not None
    served = dataclasses.replace(config, host="127.0.0.1", port=0) if proxied else config
    master = FakeMaster(served, store)
    proxy: Any = None
    capture: Any = None
    # What goes wrong while serving reaches stderr from a thread: an unread stderr pipe costs
    # log records, never the event loop.
    log = log_to_stream_in_background(sys.stderr, fmt="fakemaster: %(message)s")
    try:
        await master.start()
        upstream = (master.host, master.port)
        if faulty:
            from fakemaster.faults.proxy import FaultProxy

            outermost = pcap is None
            proxy = FaultProxy(
                upstream,
                plan,
                host=config.host if outermost else "127.0.0.1",
                port=config.port if outermost else 0,
            )
            await proxy.start()
            upstream = (proxy.host, proxy.port)
        if pcap is not None:
            from fakemaster.scapy.capture import CaptureProxy

            capture = CaptureProxy(*upstream, pcap, host=config.host, port=config.port)
    except OSError as exc:
        await master.stop()
        log.stop()
        where = _address(config.host, config.port)
        raise CommandError(f"cannot listen on {where}: {exc.strerror or exc}") from None
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError):  # no signal handlers on this platform
            signal.signal(signum, lambda *_: loop.call_soon_threadsafe(stop.set))
    password = "no password" if not config.password else "password set"
    reported = master.state.globals  # what the served binlog and the options settled
    port = capture.port if capture is not None else proxy.port if proxy is not None else master.port
    print(
        f"fakemaster listening on {_address(config.host, port)} "
        f"(server_id {reported['server_id']}, MariaDB {reported['version']}, "
        f"user {config.user!r} with {password}, {source})",
        flush=True,
    )
    resume_collection()  # listening: the start is over
    tasks: list[asyncio.Task[Any]] = [asyncio.create_task(_forget_logged_errors(master))]
    if live_period is not None and writer is not None:
        tasks.append(asyncio.create_task(_append_live(master, writer, live_period)))
    if live_rate is not None:
        from scenarios.live import release_at_rate

        release = functools.partial(release_at_rate, idle_scale=idle_scale)
        tasks.append(asyncio.create_task(_release_live(master, store, live_rate, release)))
    if server_faults:
        from fakemaster.faults.server_faults import schedule

        tasks.append(schedule(master, server_faults))
    try:
        await stop.wait()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if proxy is not None:
            await proxy.stop()
        await master.stop()
        if capture is not None:
            # Last: the server's closes reach the relays, which then end by themselves.
            capture.close(timeout=5.0)
        log.stop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)
    print("fakemaster stopped", file=sys.stderr, flush=True)
    return EXIT_OK


async def _forget_logged_errors(master: FakeMaster) -> None:
    """The server logged its errors as they happened: a long run need not keep them."""
    import asyncio

    while True:
        await asyncio.sleep(1.0)
        master.errors.clear()


async def _release_live(master: FakeMaster, store: Any, rate: float, release: Any) -> None:
    """``--live``: the scenario's transactions released at ``rate`` per second."""
    try:
        await release(store, rate)
    except Exception as exc:  # recorded like a connection's error; the server goes on
        master.record_error(exc)


async def _append_live(master: FakeMaster, writer: DemoWriter, period: float) -> None:
    import asyncio

    while True:
        await asyncio.sleep(period)
        try:
            writer.append_live_order()
        except Exception as exc:  # recorded like a connection's error; the server goes on
            master.record_error(exc)
