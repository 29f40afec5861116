"""The two sides of ``pipeline compare``: a pipeline's output directory (its materialised
tables and the keys its change log gives them) and a reference, one of

- a live database, ``mariadb://USER:PASSWORD@HOST:PORT/DATABASE`` (``mysql://`` too; without a
  database every database but the system ones; ``?socket=PATH`` for a Unix socket), read with
  PyMySQL in text form with ``time_zone = '+00:00'`` (BIT columns as ``b + 0``), keys from
  ``information_schema``;
- a directory of ``mariadb --batch`` dumps, one file per table named ``DATABASE.TABLE`` (with
  or without a ``.tsv``/``.txt`` suffix): a header line of column names, then a line per row,
  tab-separated, ``\\t \\n \\0 \\\\`` escaped as the client does (``\\r``, ``\\b`` too, as the
  oracle's TSV export writes them), NULL written ``NULL`` or ``\\N``;
- a scenario's oracle: a built-in scenario's name or a scenario TOML file (its final tables).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from fakemaster.spark.compare import ColumnKind, CompareError, ReferenceTable, column_kind

__all__ = [
    "OutputTable",
    "dump_reference",
    "database_reference",
    "load_reference",
    "oracle_reference",
    "output_keys",
    "read_output",
]

SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})
_DUMP_SUFFIXES = (".tsv", ".txt")


@dataclass
class OutputTable:
    """A materialised table: column kinds in the dataset's order, rows as Python values."""

    name: str
    columns: dict[str, ColumnKind]
    rows: list[dict[str, Any]]


def read_output(out: str) -> dict[str, OutputTable]:
    """Every dataset under ``OUT/tables`` by ``database.table``."""
    import pyarrow.parquet as pq  # type: ignore[import-untyped]

    root = Path(out) / "tables"
    if not root.is_dir():
        raise CompareError(f"{out}: no tables/ directory (not the output of pipeline batch/stream)")
    tables = {}
    for directory in sorted(p for p in root.iterdir() if p.is_dir()):
        try:
            table = pq.read_table(directory)
        except Exception as exc:  # noqa: BLE001 - pyarrow's errors have no common base
            raise CompareError(f"{directory}: {exc}") from None
        kinds = {f.name: column_kind(f.type) for f in table.schema}
        tables[directory.name] = OutputTable(directory.name, kinds, table.to_pylist())
    return tables


def output_keys(out: str) -> dict[str, list[str]]:
    """The primary key the change log last gave each table (``primary_key`` of its latest
    event in ``seq`` order; tables whose events name none are absent)."""
    import pyarrow.dataset as ds  # type: ignore[import-untyped]

    # The keys of the batches compacted into the materialiser's state (state_store), then
    # those of the change events still kept.
    keys = _state_keys(Path(out) / "state")
    root = Path(out) / "changes"
    if not root.is_dir():
        return keys
    try:
        dataset = ds.dataset(root, format="parquet", partitioning="hive")
        table = dataset.to_table(columns=["database", "table", "primary_key", "seq", "batch_id"])
    except Exception:  # noqa: BLE001 - an unreadable change log only loses the keys
        return keys
    latest: dict[str, tuple[tuple[int, ...], list[str]]] = {}
    for row in table.to_pylist():
        if row["database"] is None or row["table"] is None or not row["primary_key"]:
            continue
        seq = row["seq"] or {}
        order = (
            int(row["batch_id"] or 0),
            *(int(seq.get(k) or 0) for k in ("file_index", "pos", "event", "row")),
        )
        name = f"{row['database']}.{row['table']}"
        if name not in latest or latest[name][0] <= order:
            latest[name] = (order, list(row["primary_key"]))
    return {**keys, **{name: key for name, (_, key) in latest.items()}}


def _state_keys(root: Path) -> dict[str, list[str]]:
    """The ``keys`` of the latest complete state under ``root`` (none: {})."""
    found = sorted(
        (int(p.parent.name.partition("=")[2]), p)
        for p in root.glob("batch_id=*/meta.json")
        if p.parent.name.partition("=")[2].lstrip("-").isdigit()
    )
    if not found:
        return {}
    try:
        keys = json.loads(found[-1][1].read_text(encoding="utf-8")).get("keys", {})
    except (OSError, ValueError):  # an unreadable state only loses the keys
        return {}
    return {str(k): [str(c) for c in v] for k, v in keys.items()}


