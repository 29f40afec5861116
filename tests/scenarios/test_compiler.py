"""The compiler's rows events without a server, for what mutation testing found unpinned by
the fast tests (docs/mutation.md): where statements split into rows events and which event
ends a statement. The scenario is test_differential's ``big_rows``, which
``test_statements_split_into_rows_events_where_the_server_splits_them`` compares event for
event with MariaDB 10.11 under each row image; here the split that comparison verified, with
no server. Then the TABLE_MAPs and the MINIMAL insert images against what MariaDB 10.11.19 wrote
in the golden binlogs (tests/golden/binlogs)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from decoder.binlog_file import read_binlog
from fakemaster.vocabulary.constants import OptionalMetadata, QueryStatus, RowsFlag
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.events import (
    DeleteRowsEvent,
    GtidEvent,
    QueryEvent,
    RowsEvent,
    TableMapEvent,
    UpdateRowsEvent,
    WriteRowsEvent,
)
from fakemaster.vocabulary.values import Timestamp
from scenarios.compiler import (
    compile_scenario,
    flatten,
    image_columns,
    optional_metadata,
    table_map_event,
)
from scenarios.create_table import parse_create_table
from scenarios.history import Scenario, Settings
from tests.peers.workload import CODEC_TABLES, WorkloadResult
from tests.scenarios.test_differential import big_rows, compressible

STMT_END = int(RowsFlag.STMT_END)
# (event, rows, flags) of every rows event, in order: 13 statements, each one's last event
# with STMT_END.
SPLIT = [
    ("write", 4, 0), ("write", 4, 0), ("write", 3, 0), ("write", 1, STMT_END),
    ("write", 1, STMT_END),
    *[("update", 1, STMT_END)] * 7,
    ("write", 2, 0), ("write", 1, STMT_END),
    ("write", 1, 0), ("write", 2, STMT_END),
]  # fmt: skip


@pytest.mark.parametrize("image", ["FULL", "MINIMAL", "NOBLOB"])
def test_statements_split_into_rows_events_each_ended_by_stmt_end(image: str) -> None:
    compiled = compile_scenario(big_rows(Settings(binlog_row_image=image)))
    events = [e for item in compiled for e in item.events]
    found = [
        ("write" if isinstance(e, WriteRowsEvent) else "update", len(e.rows), int(e.rows_flags))
        for e in events
        if isinstance(e, WriteRowsEvent | UpdateRowsEvent)
    ]
    assert found == SPLIT


# --- against the golden binlogs of MariaDB 10.11 (tests/golden/binlogs, no server) ------------

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "binlogs"
# The codec workload's tables the model parses (FLOAT(M,D), ZEROFILL and GEOMETRY it does not;
# t_temporal_old's MariaDB 5.3 columns it writes in the current format).
MODELLED = (
    "t_bit", "t_blob", "t_charset", "t_date", "t_datetime", "t_decimal", "t_enum_set",
    "t_generated", "t_inet_uuid", "t_json", "t_myisam", "t_string", "t_time", "t_timestamp",
)  # fmt: skip


def _golden(variant: str) -> tuple[WorkloadResult, list[tuple[Any, Any]]]:
    """The workload's result and the TABLE_MAP, WRITE_ROWS (with its TABLE_MAP) and QUERY
    events of the variant's binlogs."""
    result = WorkloadResult.loads((GOLDEN / variant / "expected.json").read_text())
    ctx = BinlogContext(temporal_precisions=result.temporal_precisions())
    found: list[tuple[Any, Any]] = []
    for name in result.binlog_files:
        for _, event in read_binlog(str(GOLDEN / variant / name), ctx=ctx):
            if isinstance(event, TableMapEvent):
                found.append((event, event))
            elif isinstance(event, WriteRowsEvent):
                found.append((event, ctx.table_maps[event.table_id]))
            elif isinstance(event, QueryEvent):
                found.append((event, None))
    return result, found


def _body(event: TableMapEvent) -> tuple[Any, ...]:
    """A TABLE_MAP without its header (the server's timestamp and position)."""
    return (
        event.table_id, event.table_flags, event.database, event.table, event.column_types,
        event.column_meta, event.nullable, event.optional_metadata,
    )  # fmt: skip


