"""Built-in scenarios: histories that exercise what CDC clients get wrong, served by name
(``python -m fakemaster serve --scenario NAME``, ``fake_master_factory(scenario=NAME)``) and
listed by ``python -m fakemaster scenarios``.

Each is built afresh by :func:`build` (a scenario is mutable). ``LIBRARY`` maps a name to its
one-line description and its builder.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from fakemaster.vocabulary.events import Gtid
from fakemaster.vocabulary.values import Time, Timestamp
from scenarios.errors import ScenarioError
from scenarios.history import Scenario, Settings
from scenarios.values import float32

__all__ = ["LIBRARY", "SERVING", "Serving", "build", "describe_library", "serving"]

Builder = Callable[[], Scenario]
# Column names in the TABLE_MAPs: what clients such as python-mysql-replication need.
FULL = Settings(binlog_row_metadata="FULL")

_TYPES_TABLE = """CREATE TABLE types.every (
    id INT PRIMARY KEY,
    ti TINYINT, tiu TINYINT UNSIGNED, si SMALLINT, siu SMALLINT UNSIGNED,
    mi MEDIUMINT, miu MEDIUMINT UNSIGNED, i INT, iu INT UNSIGNED, bi BIGINT, biu BIGINT UNSIGNED,
    de DECIMAL(65,30), dsmall DECIMAL(5,2) UNSIGNED, f FLOAT, d DOUBLE,
    b1 BIT(1), b64 BIT(64), y YEAR, da DATE, t0 TIME, t6 TIME(6), dt0 DATETIME, dt6 DATETIME(6),
    ts0 TIMESTAMP NULL, ts6 TIMESTAMP(6) NULL,
    c CHAR(5), cl CHAR(3) CHARACTER SET latin1, vc VARCHAR(300), vl VARCHAR(10) CHARACTER SET latin1,
    tt TINYTEXT, tx TEXT, mt MEDIUMTEXT, lt LONGTEXT,
    bn BINARY(4), vb VARBINARY(300), tb TINYBLOB, bl BLOB, mb MEDIUMBLOB, lb LONGBLOB,
    e ENUM('a','b','c'), s SET('x','y','z'), j JSON)"""


def every_type() -> Scenario:
    """Every column type, each at its edges (minimum, maximum, zero, empty, NULL)."""
    scenario = Scenario(FULL)
    scenario.create_table(_TYPES_TABLE)
    low = {
        "id": 1,
        "ti": -128,
        "tiu": 0,
        "si": -32768,
        "siu": 0,
        "mi": -8388608,
        "miu": 0,
        "i": -2147483648,
        "iu": 0,
        "bi": -9223372036854775808,
        "biu": 0,
        "de": Decimal("-" + "9" * 35 + "." + "9" * 30),
        "dsmall": Decimal("0.00"),
        "f": float32(-3.4028234663852886e38),
        "d": -1.7976931348623157e308,
        "b1": 0,
        "b64": 0,
        "y": 1901,
        "da": _dt.date(1000, 1, 1),
        "t0": "-838:59:59",
        "t6": Time(True, 838, 59, 58, 999999),
        "dt0": _dt.datetime(1000, 1, 1),
        "dt6": _dt.datetime(1000, 1, 1, 0, 0, 0, 1),
        "ts0": Timestamp(1, 0),
        "ts6": Timestamp(1, 1),
        "c": "",
        "cl": "",
        "vc": "",
        "vl": "",
        "tt": "",
        "tx": "",
        "mt": "",
        "lt": "",
        "bn": b"\x00\x00\x00\x00",
        "vb": b"",
        "tb": b"",
        "bl": b"",
        "mb": b"",
        "lb": b"",
        "e": "a",
        "s": "",
        "j": "{}",
    }
    high = {
        "id": 2,
        "ti": 127,
        "tiu": 255,
        "si": 32767,
        "siu": 65535,
        "mi": 8388607,
        "miu": 16777215,
        "i": 2147483647,
        "iu": 4294967295,
        "bi": 9223372036854775807,
        "biu": 18446744073709551615,
        "de": Decimal("9" * 35 + "." + "9" * 30),
        "dsmall": Decimal("999.99"),
        "f": float32(3.4028234663852886e38),
        "d": 1.7976931348623157e308,
        "b1": 1,
        "b64": (1 << 64) - 1,
        "y": 2155,
        "da": _dt.date(9999, 12, 31),
        "t0": "838:59:59",
        "t6": Time(False, 838, 59, 58, 999999),
        "dt0": _dt.datetime(9999, 12, 31, 23, 59, 59),
        "dt6": _dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
        "ts0": Timestamp(0x7FFFFFFF, 0),
        "ts6": Timestamp(0x7FFFFFFF, 999999),
        "c": "ünï€😀",
        "cl": "é€ÿ",
        "vc": "😀" * 300,
        "vl": "\\'\"\t\n%_ x",
        "tt": "t" * 255,
        "tx": "x" * 300,
        "mt": "m" * 70000,
        "lt": "l" * 70000,
        "bn": b"\xff\x00\xff\x00",
        "vb": bytes(range(256)) + b"\x00" * 44,
        "tb": b"\xff" * 255,
        "bl": b"\x00\xff" * 150,
        "mb": b"\x01" * 70000,
        "lb": b"\x02" * 70000,
        "e": "c",
        "s": "x,y,z",
        "j": '{"k": [1, "é", null, true]}',
    }
    middle = {"id": 3, "f": 0.5, "d": 0.1, "y": 0, "t0": "00:00:00", "e": 2, "s": 5}
    scenario.insert("types.every", low, high)
    scenario.insert("types.every", middle)
    nulls = {name: None for name in low if name != "id"}
    with scenario.transaction() as tx:
        tx.update("types.every", {"id": 1}, nulls)
        tx.update("types.every", {"id": 3}, {"de": Decimal("0E-30"), "t6": "-00:00:00.000001"})
    scenario.update("types.every", {"id": 2}, {"i": -1, "vc": "short"})
    scenario.delete("types.every", {"id": 3})
    return scenario


def multi_domain() -> Scenario:
    """Transactions in three GTID domains from several server ids, interleaved, after an
    initial GTID state."""
    scenario = Scenario(FULL, gtid_state=[Gtid(0, 1, 100), Gtid(2, 9, 7)])
    scenario.create_table("CREATE TABLE md.a (id INT PRIMARY KEY, v INT)")
    scenario.create_table("CREATE TABLE md.b (id INT PRIMARY KEY, v VARCHAR(10))")
    for n in range(12):
        domain = n % 3
        with scenario.transaction(domain_id=domain, server_id=(1, 5, 9)[domain]) as tx:
            tx.insert("md.a", {"id": n, "v": n * n})
            tx.insert("md.b", {"id": n, "v": f"d{domain}"})
    with scenario.transaction(domain_id=1, server_id=6) as tx:
        tx.update("md.a", {"id": 0}, {"v": -1})
        tx.delete("md.b", {"id": 11})
    return scenario


def rotation_storm() -> Scenario:
    """A rotation after every transaction, and several in a row (files with no transaction)."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE storm.t (id INT PRIMARY KEY, n INT NOT NULL)")
    for n in range(30):
        scenario.insert("storm.t", {"id": n, "n": 0})
        scenario.rotate()
        if n % 10 == 9:
            scenario.rotate()
            scenario.rotate()
    for n in range(0, 30, 3):
        scenario.update("storm.t", {"id": n}, {"n": n})
        scenario.rotate()
    return scenario