# --- the oracle ----------------------------------------------------------------------------


def oracle_reference(spec: str) -> dict[str, ReferenceTable]:
    """The final tables of a built-in scenario (by name) or of a scenario TOML file."""
    from scenarios.library import LIBRARY, build
    from scenarios.oracle import canonical_rows

    if spec in LIBRARY:
        scenario = build(spec)
    else:
        from scenarios.toml_form import read_scenario

        try:
            scenario = read_scenario(spec)
        except Exception as exc:  # noqa: BLE001 - the scenario's own error names the line
            raise CompareError(str(exc)) from None
    contents = scenario.contents
    tables = {}
    for name, table in scenario.tables.items():
        rows = canonical_rows(table, contents.rows.get(name, []))
        key = [table.columns[p].name for p in table.key] if table.key else []
        tables[name] = ReferenceTable(name, list(table.column_names), list(rows), key)
    return tables


# --- mariadb --batch dumps -----------------------------------------------------------------

_ESCAPES = {b"t": b"\t", b"n": b"\n", b"r": b"\r", b"0": b"\0", b"\\": b"\\", b"b": b"\b"}


def _unescape(field: bytes, where: str) -> bytes | None:
    if field in (b"\\N", b"NULL"):
        return None
    if b"\\" not in field:
        return field
    out = bytearray()
    i = 0
    while i < len(field):
        byte = field[i : i + 1]
        if byte == b"\\":
            following = field[i + 1 : i + 2]
            if following not in _ESCAPES:
                raise CompareError(f"{where}: a backslash not followed by t, n, r, 0, b or \\")
            out += _ESCAPES[following]
            i += 2
        else:
            out += byte
            i += 1
    return bytes(out)


def _dump_name(path: Path) -> str | None:
    name = path.name
    for suffix in _DUMP_SUFFIXES:
        if name.endswith(suffix):
            name = name[: -len(suffix)]
            break
    return name if "." in name and not name.startswith(".") else None


def read_dump(path: Path) -> ReferenceTable:
    """One ``mariadb --batch`` dump file."""
    name = _dump_name(path)
    assert name is not None
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CompareError(f"{path}: {exc.strerror or exc}") from None
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise CompareError(f"{path}: empty (a dump starts with a header line of column names)")
    try:
        columns = lines[0].decode("utf-8").split("\t")
    except UnicodeDecodeError:
        raise CompareError(f"{path}, line 1: the header is not UTF-8") from None
    rows: list[tuple[bytes | None, ...]] = []
    for number, line in enumerate(lines[1:], start=2):
        fields = line.split(b"\t")
        where = f"{path}, line {number}"
        if len(fields) != len(columns):
            raise CompareError(f"{where}: {len(fields)} fields, the header has {len(columns)}")
        rows.append(tuple(_unescape(f, where) for f in fields))
    return ReferenceTable(name, columns, list(rows))


def dump_reference(directory: str) -> dict[str, ReferenceTable]:
    """Every ``DATABASE.TABLE[.tsv|.txt]`` file of a directory."""
    tables = {}
    for path in sorted(Path(directory).iterdir()):
        if path.is_file() and _dump_name(path) is not None:
            table = read_dump(path)
            if table.name in tables:
                raise CompareError(f"{path}: a second dump of {table.name}")
            tables[table.name] = table
    if not tables:
        raise CompareError(f"{directory}: no DATABASE.TABLE dump files")
    return tables


# --- a live database -----------------------------------------------------------------------


@dataclass
class Dsn:
    host: str
    port: int
    user: str
    password: str
    database: str | None
    socket: str | None


