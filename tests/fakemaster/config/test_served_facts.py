"""What the served binlog tells about its server, and the variables the fake master derives from
it (``fakemaster.config.served_facts``, ``fakemaster.config.served_variables``), without a network.

Expected values come from the real MariaDB 10.11 that wrote the golden files (the variables it
answered are in each ``expected.json``), from the settings a memory store was built with, or
from an independent walk of the file headers (the largest event).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import shutil
import struct
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fakemaster.config import served_facts
from fakemaster.config.served_facts import FactsScanner, RowMetadata, row_metadata_of
from fakemaster.config.served_variables import ServedVariables, packet_size_for
from fakemaster.config.server_config import ServerConfig
from fakemaster.core.session import ServerSession
from fakemaster.sql.outcome import OkResult
from fakemaster.sql.state import ServerState, SessionState
from fakemaster.sql.statements import execute
from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.vocabulary.constants import ColumnType, OptionalMetadata, QueryStatus
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import ConfigError
from fakemaster.vocabulary.events import (
    MetadataField,
    QueryEvent,
    StatusVar,
    TableMapEvent,
    WriteRowsEvent,
    XidEvent,
)
from tests.budget import examples
from tests.peers.policy import require_peer

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "binlogs"
VARIANTS = ["default", "full_metadata", "minimal", "checksum_none", "compressed"]
# Variables the golden variants recorded that the binlog settles.
SETTLED = [
    "version",
    "server_id",
    "binlog_checksum",
    "binlog_row_metadata",
    "character_set_server",
    "collation_server",
]
NOW = 1_700_000_000
_LENGTH = struct.Struct("<I")


def _needs_the_c_walk() -> None:
    require_peer(
        "fakemaster.config._facts_accel (the start-up scan in C)",
        served_facts.ACCELERATED,
        "install the package where a C compiler and the Python headers are "
        "(scripts/install-deps.sh), or in a checkout `python3 setup.py build_ext --inplace`",
    )


@pytest.fixture(scope="module", autouse=True, params=["c", "python"])
def walk(request: pytest.FixtureRequest) -> Any:
    """Every test twice: the start-up scan passing over events in C (the package's extension,
    required in CI), then in Python alone (where the extension could not be built)."""
    if request.param == "c":
        _needs_the_c_walk()
        yield served_facts._pass_untelling
        return
    with mock.patch.object(served_facts, "_pass_untelling", served_facts._pass_untelling_in_python):
        yield served_facts._pass_untelling_in_python


def clock() -> float:
    return NOW


# --- golden files -------------------------------------------------------------------------


@functools.cache
def golden_variables(variant: str) -> dict[str, str]:
    data = json.loads((GOLDEN / variant / "expected.json").read_text("utf-8"))
    return {str(k): str(v) for k, v in data["server_variables"].items()}


def golden_files(variant: str) -> list[str]:
    data = json.loads((GOLDEN / variant / "expected.json").read_text("utf-8"))
    return [str(name) for name in data["binlog_files"]]


def served_directory(tmp_path: Path, variant: str) -> Path:
    """The variant's files with an index, as a primary's binlog directory."""
    directory = tmp_path / variant
    directory.mkdir()
    names = golden_files(variant)
    for name in names:
        shutil.copy(GOLDEN / variant / name, directory / name)
    (directory / "mysql-bin.index").write_text("".join(f"./{name}\n" for name in names))
    return directory


def largest_event(paths: list[Path]) -> int:
    """The largest event length, walking the headers (length at offset 9) independently."""
    largest = 0
    for path in paths:
        data = path.read_bytes()
        pos = 4
        while pos < len(data):
            length = _LENGTH.unpack_from(data, pos + 9)[0]
            largest = max(largest, length)
            pos += length
    return largest


def shown(value: object) -> str:
    """A variable as the capture recorded it (str of what pymysql returned)."""
    if isinstance(value, bool):
        return str(int(value))
    return str(value)


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_golden_binlogs_tell_what_their_server_answered(tmp_path: Path, variant: str) -> None:
    expected = golden_variables(variant)
    with DirectoryBinlogStore(served_directory(tmp_path, variant)) as store:
        served = ServedVariables(ServerConfig(), store)
        globals_: dict[str, Any] = ServerConfig().global_variables()
        assert served.sync(globals_) == []
        assert {name: shown(globals_[name]) for name in SETTLED} == {
            name: expected[name] for name in SETTLED
        }
        largest = largest_event([GOLDEN / variant / name for name in golden_files(variant)])
        assert served.facts.largest_event == largest
        # The real server's 64M covered every event; so does the derived value.
        assert int(globals_["max_allowed_packet"]) >= largest + 1
        assert int(expected["max_allowed_packet"]) >= packet_size_for(largest)


@pytest.mark.parametrize("variant", ["default", "full_metadata"])
def test_a_configuration_the_golden_binlog_contradicts_is_refused(
    tmp_path: Path, variant: str
) -> None:
    expected = golden_variables(variant)
    wrong = "NO_LOG" if expected["binlog_row_metadata"] == "FULL" else "FULL"
    with DirectoryBinlogStore(served_directory(tmp_path, variant)) as store:
        state = ServerState(ServerConfig(variables={"binlog_row_metadata": wrong}), store)
        with pytest.raises(ConfigError) as caught:
            state.check_served()
    error = caught.value
    assert (error.variable, error.configured, error.served) == (
        "binlog_row_metadata",
        wrong,
        expected["binlog_row_metadata"],
    )
    assert "binlog_row_metadata" in str(error)
    assert wrong in str(error) and expected["binlog_row_metadata"] in str(error)
    assert "TABLE_MAP of `fm`." in str(error)


def test_encrypted_files_tell_their_table_maps_only_with_the_key(tmp_path: Path) -> None:
    source = GOLDEN / "encrypted"
    names = ["aes_cbc-bin.000001", "aes_cbc-bin.000002"]
    for name in names:
        shutil.copy(source / f"{name}.encrypted", tmp_path / name)
    (tmp_path / "aes_cbc-bin.index").write_text("".join(f"./{n}\n" for n in names))
    with DirectoryBinlogStore(tmp_path) as store:
        blind = FactsScanner(store)
        blind.refresh()
        keyed = FactsScanner(store, BinlogKeys.from_key_file(source / "aes_cbc.keys"))
        keyed.refresh()
    # The FDE is in clear: both know the server. Only the key shows the TABLE_MAPs (the
    # capture ran with the default binlog_row_metadata, NO_LOG, on an INT/VARCHAR table).
    for facts in (blind.facts, keyed.facts):
        assert facts.server_version is not None
        assert facts.server_version.startswith("10.11.")
        assert facts.server_id == 1
    assert blind.facts.row_metadata is None
    assert keyed.facts.row_metadata == RowMetadata.NO_LOG
    assert keyed.facts.largest_event == blind.facts.largest_event > 1024


# --- which TABLE_MAP settles binlog_row_metadata --------------------------------------------

SIGNEDNESS = MetadataField(OptionalMetadata.SIGNEDNESS, (False,))
CHARSET = MetadataField(OptionalMetadata.DEFAULT_CHARSET, (45, ()))
NAMES = MetadataField(OptionalMetadata.COLUMN_NAME, (b"c",))
ENUM_META = ColumnType.ENUM | 1 << 8
CHAR_META = ColumnType.STRING | 12 << 8


def table(types: tuple[int, ...], meta: tuple[int, ...], *fields: MetadataField) -> TableMapEvent:
    return TableMapEvent(
        table_id=1,
        database="d",
        table="t",
        column_types=types,
        column_meta=meta,
        nullable=(True,) * len(types),
        optional_metadata=fields,
    )


# One-column tables as MariaDB 10.11.19 logged them under each setting (probed on a real
# server: MINIMAL writes SIGNEDNESS for numeric columns, a charset for character ones, nothing
# for ENUM, SET, BIT and temporal columns; FULL adds COLUMN_NAME everywhere).
@pytest.mark.parametrize(
    ("event", "setting"),
    [
        (table((ColumnType.YEAR,), (0,), SIGNEDNESS), RowMetadata.MINIMAL),
        (table((ColumnType.YEAR,), (0,)), RowMetadata.NO_LOG),
        (table((ColumnType.YEAR,), (0,), SIGNEDNESS, NAMES), RowMetadata.FULL),
        (table((ColumnType.NEWDECIMAL,), (0x0205,)), RowMetadata.NO_LOG),
        (table((ColumnType.BLOB,), (2,), CHARSET), RowMetadata.MINIMAL),
        (table((ColumnType.BLOB,), (2,)), RowMetadata.NO_LOG),
        (table((ColumnType.VARCHAR,), (12,)), RowMetadata.NO_LOG),
        (table((ColumnType.GEOMETRY,), (4,)), RowMetadata.NO_LOG),
        (table((ColumnType.STRING,), (CHAR_META,)), RowMetadata.NO_LOG),
        (table((ColumnType.STRING,), (ENUM_META,), NAMES), RowMetadata.FULL),
        # Nothing MINIMAL would describe: NO_LOG or MINIMAL, the event cannot tell.
        (table((ColumnType.STRING,), (ENUM_META,)), None),
        (table((ColumnType.BIT, ColumnType.TIME2), (3, 0)), None),
        (table((ColumnType.DATE, ColumnType.DATETIME2), (0, 0)), None),
    ],
)
def test_row_metadata_of_a_table_map(event: TableMapEvent, setting: str | None) -> None:
    assert row_metadata_of(event) == setting


# --- memory stores --------------------------------------------------------------------------


def rows_transaction(store: MemoryBinlogStore, table_map: TableMapEvent, **kw: Any) -> None:
    rows = WriteRowsEvent(
        table_id=table_map.table_id,
        width=len(table_map.column_types),
        columns_present=b"\xff",
        rows=((None,) * len(table_map.column_types),),
        rows_flags=1,
    )
    store.append_transaction([QueryEvent(query=b"BEGIN"), table_map, rows, XidEvent(xid=1)], **kw)


INT_TABLE = table((ColumnType.LONG,), (0,))


def refreshed(store: MemoryBinlogStore) -> FactsScanner:
    scanner = FactsScanner(store)
    scanner.refresh()
    return scanner


def test_a_memory_store_tells_how_it_was_built() -> None:
    store = MemoryBinlogStore(
        server_id=42, server_version="10.11.7-MariaDB-log", checksum=False, clock=clock
    )
    facts = refreshed(store).facts
    assert (facts.server_version, facts.checksum_alg, facts.server_id) == (
        "10.11.7-MariaDB-log",
        0,
        42,
    )
    assert facts.row_metadata is None and facts.foreign_server_id is None


def test_without_checksums_the_server_reports_none() -> None:
    state = ServerState(ServerConfig(), MemoryBinlogStore(checksum=False, clock=clock))
    state.check_served()
    assert state.dynamic_global("binlog_checksum") == "NONE"


def test_the_newest_deciding_table_map_sets_binlog_row_metadata() -> None:
    store = MemoryBinlogStore(clock=clock)
    scanner = FactsScanner(store)
    steps: list[tuple[TableMapEvent, str | None]] = [
        (table((ColumnType.LONG,), (0,), SIGNEDNESS, NAMES), RowMetadata.FULL),
        (table((ColumnType.DATE,), (0,)), RowMetadata.FULL),  # tells nothing: FULL stays
        (table((ColumnType.LONG,), (0,), SIGNEDNESS), RowMetadata.MINIMAL),
        (INT_TABLE, RowMetadata.NO_LOG),
    ]
    for event, expected in steps:
        rows_transaction(store, event)
        scanner.refresh()
        assert scanner.facts.row_metadata == expected


def test_events_of_other_servers_mean_log_slave_updates() -> None:
    store = MemoryBinlogStore(server_id=1, clock=clock)
    rows_transaction(store, INT_TABLE)
    assert refreshed(store).facts.foreign_server_id is None
    rows_transaction(store, INT_TABLE, server_id=9)
    facts = refreshed(store).facts
    assert facts.foreign_server_id == 9
    assert "server id 9" in facts.evidence["log_slave_updates"]
    state = ServerState(ServerConfig(), store)
    state.check_served()
    assert state.dynamic_global("log_slave_updates") is True
    with pytest.raises(ConfigError, match="log_slave_updates: configured OFF"):
        ServerState(ServerConfig(variables={"log_slave_updates": "OFF"}), store).check_served()


def charset_query(server_collation: int) -> QueryEvent:
    return QueryEvent(
        database="d",
        query=b"CREATE TABLE d.t (c INT)",
        status_vars=(StatusVar(QueryStatus.CHARSET, (45, 45, server_collation)),),
    )


def test_query_events_tell_the_server_collation() -> None:
    store = MemoryBinlogStore(clock=clock)
    store.append_transaction([charset_query(8)])  # latin1_swedish_ci
    state = ServerState(ServerConfig(), store)
    state.check_served()
    assert state.dynamic_global("collation_server") == "latin1_swedish_ci"
    assert state.dynamic_global("character_set_server") == "latin1"
    assert state.globals["character_set_database"] == "latin1"
    # A session may have changed its collation_server: a configured one that some QUERY was
    # logged with stands; one that none was is a contradiction.
    store.append_transaction([charset_query(45)])
    fits = ServerState(ServerConfig(collation_server="latin1_swedish_ci"), store)
    fits.check_served()
    assert fits.dynamic_global("collation_server") == "latin1_swedish_ci"
    with pytest.raises(ConfigError) as caught:
        ServerState(ServerConfig(character_set_server="cp1251"), store).check_served()
    assert (caught.value.variable, caught.value.configured, caught.value.served) == (
        "character_set_server",
        "cp1251",
        "utf8mb4",
    )


def test_max_allowed_packet_covers_the_largest_event() -> None:
    store = MemoryBinlogStore(clock=clock)
    big = 17 << 20
    store.append_transaction([QueryEvent(database="d", query=b"/*" + b"x" * big + b"*/")])
    largest = max(end - start for start, end in event_ranges(store))
    state = ServerState(ServerConfig(), store)
    state.check_served()
    value = int(state.dynamic_global("max_allowed_packet") or 0)
    assert value % 1024 == 0 and largest + 1 <= value < largest + 1 + 1024
    with pytest.raises(ConfigError, match=r"max_allowed_packet: configured 16777216"):
        ServerState(ServerConfig(max_allowed_packet=16 << 20), store).check_served()
    bigger = ServerState(ServerConfig(max_allowed_packet=64 << 20), store)
    bigger.check_served()
    assert bigger.dynamic_global("max_allowed_packet") == 64 << 20


def event_ranges(store: MemoryBinlogStore) -> list[tuple[int, int]]:
    return [
        (offset, offset + len(data))
        for name in store.file_names()
        for offset, data in store.iter_events(name)
    ]


@pytest.mark.parametrize(
    ("config", "variable", "configured", "served"),
    [
        (ServerConfig(server_id=2), "server_id", 2, 1),
        (
            ServerConfig(version="10.6.1-MariaDB"),
            "version",
            "10.6.1-MariaDB",
            "10.11.19-MariaDB-log",
        ),
        (ServerConfig(binlog_checksum="NONE"), "binlog_checksum", "NONE", "CRC32"),
        (ServerConfig(variables={"binlog_checksum": "none"}), "binlog_checksum", "NONE", "CRC32"),
        (ServerConfig(variables={"server_id": "3"}), "server_id", 3, 1),
        (
            ServerConfig(variables={"binlog_row_metadata": "FULL"}),
            "binlog_row_metadata",
            "FULL",
            "NO_LOG",
        ),
    ],
)
def test_a_contradiction_names_the_variable_and_both_values(
    config: ServerConfig, variable: str, configured: object, served: object
) -> None:
    store = MemoryBinlogStore(server_id=1, server_version="10.11.19-MariaDB-log", clock=clock)
    rows_transaction(store, INT_TABLE)
    with pytest.raises(ConfigError) as caught:
        ServerState(config, store).check_served()
    error = caught.value
    assert (error.variable, error.configured, error.served) == (variable, configured, served)
    message = str(error)
    assert message.startswith(f"{variable}: configured {configured}, ")
    assert f"the served binlog says {served}" in message


def test_configured_values_stand_where_the_binlog_cannot_tell() -> None:
    store = MemoryBinlogStore(clock=clock)  # no TABLE_MAP, no QUERY with a charset yet
    config = ServerConfig(
        character_set_server="latin1",
        variables={"binlog_row_metadata": "FULL", "log_slave_updates": "ON"},
    )
    reported: list[ConfigError] = []
    state = ServerState(config, store)
    state.check_served()
    state.on_config_error = reported.append
    assert state.dynamic_global("binlog_row_metadata") == "FULL"
    assert state.dynamic_global("log_slave_updates") is True
    assert state.dynamic_global("collation_server") == "latin1_swedish_ci"
    # Later events that contradict it: reported once, and the bytes' value is served.
    rows_transaction(store, INT_TABLE)
    assert state.dynamic_global("binlog_row_metadata") == "NO_LOG"
    assert [(e.variable, e.served) for e in reported] == [("binlog_row_metadata", "NO_LOG")]
    rows_transaction(store, INT_TABLE)
    assert state.dynamic_global("binlog_row_metadata") == "NO_LOG"
    assert len(reported) == 1


def test_set_global_stands_until_the_binlog_says_something_new() -> None:
    store = MemoryBinlogStore(clock=clock)
    rows_transaction(store, INT_TABLE)
    state = ServerState(ServerConfig(user="root"), store)
    state.check_served()
    session = login(state)
    run(session, "SET GLOBAL binlog_row_metadata = 'MINIMAL'")
    assert state.dynamic_global("binlog_row_metadata") == "MINIMAL"
    rows_transaction(store, INT_TABLE)  # NO_LOG again: nothing new
    assert state.dynamic_global("binlog_row_metadata") == "MINIMAL"
    rows_transaction(store, table((ColumnType.LONG,), (0,), SIGNEDNESS, NAMES))
    assert state.dynamic_global("binlog_row_metadata") == "FULL"


def login(state: ServerState) -> SessionState:
    info = state.open_connection("127.0.0.1")
    return SessionState.create(state, info.thread_id, state.config.user, "127.0.0.1", 45)


def run(session: SessionState, sql: str) -> None:
    outcome = execute(session, sql)
    assert all(isinstance(r, OkResult) for r in outcome.responses), outcome.responses


def test_the_handshake_and_the_dump_use_the_served_identity() -> None:
    store = MemoryBinlogStore(server_id=77, server_version="10.11.8-MariaDB-log", clock=clock)
    store.append_transaction([charset_query(8)])
    state = ServerState(ServerConfig(), store)
    greeting = ServerSession(state).initial_bytes()[4:]
    version_end = greeting.index(b"\x00", 1)
    assert greeting[1:version_end] == b"5.5.5-10.11.8-MariaDB-log"
    # protocol(1) version NUL thread id(4) scramble(8) filler(1) capabilities(2) charset(1)
    assert greeting[version_end + 1 + 4 + 8 + 1 + 2] == 8
    assert state.globals["server_id"] == 77


def test_scanning_reads_only_what_was_appended() -> None:
    store = MemoryBinlogStore(clock=clock)
    reads: list[tuple[str, int, int]] = []
    source = RecordingSource(store, reads)
    scanner = FactsScanner(source)
    scanner.refresh()
    first_end = store.position
    assert sum(size for _, _, size in reads) == first_end - 4
    reads.clear()
    assert scanner.refresh() is False and reads == []
    rows_transaction(store, INT_TABLE)
    store.rotate()
    rows_transaction(store, INT_TABLE)
    scanner.refresh()
    total = sum(store.file_size(name) - 4 for name in store.file_names())
    assert sum(size for _, _, size in reads) == total - (first_end - 4)
    assert [name for name, offset, _ in reads if name == "mysql-bin.000001"][0:1] == [
        "mysql-bin.000001"
    ]
    assert min(offset for name, offset, _ in reads if name == "mysql-bin.000001") == first_end
    # Purged files are not read again; the facts stay.
    store.purge_to("mysql-bin.000002")
    reads.clear()
    assert scanner.refresh() is False and reads == []
    assert scanner.facts.row_metadata == RowMetadata.NO_LOG


class RecordingSource:
    """A store whose reads are recorded as (file, offset, bytes returned)."""

    def __init__(self, store: MemoryBinlogStore, reads: list[tuple[str, int, int]]) -> None:
        self.store = store
        self.reads = reads

    def file_names(self) -> list[str]:
        return self.store.file_names()

    def file_size(self, name: str) -> int:
        return self.store.file_size(name)

    def read(self, name: str, offset: int, max_bytes: int = 1 << 20) -> bytes:
        data = self.store.read(name, offset, max_bytes)
        self.reads.append((name, offset, len(data)))
        return data


def test_damaged_bytes_stop_the_scan_of_their_file_only(tmp_path: Path) -> None:
    directory = served_directory(tmp_path, "default")
    first = directory / "mysql-bin.000001"
    data = bytearray(first.read_bytes())
    data[4 + 9 : 4 + 13] = b"\x01\x00\x00\x00"  # the FDE's length: 1 byte, not an event
    first.write_bytes(bytes(data))
    with DirectoryBinlogStore(directory) as store:
        scanner = FactsScanner(store)
        scanner.refresh()
    # The second file is whole: its FDE still tells the server.
    assert scanner.facts.server_version == golden_variables("default")["version"]


# What the scanner learns once per distinct TABLE_MAP body or QUERY status block must be what
# every event says: the facts, computed here from each decoded event, agree after each refresh.
_TABLE_SHAPES = [
    table((ColumnType.LONG,), (0,), SIGNEDNESS, NAMES),
    table((ColumnType.DATE,), (0,)),
    table((ColumnType.LONG,), (0,), SIGNEDNESS),
    INT_TABLE,
]


def _facts_event_by_event(store: MemoryBinlogStore) -> tuple[Any, ...]:
    from decoder.core import decode_event
    from fakemaster.vocabulary.context import BinlogContext

    row_metadata = None
    collation = None
    collations: set[int] = set()
    largest = 0
    for name in store.file_names():
        context = BinlogContext()
        for offset, raw in store.iter_events(name):
            largest = max(largest, len(raw))
            event = decode_event(raw, context, offset=offset)
            context.observe(event)
            if isinstance(event, TableMapEvent):
                row_metadata = row_metadata_of(event) or row_metadata
            elif isinstance(event, QueryEvent):
                for status in event.status_vars:
                    if status.code == QueryStatus.CHARSET:
                        collation = int(status.value[2])
                        collations.add(collation)
    return row_metadata, collation, frozenset(collations), largest


@settings(max_examples=examples(0.5), deadline=None)
# Found in CI: FULL, refresh, then MINIMAL and FULL again within one refresh (equal facts, newer
# evidence).
@example(steps=[("table", 0, 1), ("refresh", 0, 1), ("table", 2, 1), ("table", 0, 1)])
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["table", "query", "refresh"]),
            st.integers(0, 3),
            st.integers(1, 300),
        ),
        max_size=30,
    )
)
def test_facts_learnt_once_per_body_are_those_of_every_event(
    steps: list[tuple[str, int, int]],
) -> None:
    store = MemoryBinlogStore(clock=clock)
    scanner = FactsScanner(store)
    for kind, which, table_id in steps:
        if kind == "table":
            shape = _TABLE_SHAPES[which]
            rows_transaction(store, dataclasses.replace(shape, table_id=table_id))
        elif kind == "query":
            store.append_transaction([charset_query([8, 45, 33, 224][which])])
        else:
            scanner.refresh()
    scanner.refresh()
    facts = scanner.facts
    assert (
        facts.row_metadata,
        facts.server_collation_id,
        facts.server_collation_ids,
        facts.largest_event,
    ) == _facts_event_by_event(store)
    # The same scan through read() only (whole events, as a source without read_bytes gives
    # them) learns the same, at the same events.
    plain = FactsScanner(RecordingSource(store, []))
    plain.refresh()
    assert plain.facts == facts
    assert plain.facts.evidence == facts.evidence


# --- the walk over events that tell nothing: C against Python --------------------------------

_TABLE_MAP_TYPE = 19
_BODIES = [b"", b"t1-body", b"t2-body-longer", b"x" * 40]


def _walk_event(type_code: int, server_id: int, body: bytes, pad: int) -> bytes:
    """An event of ``body`` (a TABLE_MAP's after its table id) and ``pad`` checksum bytes."""
    table_id = b"\x01\x00\x00\x00\x00\x00" if type_code == _TABLE_MAP_TYPE else b""
    length = 19 + len(table_id) + len(body) + pad
    header = struct.pack("<IBIII", NOW, type_code, server_id, length, 0) + b"\x00\x00"
    return header + table_id + body + b"\xcc" * pad


def _stops(walker: Any, block: bytes, **kwargs: Any) -> list[tuple[int, int]]:
    """Every place the walker stops over ``block``, passing each looked-at event."""
    stops: list[tuple[int, int]] = []
    pos = 0
    while True:
        pos, look = walker(block, pos, **kwargs)
        stops.append((pos, look))
        if not look:
            return stops
        pos += _LENGTH.unpack_from(block, pos + 9)[0]


@settings(max_examples=examples(1))
@given(
    events=st.lists(
        st.tuples(
            st.sampled_from([2, 4, 15, 16, 19, 23, 30, 33, 34, 77, 160, 162, 255]),
            st.sampled_from([0, 1, 2, 0xFFFFFFFF]),
            st.sampled_from(_BODIES),
            st.sampled_from([0, 4, 9, 40]),  # checksum bytes: 4 when crc_len is 4 (known maps)
        ),
        max_size=30,
    ),
    cut=st.integers(0, 1 << 20),
    largest=st.integers(0, 120),
    foreign_from=st.sampled_from([None, 1, 2]),
    known=st.dictionaries(
        st.sampled_from(_BODIES), st.sampled_from([None, "FULL", "MINIMAL"]), max_size=4
    ),
    row_metadata=st.sampled_from([None, "FULL", "MINIMAL"]),
    maps=st.booleans(),
    crc_len=st.sampled_from([0, 4]),
    bogus=st.booleans(),
)
def test_the_c_walk_stops_where_the_python_walk_does(
    events: list[tuple[int, int, bytes, int]],
    cut: int,
    largest: int,
    foreign_from: int | None,
    known: dict[bytes, str | None],
    row_metadata: str | None,
    maps: bool,
    crc_len: int,
    bogus: bool,
) -> None:
    _needs_the_c_walk()
    block = b"".join(_walk_event(t, s, body, pad) for t, s, body, pad in events)
    if bogus:  # bytes that are no event (a length below the header's) after the events
        block += struct.pack("<IBIII", 0, 2, 0, 5, 0) + b"\x00" * 2
    block = block[: cut % (len(block) + 1)]
    # Keys as the scanner makes them: the body after the table id, checksum left out.
    table_maps = {body: (setting, "db", "t") for body, setting in known.items()}
    kwargs: dict[str, Any] = dict(
        largest=largest,
        foreign_from=foreign_from,
        telling=served_facts._TELLING_FLAGS,
        table_map=_TABLE_MAP_TYPE,
        table_maps=table_maps if maps else None,
        row_metadata=row_metadata,
        body_start=25,
        crc_len=crc_len,
        layout=served_facts._LAYOUT,
    )

    def positional(walker: Any) -> Any:
        return lambda data, pos, **kw: walker(data, pos, *kw.values())

    in_c = _stops(positional(served_facts._facts_accel_pass_untelling()), block, **kwargs)
    in_python = _stops(positional(served_facts._pass_untelling_in_python), block, **kwargs)
    assert in_c == in_python


def test_the_c_walk_refuses_arguments_that_would_read_outside_the_block() -> None:
    _needs_the_c_walk()
    walker = served_facts._facts_accel_pass_untelling()
    block = _walk_event(16, 1, b"", 4) * 2
    good = (0, 100, None, served_facts._TELLING_FLAGS, 19, None, None, 25, 4, served_facts._LAYOUT)
    assert walker(block, *good) == (len(block), 0)
    bad = [
        {0: -1},
        {0: len(block) + 1},
        {3: b"\x00" * 255},
        {5: []},
        {9: (19, 4, 16, 9)},
        {9: (19, 19, 5, 9)},
    ]
    for change in bad:
        args = list(good)
        for index, value in change.items():
            args[index] = value
        with pytest.raises(ValueError, match="pass_untelling"):
            walker(block, *args)


def test_the_walks_stop_at_each_boundary_of_what_tells_something(walk: Any) -> None:
    """One event for each reason to stop or not, both walks: a known TABLE_MAP of the same
    setting (passed), of another setting (looked at), one of exactly ``largest`` bytes (passed),
    one byte more (looked at), server id 0 and the FDE's (passed), another (looked at)."""
    same = _walk_event(_TABLE_MAP_TYPE, 1, b"t1-body", 4)
    other = _walk_event(_TABLE_MAP_TYPE, 1, b"t2-body-longer", 4)
    sized = _walk_event(16, 1, b"", 60)  # an XID (padded: larger than the TABLE_MAPs)
    events = [
        same,
        other,
        sized,
        _walk_event(16, 1, b"", 61),
        _walk_event(16, 0, b"", 4),
        _walk_event(16, 7, b"", 4),
    ]
    block = b"".join(events)
    starts = [sum(len(e) for e in events[:i]) for i in range(len(events) + 1)]
    args = (
        len(sized),
        1,
        served_facts._TELLING_FLAGS,
        _TABLE_MAP_TYPE,
        {b"t1-body": ("FULL", "db", "t1"), b"t2-body-longer": ("MINIMAL", "db", "t2")},
        "FULL",
        25,
        4,
        served_facts._LAYOUT,
    )
    stops = []
    pos = 0
    while True:
        pos, look = walk(block, pos, *args)
        stops.append((pos, look))
        if not look:
            break
        pos += _LENGTH.unpack_from(block, pos + 9)[0]
    assert stops == [(starts[1], 1), (starts[3], 1), (starts[5], 1), (starts[6], 0)]