def _images(settings: Settings) -> Scenario:
    scenario = Scenario(settings)
    scenario.create_table(
        "CREATE TABLE img.t (id INT PRIMARY KEY, a INT, b VARCHAR(20) DEFAULT 'dflt', t TEXT,"
        " bl BLOB, u INT NOT NULL, UNIQUE KEY (u))",
        rows=[{"id": 1, "a": 1, "t": "one", "bl": b"\x01", "u": 10}],
    )
    scenario.create_table("CREATE TABLE img.nokey (a INT, t TEXT)")
    scenario.insert("img.t", {"id": 2, "u": 20})
    scenario.insert("img.t", {"id": 3, "a": 3, "t": "three", "u": 30})
    with scenario.transaction() as tx:
        tx.update("img.t", {"id": 1}, {"a": 11})
        tx.update("img.t", {"id": 2}, {"t": "now text", "bl": b"\x02\x03"})
        tx.update("img.t", {"id": 3}, {"id": 4})
        tx.insert("img.nokey", {"a": 1, "t": "x"}, {"a": 1, "t": "x"})
    scenario.update("img.nokey", {"a": 1, "t": "x"}, {"t": "y"})
    scenario.delete("img.t", {"id": 1})
    scenario.delete("img.nokey", {"a": 1, "t": "x"})
    return scenario


