"""Running a scenario on a real MariaDB 10.11 and comparing what it writes with the compiler's
events, and its tables with the oracle.

The server is one per test module, reused: each run drops and recreates the scenario's
databases, applies the scenario's settings (``SET GLOBAL binlog_checksum``/
``binlog_row_metadata``, session ``binlog_row_image``/``binlog_annotate_row_events``), starts a
fresh binlog file (FLUSH BINARY LOGS) after the setup, runs the transactions' SQL in one session,
and flushes again: the files in between hold exactly the scenario's transactions.

The minimal normalisation (documented in :func:`normalised_differences`): event timestamps,
header ``log_pos``, XID numbers (of XID events and of DDL's Q_XID), QUERY events' thread id and
exec_time, and table ids compared up to a consistent renaming (the
server numbers table shares as it opens them).
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from decoder.binlog_file import read_binlog
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.constants import QueryStatus
from fakemaster.vocabulary.events import (
    BinlogCheckpointEvent,
    Event,
    FormatDescriptionEvent,
    Gtid,
    GtidListEvent,
    QueryEvent,
    RotateEvent,
    StatusVar,
    StopEvent,
    TableMapEvent,
    XidEvent,
)
from scenarios.compiler import (
    CompiledTransaction,
    binlog_files,
    compile_scenario,
    flatten,
    to_store,
)
from scenarios.history import (
    DEFAULT_ROW_EVENT_MAX_SIZE,
    Restart,
    Scenario,
    SetSettings,
    Settings,
    Transaction,
)
from scenarios.oracle import Oracle, canonical_rows
from scenarios.script import setup_sql, step_sql
from scenarios.sql import SESSION_SETUP, quote_name
from tests.peers.mariadb import MariaDBServer

__all__ = ["ServerRun", "normalised_differences", "run_on_server", "select_cells"]

_HEADER_EVENTS = (FormatDescriptionEvent, GtidListEvent, BinlogCheckpointEvent)
_FILE_END = (RotateEvent, StopEvent)


@dataclass
class ServerRun:
    events: list[Event]  # the scenario's events as the server wrote them
    gtid_state: tuple[Gtid, ...]  # the server's binlog state before the transactions
    tables: dict[str, list[tuple[str | None, ...]]]  # canonical cells, from SELECT
    files: list[Path]
    by_file: list[list[Event]]  # every event of each file


def _gtid_state(text: str) -> tuple[Gtid, ...]:
    return tuple(Gtid.parse(part) for part in text.split(",") if part.strip())


def select_cells(cursor: Any, scenario: Scenario, name: str) -> list[tuple[str | None, ...]]:
    """A table read back with SELECT, as the oracle's canonical cells (byte columns through
    HEX, BIT columns as numbers; a system-versioned table's history rows too)."""
    table = scenario.tables[name]
    parts = []
    for column in table.columns:
        quoted = quote_name(column.name)
        if column.type == "bit":
            parts.append(f"{quoted} + 0")
        elif column.is_bytes and column.charset in (None, "binary"):
            parts.append(f"CONCAT('0x', HEX({quoted}))")
        else:
            parts.append(quoted)
    # A system-versioned table: its history rows too, as the oracle holds them.
    every = " FOR SYSTEM_TIME ALL" if table.period is not None else ""
    cursor.execute(
        f"SELECT {', '.join(parts)} FROM {quote_name(table.database)}.{quote_name(table.name)}"
        + every
    )
    rows = [
        tuple(
            None if v is None else v.decode("utf-8") if isinstance(v, bytes) else str(v)
            for v in row
        )
        for row in cursor.fetchall()
    ]
    return rows


# The client's max_allowed_packet: statements of rows over 16 MiB (the server's is 64M).
MAX_PACKET = 60 << 20


def server_options(settings: Settings) -> dict[str, Any]:
    """The server options a restart gives, for ``settings`` (as a configured server has them)."""
    return {
        "server_id": settings.server_id,
        "binlog_row_event_max_size": settings.binlog_row_event_max_size,
        "binlog_checksum": "CRC32" if settings.binlog_checksum else "NONE",
        "binlog_row_metadata": settings.binlog_row_metadata,
        "binlog_row_image": settings.binlog_row_image,
        "binlog_annotate_row_events": settings.binlog_annotate_row_events,
        "log_bin_compress": settings.log_bin_compress,
        "log_bin_compress_min_len": settings.log_bin_compress_min_len,
    }