@pytest.mark.parametrize(("variant", "level"), [("full_metadata", "FULL"), ("default", "NO_LOG")])
def test_table_maps_are_the_servers(variant: str, level: str) -> None:
    """Every TABLE_MAP field, the optional metadata's charset encodings above all (MariaDB
    writes DEFAULT_CHARSET when its length ties with COLUMN_CHARSET's: t_myisam's one character
    column), as the server wrote them at binlog_row_metadata=FULL and NO_LOG; the last map of
    each table (t_enum_set is altered on the way)."""
    result, found = _golden(variant)
    maps = {event.table: event for event, _ in found if isinstance(event, TableMapEvent)}
    for name in MODELLED:
        table = parse_create_table(result.tables[name].create_table, result.tables[name].schema)
        golden = maps[name]
        ours = table_map_event(table, golden.table_id, Settings(binlog_row_metadata=level))
        assert _body(ours) == _body(golden), name


def test_minimal_inserts_log_the_columns_the_server_logs() -> None:
    """An INSERT under binlog_row_image=MINIMAL logs the columns it names and those the server
    fills (AUTO_INCREMENT), not every column: the partial inserts of the golden ``minimal``
    binlog, bitmap and values."""
    result, found = _golden("minimal")
    golden = [
        (table_map.table, event.columns_present, event.rows)
        for event, table_map in found
        if isinstance(event, WriteRowsEvent) and table_map.table in ("m_auto", "m_pk")
    ][-4:]
    scenario = Scenario(Settings(binlog_row_image="MINIMAL"))
    for name in ("m_auto", "m_pk"):
        create = result.tables[name].create_table.replace(" AUTO_INCREMENT=5", "")
        scenario.create_table(create.replace("CREATE TABLE `", "CREATE TABLE fm.`"))
    # The statements of the golden ANNOTATE_ROWS events.
    scenario.insert("fm.m_auto", {"a": 1}, {"a": 2})
    scenario.insert("fm.m_auto", {})
    scenario.insert("fm.m_auto", {"b": "x", "c": "2024-01-01 00:00:00.5"})
    scenario.insert("fm.m_pk", {"pk": 6, "a": 6})
    names: dict[int, str] = {}
    ours = []
    for event in (e for item in compile_scenario(scenario) for e in item.events):
        if isinstance(event, TableMapEvent):
            names[event.table_id] = event.table
        elif isinstance(event, WriteRowsEvent):
            ours.append((names[event.table_id], event.columns_present, event.rows))
    assert ours == golden


def _bits(bitmap: bytes) -> tuple[int, ...]:
    number = int.from_bytes(bitmap, "little")
    return tuple(p for p in range(8 * len(bitmap)) if number >> p & 1)


# The columns of each image as docs/verified-facts.md states MariaDB 10.11 logs them (row
# images): MINIMAL, the key before and the columns named after (an INSERT: those it names);
# NOBLOB, every non-TEXT/BLOB column plus the TEXT/BLOB ones named after; a keyless table FULL
# under both. Columns: id (key) 0, v INT 1, b BLOB 2, t TEXT 3.
IMAGES = {
    ("MINIMAL", "t"): [((), (0, 2)), ((0,), (3,)), ((0,), ())],
    ("NOBLOB", "t"): [((), (0, 1, 2)), ((0, 1), (0, 1, 3)), ((0, 1), ())],
    ("MINIMAL", "nokey"): [((), (0, 1, 2, 3)), ((0, 1, 2, 3),) * 2, ((0, 1, 2, 3), ())],
    ("NOBLOB", "nokey"): [((), (0, 1, 2, 3)), ((0, 1, 2, 3),) * 2, ((0, 1, 2, 3), ())],
}


@pytest.mark.parametrize(("image", "name"), list(IMAGES))
def test_minimal_and_noblob_images_log_the_columns_mariadb_logs(image: str, name: str) -> None:
    settings = Settings(binlog_row_image=image)
    scenario = Scenario(settings)
    key = " PRIMARY KEY" if name == "t" else ""
    scenario.create_table(f"CREATE TABLE d.{name} (id INT{key}, v INT, b BLOB, t TEXT)")
    scenario.insert(f"d.{name}", {"id": 1, "b": b"x"})
    # A keyless table's row is named by every column.
    row = {"id": 1} if name == "t" else {"id": 1, "v": None, "b": b"x", "t": None}
    scenario.update(f"d.{name}", row, {"t": "y"})
    scenario.delete(f"d.{name}", row if name == "t" else {**row, "t": "y"})
    found: list[tuple[tuple[int, ...], tuple[int, ...]]] = []
    for item in compile_scenario(scenario):
        for event in item.events:
            if isinstance(event, WriteRowsEvent):
                found.append(((), _bits(event.columns_present)))
            elif isinstance(event, UpdateRowsEvent):
                found.append((_bits(event.columns_present), _bits(event.columns_present_after)))
            elif isinstance(event, DeleteRowsEvent):
                found.append((_bits(event.columns_present), ()))
    assert found == IMAGES[image, name]
    changes = [c for step in scenario.steps for c in getattr(step, "changes", ())]
    assert [image_columns(change, settings) for change in changes] == IMAGES[image, name]