def minimal_image() -> Scenario:
    """binlog_row_image=MINIMAL: key-only before images, only assigned columns after."""
    return _images(Settings(binlog_row_image="MINIMAL", binlog_row_metadata="FULL"))


def noblob_image() -> Scenario:
    """binlog_row_image=NOBLOB: TEXT/BLOB columns only when a statement names them."""
    return _images(Settings(binlog_row_image="NOBLOB", binlog_row_metadata="FULL"))


def compressed() -> Scenario:
    """log_bin_compress=ON: rows events compressed from 64 bytes on, others left plain."""
    scenario = Scenario(
        Settings(binlog_row_metadata="FULL", log_bin_compress=True, log_bin_compress_min_len=64)
    )
    scenario.create_table(
        "CREATE TABLE zip.t (id INT PRIMARY KEY, v VARCHAR(2000) CHARACTER SET latin1)"
    )
    scenario.insert("zip.t", *({"id": n, "v": "z" * (n * 37)} for n in range(20)))
    scenario.insert("zip.t", {"id": 100, "v": "s"})
    with scenario.transaction() as tx:
        tx.update("zip.t", {"id": 5}, {"v": "w" * 1999})
        tx.update("zip.t", {"id": 100}, {"v": "tiny"})
        tx.delete("zip.t", {"id": 19})
    return scenario


def primary_key_updates() -> Scenario:
    """Updates that change the primary key: a row moved, two swapped through a free key, a
    composite key changed in one part."""
    scenario = Scenario(FULL)
    scenario.create_table(
        "CREATE TABLE pk.t (id INT PRIMARY KEY, v VARCHAR(10))",
        rows=[{"id": n, "v": f"row{n}"} for n in range(1, 6)],
    )
    scenario.create_table(
        "CREATE TABLE pk.pair (a INT, b VARCHAR(5), v INT, PRIMARY KEY (a, b))",
        rows=[{"a": 1, "b": "x", "v": 1}, {"a": 1, "b": "y", "v": 2}],
    )
    scenario.update("pk.t", {"id": 1}, {"id": 100})
    with scenario.transaction() as tx:  # swap 2 and 3
        tx.update("pk.t", {"id": 2}, {"id": 0})
        tx.update("pk.t", {"id": 3}, {"id": 2, "v": "was3"})
        tx.update("pk.t", {"id": 0}, {"id": 3, "v": "was2"})
    scenario.update("pk.pair", {"a": 1, "b": "x"}, {"b": "z"})
    scenario.update("pk.pair", {"a": 1, "b": "y"}, {"a": 2, "v": 20})
    scenario.insert("pk.t", {"id": 1, "v": "again"})
    return scenario


def no_key_duplicates() -> Scenario:
    """A table without a key holding identical rows: one of them updated, one deleted."""
    scenario = Scenario(FULL)
    scenario.create_table(
        "CREATE TABLE dup.t (a INT, b VARCHAR(10), c TEXT)",
        rows=[{"a": 1, "b": "same", "c": "x"}] * 3 + [{"a": None, "b": None, "c": None}] * 2,
    )
    scenario.insert("dup.t", {"a": 1, "b": "same", "c": "x"}, {"a": 2, "b": "other", "c": "y"})
    scenario.update("dup.t", {"a": 1, "b": "same", "c": "x"}, {"c": "changed"})
    scenario.delete("dup.t", {"a": 1, "b": "same", "c": "x"})
    scenario.delete("dup.t", {"a": None, "b": None, "c": None})
    with scenario.transaction() as tx:
        tx.insert("dup.t", {"a": 2, "b": "other", "c": "y"})
        tx.update("dup.t", {"a": 2, "b": "other", "c": "y"}, {"a": 3})
    return scenario