def _session(cursor: Any, settings: Settings) -> None:
    for statement in SESSION_SETUP:
        cursor.execute(statement)
    cursor.execute(f"SET SESSION binlog_row_image = {settings.binlog_row_image}")
    annotate = "ON" if settings.binlog_annotate_row_events else "OFF"
    cursor.execute(f"SET SESSION binlog_annotate_row_events = {annotate}")


def run_on_server(server: MariaDBServer, scenario: Scenario) -> ServerRun:
    """Run ``scenario`` on ``server`` (see the module docstring). After an XA PREPARE the
    session is left and a new one goes on (with the session settings in effect); prepared XA
    transactions still pending at the end are rolled back after the run's last file."""
    settings = scenario.initial_settings
    import pymysql.converters

    # Every value comes back as text, as the server sends it.
    conv = {k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)}
    # binlog_row_event_max_size is a command-line option only (10.11 shows no such variable),
    # the server id a restart gives: restarted if they are not the scenario's.
    size = int(server.options.get("binlog_row_event_max_size", DEFAULT_ROW_EVENT_MAX_SIZE))
    if size != settings.binlog_row_event_max_size or server.server_id != settings.server_id:
        server.options.update(server_options(settings))
        server.restart()
    connection = server.connect(conv=conv, max_allowed_packet=MAX_PACKET)
    try:
        cursor = connection.cursor()
        checksum = "CRC32" if settings.binlog_checksum else "NONE"
        cursor.execute(f"SET GLOBAL binlog_checksum = {checksum}")
        cursor.execute(f"SET GLOBAL binlog_row_metadata = {settings.binlog_row_metadata}")
        compress = "ON" if settings.log_bin_compress else "OFF"
        cursor.execute(f"SET GLOBAL log_bin_compress = {compress}")
        cursor.execute(f"SET GLOBAL log_bin_compress_min_len = {settings.log_bin_compress_min_len}")
        _session(cursor, settings)
        for database in scenario.databases:
            cursor.execute(f"DROP DATABASE IF EXISTS {quote_name(database)}")
        for statement in setup_sql(scenario):
            cursor.execute(statement)
        cursor.execute("FLUSH BINARY LOGS")
        cursor.execute("SELECT @@GLOBAL.gtid_binlog_state")
        state = _gtid_state(str(cursor.fetchone()[0]))
        first = server.binlog_files()[-1]
        current = settings
        for step in scenario.steps:
            for statement in step_sql(step):
                cursor.execute(statement)
            if isinstance(step, SetSettings):
                current = step.settings
            if isinstance(step, Restart):
                connection.close()
                server.options.update(server_options(step.settings))
                server.restart()
                current = step.settings
            if isinstance(step, Transaction) and step.prepared:
                connection.close()
            if isinstance(step, Restart) or isinstance(step, Transaction) and step.prepared:
                connection = server.connect(conv=conv, max_allowed_packet=MAX_PACKET)
                cursor = connection.cursor()
                _session(cursor, current)
        cursor.execute("SET SESSION gtid_domain_id = DEFAULT")
        cursor.execute("SET SESSION server_id = DEFAULT")
        cursor.execute("FLUSH BINARY LOGS")
        tables = {name: select_cells(cursor, scenario, name) for name in scenario.tables}
        cursor.execute("XA RECOVER FORMAT='SQL'")
        for row in cursor.fetchall():
            cursor.execute(f"XA ROLLBACK {row[3]}")
    finally:
        connection.close()
    files = server.binlog_files()
    files = files[files.index(first) : -1]
    events: list[Event] = []
    by_file: list[list[Event]] = []
    for path in files:
        by_file.append([event for _, event in read_binlog(path)])
        events += [e for e in by_file[-1] if not isinstance(e, _HEADER_EVENTS + _FILE_END)]
    # The state as the first file's GTID_LIST lists it: each domain's most recent GTID last
    # (the order @@gtid_binlog_state does not keep).
    listed = next(e for e in by_file[0] if isinstance(e, GtidListEvent))
    assert set(listed.gtids) == set(state)
    return ServerRun(events, listed.gtids, tables, files, by_file)