@pytest.mark.parametrize(("variant", "level"), [("default", "NO_LOG"), ("full_metadata", "FULL")])
def test_rows_are_the_servers(variant: str, level: str) -> None:
    """The first rows the golden workload inserts into t_int (every integer type, signed and
    unsigned, at their bounds: without metadata an unsigned value is logged as its signed bits)
    and t_string (a BINARY(8) logged without its NUL padding), as MariaDB logged them. t_int's
    ZEROFILL column, which the model refuses, is left out of both sides."""
    result, found = _golden(variant)
    golden: dict[str, list[Any]] = {}
    for event, table_map in found:
        if isinstance(event, WriteRowsEvent):
            golden.setdefault(table_map.table, list(event.rows))
    scenario = Scenario(Settings(binlog_row_metadata=level))
    for name in ("t_int", "t_string"):
        create = result.tables[name].create_table.replace("CREATE TABLE `", "CREATE TABLE fm.`")
        scenario.create_table(create.replace(",\n  `zf` int(8) unsigned zerofill DEFAULT NULL", ""))
    spec = next(spec for spec in CODEC_TABLES if spec.name == "t_int")
    names = [column.name for column in scenario.table("fm.t_int").columns]
    values = [ast.literal_eval(row.replace("NULL", "None")) for row in spec.rows]
    scenario.insert("fm.t_int", *(dict(zip(names, row[:-1], strict=True)) for row in values))
    # Its first row: (1, 'ab   ', 'x  ', '', X'0102', 'ab  ', '', '', '', X'00', X'0000'), the
    # CHARs' trailing spaces dropped (as the server does; the model refuses them).
    first = (1, "ab", "x", "", b"\x01\x02", "ab  ", "", "", "", b"\x00", b"\x00\x00")
    names = [column.name for column in scenario.table("fm.t_string").columns]
    scenario.insert("fm.t_string", dict(zip(names, first, strict=True)))
    ours: dict[str, list[Any]] = {}
    tables: dict[int, str] = {}
    for event in (e for item in compile_scenario(scenario) for e in item.events):
        if isinstance(event, TableMapEvent):
            tables[event.table_id] = event.table
        elif isinstance(event, WriteRowsEvent):
            ours.setdefault(tables[event.table_id], []).extend(event.rows)
    assert ours["t_int"] == [row[:-1] for row in golden["t_int"]]
    assert ours["t_string"] == golden["t_string"][:1]


def test_a_versioned_tables_update_and_delete_log_what_mariadb_logs() -> None:
    """docs/verified-facts.md (system-versioned tables, 10.11.19): an UPDATE of a row that
    started in an earlier second logs an UPDATE_ROWS (new values, ``row_start`` now, without
    STMT_END) and a WRITE_ROWS of the history row (the old ``row_start``, now as its
    ``row_end``); a DELETE logs an UPDATE_ROWS setting ``row_end`` to now, not a DELETE_ROWS.
    The current row's ``row_end`` is 2038-01-19 03:14:07.999999 (seconds 2147483647)."""
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE d.v (pk INT PRIMARY KEY, x INT) WITH SYSTEM VERSIONING")
    scenario.insert("d.v", {"pk": 1, "x": 1})
    scenario.idle(1)
    scenario.update("d.v", {"pk": 1}, {"x": 2})
    scenario.idle(1)
    scenario.delete("d.v", {"pk": 1})
    t0, t1, t2 = (Timestamp(1_700_000_000 + n, 0) for n in range(3))
    current = Timestamp(2_147_483_647, 999_999)
    found = [
        (type(event).__name__, event.rows, event.rows_flags)
        for item in compile_scenario(scenario)
        for event in item.events
        if isinstance(event, WriteRowsEvent | UpdateRowsEvent | DeleteRowsEvent)
    ]
    # Each group's events carry the statement's time, the row_start it logs.
    stamps = [{e.timestamp for e in item.events} for item in compile_scenario(scenario)]
    assert stamps == [{t0.seconds}, {t1.seconds}, {t2.seconds}]
    assert found == [
        ("WriteRowsEvent", ((1, 1, t0, current),), STMT_END),
        ("UpdateRowsEvent", (((1, 1, t0, current), (1, 2, t1, current)),), 0),
        ("WriteRowsEvent", ((1, 1, t0, t1),), STMT_END),
        ("UpdateRowsEvent", (((1, 2, t1, current), (1, 2, t1, t2)),), STMT_END),
    ]