def many_tables() -> Scenario:
    """Sixty tables in three databases, one transaction touching all of them, and a wide
    table of 300 columns."""
    scenario = Scenario(FULL)
    names = [f"many{n % 3}.t{n:02}" for n in range(60)]
    for name in names:
        scenario.create_table(f"CREATE TABLE {name} (id INT PRIMARY KEY, v INT)")
    columns = ", ".join(f"c{n:03} INT" for n in range(299))
    scenario.create_table(f"CREATE TABLE many0.wide (id INT PRIMARY KEY, {columns})")
    with scenario.transaction() as tx:
        for n, name in enumerate(names):
            tx.insert(name, {"id": 1, "v": n})
    scenario.insert(
        "many0.wide",
        {"id": 1, **{f"c{n:03}": n for n in range(299)}},
        {"id": 2, **{f"c{n:03}": None if n % 2 else n for n in range(299)}},
    )
    scenario.update("many0.wide", {"id": 1}, {"c150": -150, "c298": None})
    for name in names[::7]:
        scenario.delete(name, {"id": 1})
    return scenario


def large_rows() -> Scenario:
    """A row over 16 MiB (a 17 MiB LONGBLOB): rows events and ANNOTATE_ROWS over 16 MiB."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE large.t (id INT PRIMARY KEY, b LONGBLOB, n INT)")
    scenario.insert("large.t", {"id": 1, "b": b"small", "n": 0})
    scenario.insert("large.t", {"id": 2, "b": bytes(range(256)) * (17 * 4096 + 1), "n": 1})
    scenario.update("large.t", {"id": 2}, {"n": 2})  # FULL images: both 17 MiB
    scenario.update("large.t", {"id": 1}, {"b": b"still small"})
    return scenario


def restart_new_server_id() -> Scenario:
    """Server restarts: one with the same server id, one with a new server id (and MINIMAL
    row images); GTIDs go on in every domain, files end with STOP."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE rs.t (id INT PRIMARY KEY, v VARCHAR(20))")
    scenario.insert("rs.t", {"id": 1, "v": "before"})
    with scenario.transaction(domain_id=3, server_id=1) as tx:
        tx.insert("rs.t", {"id": 2, "v": "domain 3"})
    scenario.restart()
    scenario.insert("rs.t", {"id": 3, "v": "after a restart"})
    scenario.restart(server_id=2, binlog_row_image="MINIMAL")
    scenario.insert("rs.t", {"id": 4, "v": "new server id"})
    with scenario.transaction(domain_id=3, server_id=2) as tx:
        tx.update("rs.t", {"id": 2}, {"v": "domain 3 again"})
    scenario.update("rs.t", {"id": 1}, {"v": "after"})
    return scenario


def no_log_metadata() -> Scenario:
    """binlog_row_metadata=NO_LOG: TABLE_MAPs without names, signedness or charsets (a large
    unsigned value reads as negative without the schema)."""
    scenario = Scenario(Settings(binlog_row_metadata="NO_LOG"))
    scenario.create_table(
        "CREATE TABLE nolog.t (id INT UNSIGNED PRIMARY KEY, big BIGINT UNSIGNED,"
        " name VARCHAR(20) CHARACTER SET latin1, e ENUM('one','two'))"
    )
    scenario.insert(
        "nolog.t",
        {"id": 4294967295, "big": 18446744073709551615, "name": "caf\u00e9", "e": "two"},
        {"id": 1, "big": 1, "name": "plain", "e": "one"},
    )
    scenario.update("nolog.t", {"id": 4294967295}, {"big": 9223372036854775808})
    scenario.delete("nolog.t", {"id": 1})
    return scenario