def parse_dsn(text: str) -> Dsn:
    """``mariadb://USER:PASSWORD@HOST:PORT/DATABASE[?socket=PATH]``."""
    parts = urlsplit(text)
    if parts.scheme not in ("mariadb", "mysql"):
        raise CompareError(f"{text}: a database URL starts with mariadb:// (or mysql://)")
    try:
        port = parts.port or 3306
    except ValueError:
        raise CompareError(f"{text}: the port is not a number from 0 to 65535") from None
    query = parse_qs(parts.query)
    return Dsn(
        host=parts.hostname or "127.0.0.1",
        port=port,
        user=unquote(parts.username or "root"),
        password=unquote(parts.password or os.environ.get("FAKEMASTER_PASSWORD", "")),
        database=unquote(parts.path.lstrip("/")) or None,
        socket=query["socket"][0] if query.get("socket") else None,
    )


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def database_reference(dsn_text: str) -> dict[str, ReferenceTable]:
    """The base tables (system-versioned ones too; no views, no sequences) of the DSN's
    database (or of every non-system database), every column (INVISIBLE ones too)."""
    try:
        import pymysql  # type: ignore[import-untyped]
    except ImportError:
        raise CompareError("a database reference needs PyMySQL (pip install pymysql)") from None
    dsn = parse_dsn(dsn_text)
    try:
        connection = pymysql.connect(
            host=dsn.host,
            port=dsn.port,
            user=dsn.user,
            password=dsn.password,
            unix_socket=dsn.socket,
            charset="utf8mb4",
            # Encoders only, no decoders: every value as the server's text (bytes for binary
            # columns), compared as the dumps' and the oracle's texts are.
            conv={
                k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)
            },
        )
    except pymysql.MySQLError as exc:
        raise CompareError(f"{dsn.host}:{dsn.port}: {exc}") from None
    try:
        with connection.cursor() as cursor:
            cursor.execute("SET time_zone = '+00:00'")
            return _read_database(cursor, dsn.database)
    except pymysql.MySQLError as exc:
        raise CompareError(f"{dsn.host}:{dsn.port}: {exc}") from None
    finally:
        connection.close()


def _read_database(cursor: Any, database: str | None) -> dict[str, ReferenceTable]:
    cursor.execute(
        "SELECT c.TABLE_SCHEMA, c.TABLE_NAME, c.COLUMN_NAME, c.DATA_TYPE FROM"
        " information_schema.COLUMNS c JOIN information_schema.TABLES t USING"
        " (TABLE_SCHEMA, TABLE_NAME) WHERE t.TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED')"
        " ORDER BY c.TABLE_SCHEMA, c.TABLE_NAME, c.ORDINAL_POSITION"
    )
    columns: dict[str, list[tuple[str, str]]] = {}
    for schema, table, column, data_type in cursor.fetchall():
        if (database is None and schema in SYSTEM_DATABASES) or (
            database is not None and schema != database
        ):
            continue
        columns.setdefault(f"{schema}.{table}", []).append((column, data_type))
    cursor.execute(
        "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME FROM information_schema.STATISTICS"
        " WHERE INDEX_NAME = 'PRIMARY' ORDER BY TABLE_SCHEMA, TABLE_NAME, SEQ_IN_INDEX"
    )
    keys: dict[str, list[str]] = {}
    for schema, table, column in cursor.fetchall():
        keys.setdefault(f"{schema}.{table}", []).append(column)
    tables = {}
    for name, described in columns.items():
        schema, _, table = name.partition(".")
        selected = ", ".join(
            f"{_quote(c)} + 0" if t.lower() == "bit" else _quote(c) for c, t in described
        )
        cursor.execute(f"SELECT {selected} FROM {_quote(schema)}.{_quote(table)}")
        rows = [tuple(row) for row in cursor.fetchall()]
        tables[name] = ReferenceTable(name, [c for c, _ in described], rows, keys.get(name, []))
    return tables


def load_reference(spec: str) -> tuple[dict[str, ReferenceTable], str | None]:
    """The reference ``spec`` names, and the database it is limited to (a DSN's, else None)."""
    if "://" in spec:
        return database_reference(spec), parse_dsn(spec).database
    if os.path.isdir(spec):
        return dump_reference(spec), None
    from scenarios.library import LIBRARY

    if spec in LIBRARY or (spec.endswith(".toml") and os.path.isfile(spec)):
        return oracle_reference(spec), None
    raise CompareError(
        f"{spec}: not a database URL (mariadb://...), a directory of dumps, a scenario file"
        " (.toml) or a built-in scenario's name"
    )