@pytest.mark.parametrize("on", [True, False])
def test_rows_events_are_compressed_where_the_server_compresses_them(on: bool) -> None:
    """docs/verified-facts.md (log_bin_compress): an event is compressed when the row that
    starts it (an UPDATE: both images) is at least log_bin_compress_min_len bytes. The rows of
    test_differential's ``compressible`` are 7 + n bytes (NULL bitmap, INT, VARCHAR length and
    n bytes); at 256: 256, 255, 256 (with four more rows), 8 (with one more), the updates'
    256 + 8 and 255 + 307, the deletes' 256 and 12. Without log_bin_compress, none is."""
    settings = Settings(log_bin_compress=on, log_bin_compress_min_len=256)
    events = flatten(compile_scenario(compressible(settings)))
    found = [e.compressed for e in events if isinstance(e, RowsEvent)]
    expected = [True, False, True, False, True, True, True, False]
    assert found == (expected if on else [False] * len(expected))


def _comparable(event: QueryEvent) -> tuple[Any, ...]:
    """A DDL QUERY event as compared with the golden workload's: its flags and status variables
    but Q_XID's value (the server's own counter) and SQL_MODE's (that session's is '')."""
    unset = (QueryStatus.XID, QueryStatus.SQL_MODE)
    return event.flags, tuple(
        (s.code, None if s.code in unset else s.value) for s in event.status_vars
    )


def test_ddl_query_events_are_the_servers() -> None:
    """A CREATE TABLE and the DROP TABLE the server rewrites (THREAD_SPECIFIC flag, the names
    quoted), as the golden workload's session logged them."""
    _, found = _golden("default")
    scratch = [e for e, _ in found if isinstance(e, QueryEvent) and b"t_scratch" in e.query]
    scenario = Scenario(Settings())
    scenario.rotate()  # the CREATE a step, not the history's starting state
    scenario.create_table("CREATE TABLE fm.t_scratch (pk INT PRIMARY KEY, x INT)")
    scenario.drop_table("fm.t_scratch")
    ours = [e for e in flatten(compile_scenario(scenario)) if isinstance(e, QueryEvent)]
    assert [_comparable(e) for e in ours] == [_comparable(e) for e in scratch]
    assert ours[1].query == scratch[1].query


@pytest.mark.parametrize("more", [0, 1])
def test_ddl_is_compressed_from_log_bin_compress_min_len_on_inclusive(more: int) -> None:
    """docs/verified-facts.md: a DDL statement is QUERY_COMPRESSED from log_bin_compress_min_len
    bytes on, that length included."""
    text = b"TRUNCATE TABLE `d`.`t`"  # as the server logs it (test_ddl)
    scenario = Scenario(Settings(log_bin_compress=True, log_bin_compress_min_len=len(text) + more))
    scenario.create_table("CREATE TABLE d.t (id INT PRIMARY KEY)")
    scenario.truncate_table("d.t")
    (query,) = [e for e in flatten(compile_scenario(scenario)) if isinstance(e, QueryEvent)]
    assert query.query == text
    assert query.compressed is (more == 0)


def test_the_starting_tables_are_numbered_in_declaration_order() -> None:
    """CompileOptions: a table without a fixed id is numbered from ``first_table_id`` in
    declaration order, whichever the history changes first."""
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE d.a (id INT PRIMARY KEY)")
    scenario.create_table("CREATE TABLE d.b (id INT PRIMARY KEY)")
    scenario.insert("d.b", {"id": 1})
    scenario.insert("d.a", {"id": 1})
    maps = [e for e in flatten(compile_scenario(scenario)) if isinstance(e, TableMapEvent)]
    assert [(m.table, m.table_id) for m in maps] == [("b", 19), ("a", 18)]