_IGNORED = {"timestamp", "log_pos"}


def _fields(event: Event) -> dict[str, Any]:
    return {
        f.name: getattr(event, f.name) for f in dataclasses.fields(event) if f.name not in _IGNORED
    }


def normalised_differences(
    real: Sequence[Event],
    compiled: Sequence[Event],
    limit: int = 10,
    restarts: Collection[int] = (),
) -> list[str]:
    """Field-by-field differences between the server's events and the compiled ones, after
    the minimal normalisation: ``timestamp`` and ``log_pos`` of every event are not compared,
    nor XID numbers; a QUERY event's thread id and exec_time are not compared, nor the value of
    its Q_XID status variable (an XID number; its presence is); a table id is compared up to a
    consistent renaming (each real id stands for one compiled id throughout a server's run: the
    renaming starts anew at the ``restarts``, the indexes of the first events after a restart);
    a GTID_LIST's GTIDs as a set (and each domain's last)."""
    problems: list[str] = []
    ids: dict[int, int] = {}
    if len(real) != len(compiled):
        problems.append(f"{len(real)} events on the server, {len(compiled)} compiled")
    for index, (mine, theirs) in enumerate(zip(compiled, real, strict=False)):
        if index in restarts:
            ids = {}
        if type(mine) is not type(theirs):
            problems.append(
                f"event {index}: {type(theirs).__name__} on the server, compiled {type(mine).__name__}"
            )
            break
        want = _fields(mine)
        got = _fields(theirs)
        if isinstance(mine, XidEvent):
            want.pop("xid")
            got.pop("xid")
        if isinstance(mine, QueryEvent):
            for fields in (want, got):
                fields.pop("thread_id")
                fields.pop("exec_time")
                fields["status_vars"] = tuple(
                    StatusVar(v.code, None) if v.code == QueryStatus.XID else v
                    for v in fields["status_vars"]
                )
        if isinstance(mine, GtidListEvent):
            # The server lists its state in its hash tables' order, a function of its whole
            # history (before the scenario too): compared as a set, and each domain's most
            # recent GTID (listed last of its domain).
            for fields in (want, got):
                gtids = fields["gtids"]
                last = {g.domain_id: g for g in gtids}
                fields["gtids"] = (frozenset(gtids), last)
        if "table_id" in want:
            real_id, my_id = got.pop("table_id"), want.pop("table_id")
            if isinstance(mine, TableMapEvent):
                if ids.setdefault(real_id, my_id) != my_id or list(ids.values()).count(my_id) > 1:
                    problems.append(f"event {index}: table id {real_id} maps two ways")
            elif ids.get(real_id) != my_id:
                problems.append(f"event {index}: rows of table id {real_id}, compiled {my_id}")
        if "rows" in want and want["rows"] != got["rows"]:
            problems += _row_differences(index, got.pop("rows"), want.pop("rows"))
        for name in want:
            if want[name] != got[name]:
                problems.append(
                    f"event {index} {type(mine).__name__}.{name}: server {got[name]!r:.300},"
                    f" compiled {want[name]!r:.300}"
                )
        if len(problems) >= limit:
            break
    return problems


def _row_differences(index: int, real: Any, compiled: Any) -> list[str]:
    out = [f"event {index}: {len(real)} rows on the server, {len(compiled)} compiled"]
    for number, (theirs, mine) in enumerate(zip(real, compiled, strict=False)):
        flat_theirs = theirs if not isinstance(theirs[0], tuple) else theirs[0] + theirs[1]
        flat_mine = mine if not isinstance(mine[0], tuple) else mine[0] + mine[1]
        for column, (a, b) in enumerate(zip(flat_theirs, flat_mine, strict=False)):
            if type(a) is not type(b) or a != b:
                out.append(
                    f"event {index} row {number} value {column}: server {a!r}, compiled {b!r}"
                )
    return out