def xa() -> Scenario:
    """XA transactions: prepared and committed later with others in between, one rolled back,
    one committed in one phase, one still prepared at the end."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE xa.acct (id INT PRIMARY KEY, balance INT NOT NULL)")
    scenario.create_table("CREATE TABLE xa.log (id INT PRIMARY KEY, note VARCHAR(30))")
    scenario.insert("xa.acct", {"id": 1, "balance": 100}, {"id": 2, "balance": 0})
    with scenario.xa_transaction(("transfer", "branch1", 1)) as tx:
        tx.update("xa.acct", {"id": 1}, {"balance": 60})
        tx.update("xa.acct", {"id": 2}, {"balance": 40})
    scenario.insert("xa.log", {"id": 1, "note": "while prepared"})
    scenario.xa_commit(("transfer", "branch1", 1))
    with scenario.xa_transaction("undone") as tx:
        tx.insert("xa.log", {"id": 2, "note": "rolled back"})
    scenario.xa_rollback("undone")
    with scenario.xa_transaction("at once", one_phase=True) as tx:
        tx.insert("xa.log", {"id": 3, "note": "one phase"})
    with scenario.xa_transaction("pending") as tx:
        tx.update("xa.acct", {"id": 2}, {"balance": 0})
    scenario.insert("xa.log", {"id": 4, "note": "after"})
    return scenario


def ddl_mid_stream() -> Scenario:
    """DDL between row events: columns added, dropped, re-typed and reordered; a table created,
    truncated, renamed and dropped."""
    scenario = Scenario(FULL)
    scenario.create_table(
        "CREATE TABLE ddl.t (id INT PRIMARY KEY, a VARCHAR(10), n INT)",
        rows=[{"id": 1, "a": "x", "n": 1}],
    )
    scenario.insert("ddl.t", {"id": 2, "a": "y", "n": 2})
    scenario.alter_table("ddl.t", "ADD COLUMN b INT NULL DEFAULT 7 AFTER id", "DROP COLUMN n")
    scenario.insert("ddl.t", {"id": 3, "a": "z", "b": 3})
    scenario.alter_table("ddl.t", "MODIFY COLUMN a VARCHAR(20) NULL FIRST")
    scenario.update("ddl.t", {"id": 1}, {"a": "moved"})
    scenario.alter_table("ddl.t", "MODIFY COLUMN id BIGINT NOT NULL AFTER b")
    scenario.insert("ddl.t", {"id": 9_000_000_000, "a": "wide"})
    scenario.create_table("CREATE TABLE ddl.tmp (k INT PRIMARY KEY, v TEXT)", rows=[{"k": 1}])
    scenario.truncate_table("ddl.tmp")
    scenario.insert("ddl.tmp", {"k": 2, "v": "after truncate"})
    scenario.rename_table("ddl.tmp", "ddl.kept")
    scenario.insert("ddl.kept", {"k": 3, "v": "renamed"})
    scenario.create_table("CREATE TABLE ddl.gone (k INT PRIMARY KEY)", rows=[{"k": 1}])
    scenario.drop_table("ddl.gone")
    scenario.delete("ddl.t", {"id": 2})
    return scenario


def non_transactional() -> Scenario:
    """A MyISAM table: each statement is its own group (ending with COMMIT), written before the
    InnoDB transaction it was in."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE nt.m (id INT PRIMARY KEY, v INT) ENGINE=MyISAM")
    scenario.create_table("CREATE TABLE nt.t (id INT PRIMARY KEY, v INT)")
    scenario.insert("nt.m", {"id": 1, "v": 1})
    with scenario.transaction() as tx:
        tx.insert("nt.t", {"id": 1, "v": 1})
        tx.insert("nt.m", {"id": 2, "v": 2})
        tx.update("nt.m", {"id": 1}, {"v": 10})
    scenario.delete("nt.m", {"id": 2})
    return scenario


def settings_changes() -> Scenario:
    """Settings changed mid-history as SET GLOBAL/SESSION would: row image, metadata,
    annotations, compression, and checksum (which rotates)."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE st.t (id INT PRIMARY KEY, v VARCHAR(300), b BLOB)")
    scenario.insert("st.t", {"id": 1, "v": "full", "b": b"\x00"})
    scenario.set(binlog_row_image="MINIMAL")
    scenario.update("st.t", {"id": 1}, {"v": "minimal"})
    scenario.set(binlog_row_image="NOBLOB", binlog_annotate_row_events=False)
    scenario.update("st.t", {"id": 1}, {"v": "noblob"})
    scenario.set(log_bin_compress=True, log_bin_compress_min_len=10, binlog_checksum=False)
    scenario.insert("st.t", {"id": 2, "v": "compressed" * 20})
    scenario.set(binlog_row_metadata="MINIMAL", binlog_checksum=True, log_bin_compress=False)
    scenario.delete("st.t", {"id": 1})
    return scenario


def long_idle() -> Scenario:
    """A long idle period (an hour) between transactions: served live, heartbeats only."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE idle.t (id INT PRIMARY KEY, at VARCHAR(10))")
    scenario.insert("idle.t", {"id": 1, "at": "start"})
    scenario.idle(3600)
    scenario.insert("idle.t", {"id": 2, "at": "an hour"})
    return scenario