def test_gtid_events_carry_the_servers_flags() -> None:
    """The GTID of a transaction, a DDL statement, an XA PREPARE and an XA COMMIT: flags2,
    flags_extra (MULTI_ENGINE on XA PREPARE only), extra_engines and the header's flags, as
    the golden workload's GTID events of each kind carry them."""
    result = WorkloadResult.loads((GOLDEN / "default" / "expected.json").read_text())
    ctx = BinlogContext(temporal_precisions=result.temporal_precisions())
    golden = {
        (e.flags2, e.flags_extra, e.extra_engines, int(e.flags))
        for name in result.binlog_files
        for _, e in read_binlog(str(GOLDEN / "default" / name), ctx=ctx)
        if isinstance(e, GtidEvent)
    }
    scenario = Scenario(Settings())
    scenario.create_table("CREATE TABLE d.t (id INT PRIMARY KEY)")
    scenario.insert("d.t", {"id": 1})
    scenario.create_table("CREATE TABLE d.u (id INT PRIMARY KEY)")
    with scenario.xa_transaction("x") as tx:
        tx.insert("d.t", {"id": 2})
    scenario.xa_commit("x")
    ours = [
        (e.flags2, e.flags_extra, e.extra_engines, int(e.flags))
        for e in flatten(compile_scenario(scenario))
        if isinstance(e, GtidEvent)
    ]
    assert [flags[0] for flags in ours] == [0x0C, 0x29, 0x4C, 0x8D]
    assert set(ours) <= golden


@pytest.mark.parametrize(
    ("charsets", "expected"),
    [
        # n = 3 character columns, 1 exception: 3 < 3 is false, DEFAULT_CHARSET.
        (("latin1", "latin1", "utf8mb4"), (OptionalMetadata.DEFAULT_CHARSET, (8, ((2, 45),)))),
        # n = 4, 2 exceptions (a tie goes to the smaller id, 8): 4 < 5, COLUMN_CHARSET.
        (
            ("latin1", "utf8mb4", "latin1", "utf8mb4"),
            (OptionalMetadata.COLUMN_CHARSET, (8, 45, 8, 45)),
        ),
        # n = 5, 2 exceptions: 5 < 5 is false, DEFAULT_CHARSET.
        (
            ("utf8mb4", "latin1", "utf8mb4", "latin1", "utf8mb4"),
            (OptionalMetadata.DEFAULT_CHARSET, (45, ((1, 8), (3, 8)))),
        ),
    ],
)
def test_the_charset_field_is_the_one_mariadb_picks(
    charsets: tuple[str, ...], expected: tuple[int, Any]
) -> None:
    """docs/verified-facts.md (TABLE_MAP optional metadata): DEFAULT_CHARSET (the most used
    collation, then the exceptions) is written rather than COLUMN_CHARSET unless n < 1 + 2 x
    exceptions; latin1_swedish_ci is 8, utf8mb4_general_ci 45."""
    columns = ", ".join(f"c{n} VARCHAR(5) CHARACTER SET {cs}" for n, cs in enumerate(charsets))
    table = parse_create_table(f"CREATE TABLE d.t (id INT PRIMARY KEY, {columns})")
    fields = {f.kind: f.value for f in optional_metadata(table, "MINIMAL")}
    kind, value = expected
    assert fields[kind] == value
    other = OptionalMetadata.COLUMN_CHARSET + OptionalMetadata.DEFAULT_CHARSET - kind
    assert other not in fields


def test_unsigned_values_below_the_sign_bit_are_logged_as_they_are() -> None:
    """Without metadata an unsigned integer is logged as the signed reading of its bits (as the
    golden t_int rows show): the same number below 2^(bits-1), the number - 2^bits from it on."""
    scenario = Scenario(Settings(binlog_row_metadata="NO_LOG"))
    scenario.create_table(
        "CREATE TABLE d.u (id INT PRIMARY KEY, t TINYINT UNSIGNED, m MEDIUMINT UNSIGNED)"
    )
    scenario.insert("d.u", {"id": 1, "t": 100, "m": 5_000_000}, {"id": 2, "t": 200, "m": 9_000_000})
    (write,) = [e for e in flatten(compile_scenario(scenario)) if isinstance(e, WriteRowsEvent)]
    assert write.rows == ((1, 100, 5_000_000), (2, 200 - 256, 9_000_000 - (1 << 24)))
