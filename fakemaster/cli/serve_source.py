"""What ``serve`` serves: the binlog files of ``--binlog-dir`` (with the answers of a
recording's replay file), a scenario (``--scenario``), or the built-in demo stream.

Each source is imported only when it is the one served: the demo and the encoder it writes
with, the scenarios, the replay reader (issue #7, readiness).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from fakemaster.cli.common import CommandError
from fakemaster.cli.serve_settings import options_config

if TYPE_CHECKING:
    from fakemaster.store import BinlogStore
    from fakemaster.store.demo import DemoWriter

__all__ = ["served_source"]


def served_source(args: argparse.Namespace) -> tuple[BinlogStore, DemoWriter | None, str]:
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
        values = options_config(args).global_variables()
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
    from fakemaster.store.directory import DirectoryBinlogStore, IncompleteRecording

    try:
        directory_store = DirectoryBinlogStore(
            args.binlog_dir, args.binlog_basename, allow_incomplete=args.allow_incomplete
        )
        names = directory_store.file_names()
    except OSError as exc:
        raise CommandError(f"{args.binlog_dir}: {exc.strerror or exc}") from None
    except IncompleteRecording as exc:
        raise CommandError(f"{exc}; --allow-incomplete serves it anyway") from None
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
    args.scenario_accounts = scenario.accounts
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