def served_files(run: ServerRun, scenario: Scenario) -> list[list[Event]]:
    """The scenario in a memory store that starts as the server's first file did (a rotation
    from the file before it, the same GTID state), every event of each file decoded."""
    number = int(run.files[0].name.rsplit(".", 1)[1])
    settings = scenario.initial_settings
    store = MemoryBinlogStore(
        server_id=settings.server_id,
        checksum=settings.binlog_checksum,
        first_file_number=number - 1,
        initial_state=run.gtid_state,
    )
    store.rotate()
    store.purge_to(store.current_file)
    to_store(scenario, store=store)
    return [
        [event for _, event in read_binlog(io.BytesIO(data))]
        for data in binlog_files(store).values()
    ]


def file_differences(run: ServerRun, scenario: Scenario) -> list[str]:
    """Each file the server wrote against the store's: every event but the FORMAT_DESCRIPTION
    (GTID_LIST, the groups, the ROTATE), normalised as above; the BINLOG_CHECKPOINTs are checked
    for what they may be (see below); the server's last file ends with the ROTATE of the FLUSH
    that closed the run."""
    mine = served_files(run, scenario)
    theirs = [list(events) for events in run.by_file]
    if theirs and isinstance(theirs[-1][-1], RotateEvent):
        theirs[-1].pop()
    if len(mine) != len(theirs):
        return [f"{len(theirs)} files on the server, {len(mine)} in the store"]
    problems = []
    strip = (FormatDescriptionEvent, BinlogCheckpointEvent)
    for number, (a, b) in enumerate(zip(theirs, mine, strict=True)):
        found = normalised_differences(
            [e for e in a if not isinstance(e, strip)], [e for e in b if not isinstance(e, strip)]
        )
        problems += [f"file {number}: {problem}" for problem in found]
    # BINLOG_CHECKPOINTs are timing: the server's background thread writes one naming the
    # current file once no XID of older files is pending (at once after an idle FLUSH, after
    # some group, or not before the file ends), and a new file's header repeats the last one
    # written (the previous file, or an older one); the store writes one after each new file's
    # first group. So on both sides: a file starts with one, and each names a file no later
    # than its own and no earlier than the one before it.
    own_numbers = [int(path.name.rsplit(".", 1)[1]) for path in run.files]
    for side, files in (("server", theirs), ("store", mine)):
        last = 0
        for number, events in enumerate(files):
            header = [e for e in events[:3] if isinstance(e, BinlogCheckpointEvent)]
            if not header:
                problems.append(f"file {number}: the {side}'s header has no BINLOG_CHECKPOINT")
            for event in events:
                if isinstance(event, BinlogCheckpointEvent):
                    named = int(event.file_name.rsplit(".", 1)[1])
                    if not last <= named <= own_numbers[number]:
                        problems.append(f"file {number}: {side} checkpoint {event.file_name}")
                    last = named
    return problems


def restart_indexes(scenario: Scenario, compiled: Sequence[CompiledTransaction]) -> set[int]:
    """The indexes, in the flattened compiled events, of the first event after each restart."""
    counts: dict[int, int] = {}
    for item in compiled:
        counts[id(item.transaction)] = counts.get(id(item.transaction), 0) + len(item.events)
    found = set()
    position = 0
    for step in scenario.steps:
        if isinstance(step, Restart):
            found.add(position)
        position += counts.get(id(step), 0)
    return found


def compare_with_server(server: MariaDBServer, scenario: Scenario) -> list[str]:
    """Everything that differs between the server and the scenario's compilation and oracle
    ([] when nothing does)."""
    run = run_on_server(server, scenario)
    scenario.gtid_state = run.gtid_state
    compiled: list[CompiledTransaction] = compile_scenario(scenario)
    problems = normalised_differences(
        run.events, flatten(compiled), restarts=restart_indexes(scenario, compiled)
    )
    problems += file_differences(run, scenario)
    oracle = Oracle(scenario)
    for name, table in scenario.tables.items():
        want = canonical_rows(table, oracle.final.rows[name])
        got = sorted(
            run.tables[name], key=lambda cells: tuple((c is not None, c or "") for c in cells)
        )
        want_sorted = sorted(want, key=lambda cells: tuple((c is not None, c or "") for c in cells))
        if got != want_sorted:
            problems.append(f"table {name}: server {got!r:.600}, oracle {want_sorted!r:.600}")
    return problems