def snapshot_then_stream() -> Scenario:
    """Tables with many initial rows and a history served with none of it released at
    first: a client snapshots over SQL, then streams from the snapshot's coordinates."""
    scenario = Scenario(FULL)
    scenario.create_table(
        "CREATE TABLE snap.accounts (id INT PRIMARY KEY, owner VARCHAR(40), balance BIGINT)",
        rows=[{"id": n, "owner": f"owner {n}", "balance": n * 100} for n in range(1, 501)],
    )
    scenario.create_table(
        "CREATE TABLE snap.log (seq INT PRIMARY KEY, note VARCHAR(60))",
        rows=[{"seq": n, "note": f"initial {n}"} for n in range(1, 201)],
    )
    for n in range(1, 61):
        with scenario.transaction() as tx:
            tx.update("snap.accounts", {"id": n * 7}, {"balance": n * 1000 + 1})
            tx.insert("snap.log", {"seq": 200 + n, "note": f"moved {n}"})
            if n % 3 == 0:
                tx.delete("snap.log", {"seq": n})
    return scenario


# live_stream: how many transactions (the history is finite: the store compiles it whole).
LIVE_STREAM_TRANSACTIONS = 2_000


def live_stream() -> Scenario:
    """A stream that keeps producing: 2,000 small transactions (inserts, updates, deletes
    on a few hot keys) released at 10 per second when served (about 3 minutes)."""
    scenario = Scenario(FULL)
    scenario.create_table("CREATE TABLE live.events (id INT PRIMARY KEY, n INT, note VARCHAR(20))")
    scenario.create_table("CREATE TABLE live.counter (k INT PRIMARY KEY, total BIGINT)")
    scenario.insert("live.counter", {"k": 1, "total": 0})
    for n in range(1, LIVE_STREAM_TRANSACTIONS):
        with scenario.transaction() as tx:
            tx.update("live.counter", {"k": 1}, {"total": n})
            if n % 5 == 4:
                tx.delete("live.events", {"id": n - 2})
            else:
                tx.insert("live.events", {"id": n, "n": n, "note": f"event {n}"})
    return scenario


LIBRARY: dict[str, tuple[str, Builder]] = {
    builder.__name__: (str(builder.__doc__).split("\n\n")[0].replace("\n   ", ""), builder)
    for builder in (
        every_type,
        multi_domain,
        rotation_storm,
        minimal_image,
        noblob_image,
        compressed,
        primary_key_updates,
        no_key_duplicates,
        many_tables,
        large_rows,
        restart_new_server_id,
        no_log_metadata,
        xa,
        ddl_mid_stream,
        non_transactional,
        settings_changes,
        long_idle,
        snapshot_then_stream,
        live_stream,
    )
}


@dataclass(frozen=True)
class Serving:
    """How a built-in scenario is served by default (``serve --scenario NAME`` and the pytest
    plugin's ``scenario=NAME`` without ``released=``): ``released``, the points (transactions,
    DDL, XA ends) in the binlog at start (None: all); ``rate``, points released per second by
    ``serve`` without ``--live`` (None: none, the test or ``--live`` releases)."""

    released: int | None = None
    rate: float | None = None


# The built-in scenarios not served whole at start.
SERVING: dict[str, Serving] = {
    "snapshot_then_stream": Serving(released=0),
    "live_stream": Serving(released=0, rate=10.0),
    "long_idle": Serving(released=1, rate=1.0),
}


def serving(name: object) -> Serving:
    """The default serving of ``name`` (a built-in scenario's name; anything else: all at once)."""
    return SERVING.get(name, Serving()) if isinstance(name, str) else Serving()


def build(name: str) -> Scenario:
    """A new copy of the built-in scenario ``name``."""
    try:
        return LIBRARY[name][1]()
    except KeyError:
        raise ScenarioError(
            f"no built-in scenario {name!r} (there are: {', '.join(LIBRARY)})"
        ) from None


def describe_library() -> str:
    """One line per built-in scenario: its name and what it holds."""
    width = max(map(len, LIBRARY))
    return "\n".join(
        f"{name:<{width}}  {' '.join(text.split())}" for name, (text, _) in LIBRARY.items()
    )
