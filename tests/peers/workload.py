"""Differential workloads for the binlog codec, run against a real MariaDB.

The data is declarative: :data:`CODEC_TABLES` (table specs: name, DDL and
rows as SQL literals) and :data:`CODEC_STEPS` (the DML/DDL/XA/statement-based
changes applied afterwards, as plain SQL).  A workload function creates the
database ``fm``, runs the specs and steps on one session, and returns a
:class:`WorkloadResult` holding the *ground truth*: for every table in ``fm``
its final rows as the server returns them over SQL, plus the column
metadata from ``information_schema.COLUMNS``.

Ground truth value format (see :func:`fetch_raw_rows`)
------------------------------------------------------
Rows are read with pymysql using ``use_unicode=False``, a ``conv`` dict with
no field-type decoders, and ``SET character_set_results = NULL``, so every
cell is either ``None`` (SQL NULL) or ``bytes``: exactly the text-protocol
bytes the server sent, with no charset conversion.  Per column type:

==========================  ===================================================
integers (all widths)       ASCII decimal: ``b'-128'``, ``b'18446744073709551615'``;
                            ZEROFILL columns are zero-padded to the display
                            width (``INT(8) ZEROFILL`` 42 -> ``b'00000042'``)
FLOAT / DOUBLE              MariaDB's shortest text (``%g``-like, FLT_DIG=6 /
                            17 digits): ``b'3.40282e38'``, ``b'0.1'``, ``b'1.4013e-45'``;
                            ``FLOAT(M,D)``/``DOUBLE(M,D)``: exactly D decimals
DECIMAL(M,D)                ASCII with exactly D fractional digits: ``b'-12.3456'``
BIT(M)                      raw big-endian bytes, ``ceil(M/8)`` long: BIT(9)
                            0b100000001 -> ``b'\\x01\\x01'``
YEAR                        4 ASCII digits, ``b'0000'`` for zero
DATE                        ``b'YYYY-MM-DD'`` (zero parts kept: ``b'2024-00-15'``)
TIME(fsp)                   ``b'[-]HH:MM:SS[.f{fsp}]'`` (hours up to 838)
DATETIME/TIMESTAMP(fsp)     ``b'YYYY-MM-DD HH:MM:SS[.f{fsp}]'``; TIMESTAMP is
                            shown in time zone ``+00:00`` (session and server)
CHAR(N)                     bytes in the column's charset, trailing spaces
                            removed (the server strips them on read)
BINARY(N)                   all N bytes, including the 0x00 padding
VARCHAR / TEXT family       bytes in the column's own charset (latin1 'é' ->
                            ``b'\\xe9'``, utf16 -> UTF-16BE bytes), trailing
                            spaces kept
VARBINARY / BLOB family     raw bytes
ENUM / SET                  member labels (SET: comma-separated, definition
                            order); an invalid ENUM value (index 0) is ``b''``
JSON                        the text as stored (MariaDB JSON = LONGTEXT
                            utf8mb4_bin, not normalised)
GEOMETRY family             MariaDB internal format: 4-byte little-endian SRID
                            followed by WKB
INET4 / INET6 / UUID        canonical text: ``b'::ffff:192.0.2.1'``,
                            ``b'6ccd780c-baba-1026-9564-5b8c656024db'``
==========================  ===================================================

The columns are selected explicitly in ORDINAL_POSITION order (so INVISIBLE
columns are included, unlike ``SELECT *``), ``ORDER BY pk`` when the table
has a ``pk`` column, otherwise by every column.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tests.peers.mariadb import MariaDBServer

DATABASE = "fm"

#: Marker replaced by the absolute path of the LOAD DATA input file.
LOAD_FILE_TOKEN = "<<LOAD_FILE>>"

#: LONGBLOB value > 16 MiB (16 MiB + 112 bytes), built server-side.
HUGE_ROW_SQL = "CONCAT(REPEAT('0123456789abcdef', 1048583), 'END')"
HUGE_ROW_LENGTH = 16 * 1048583 + 3


# ===========================================================================
# declarative data
# ===========================================================================


@dataclass(frozen=True)
class TableSpec:
    """One table: DDL (``{db}`` = database) and rows as SQL tuple literals.

    ``setup``/``teardown`` statements run right before/after the CREATE
    TABLE (e.g. to switch ``mysql56_temporal_format``).
    """

    name: str
    ddl: str
    rows: tuple[str, ...]
    setup: tuple[str, ...] = ()
    teardown: tuple[str, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class Step:
    """A named group of SQL statements run in order on the workload session."""

    name: str
    sql: tuple[str, ...]


def _per_fsp(base: str, frac: str, fsps: Sequence[int] = range(7)) -> str:
    """``'base[.frac[:fsp]]'`` literals for each fsp, comma-separated."""
    vals = []
    for fsp in fsps:
        vals.append(f"'{base}.{frac[:fsp]}'" if fsp else f"'{base}'")
    return ", ".join(vals)


def _hex(data: bytes) -> str:
    return f"X'{data.hex()}'" if data else "''"


_ENUM300 = ", ".join(f"'v{i:03d}'" for i in range(300))
_SET9 = ", ".join(f"'s{i}'" for i in range(9))
_SET17 = ", ".join(f"'t{i:02d}'" for i in range(17))
_SET64 = ", ".join(f"'m{i:02d}'" for i in range(64))
_SET64_ALL = ",".join(f"m{i:02d}" for i in range(64))
_DEC65_MAX = "9" * 35 + "." + "9" * 30
_DEC38_MAX = "0." + "9" * 38
_ALL_BYTES = bytes(range(256))
_NULLS = lambda n: ", ".join(["NULL"] * n)  # noqa: E731

CODEC_TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "t_int",
        """CREATE TABLE {db}.t_int (
            pk INT NOT NULL PRIMARY KEY,
            ti TINYINT NULL, tiu TINYINT UNSIGNED NULL,
            si SMALLINT NULL, siu SMALLINT UNSIGNED NULL,
            mi MEDIUMINT NULL, miu MEDIUMINT UNSIGNED NULL,
            i INT NULL, iu INT UNSIGNED NULL,
            bi BIGINT NULL, biu BIGINT UNSIGNED NULL,
            b BOOLEAN NULL, zf INT(8) UNSIGNED ZEROFILL NULL
        ) ENGINE=InnoDB""",
        (
            "(1, -128, 0, -32768, 0, -8388608, 0, -2147483648, 0, -9223372036854775808, 0, 0, 0)",
            "(2, 127, 255, 32767, 65535, 8388607, 16777215, 2147483647, 4294967295,"
            " 9223372036854775807, 18446744073709551615, 1, 4294967295)",
            "(3, 0, 128, -1, 32768, -1, 8388608, -1, 2147483648, -1, 9223372036854775808, NULL, 42)",
            f"(4, {_NULLS(12)})",
            "(5, -1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)",
            "(6, 100, 200, -300, 40000, -4000000, 10000000, 123456789, 3000000000,"
            " -1234567890123456789, 12345678901234567890, 0, 7)",
            "(8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 0, 8)",
        ),
    ),
    TableSpec(
        "t_float",
        """CREATE TABLE {db}.t_float (
            pk INT NOT NULL PRIMARY KEY,
            f FLOAT NULL, d DOUBLE NULL, f73 FLOAT(7,3) NULL, d102 DOUBLE(10,2) NULL,
            r REAL NULL
        )""",
        (
            "(1, 0, 0, 0, 0, 0)",
            "(2, 1.5, -1.5, 1234.567, -12345678.91, 0.1)",
            "(3, 3.40282e38, 1.7976931348623157e308, -9999.999, 99999999.99, -2.2250738585072014e-308)",
            "(4, -1.17549e-38, 2.2250738585072014e-308, 0.001, -0.01, 4.9e-324)",
            f"(5, {_NULLS(5)})",
            "(6, 1.401298464324817e-45, -0e0, -0.5, 0.5, 3.141592653589793)",
            "(7, 7, 7, 7, 7, 7)",
            "(8, -8, -8, -8, -8, -8)",
        ),
    ),
    TableSpec(
        "t_decimal",
        """CREATE TABLE {db}.t_decimal (
            pk INT NOT NULL PRIMARY KEY,
            d10_0 DECIMAL(10,0) NULL, d14_4 DECIMAL(14,4) NULL, d38_38 DECIMAL(38,38) NULL,
            d65_30 DECIMAL(65,30) NULL, d5_2 DECIMAL(5,2) NULL, d1_0 DECIMAL(1,0) NULL,
            d18_9 DECIMAL(18,9) NULL, d9u DECIMAL(9,2) UNSIGNED NULL, d65_0 DECIMAL(65,0) NULL
        )""",
        (
            "(1, 0, 0, 0, 0, 0, 0, 0, 0, 0)",
            f"(2, 9999999999, 9999999999.9999, {_DEC38_MAX}, {_DEC65_MAX}, 999.99, 9,"
            f" 999999999.999999999, 9999999.99, {'9' * 65})",
            f"(3, -9999999999, -9999999999.9999, -{_DEC38_MAX}, -{_DEC65_MAX}, -999.99, -9,"
            f" -999999999.999999999, 0.01, -{'9' * 65})",
            "(4, 1234567890, -12.3456, 0.00000000000000000000000000000000000001,"
            " -1.000000000000000000000000000001, 0.01, -1, 0.000000001, 1.5, 1)",
            f"(5, {_NULLS(9)})",
            "(6, -1, 1.5, -0.5, 12345678901234567890.123456789012345678901234567890, -0.01, 5,"
            " -123456789.123456789, 1234567.89, -100000000000000000000000000000000000000)",
        ),
    ),
    TableSpec(
        "t_bit",
        """CREATE TABLE {db}.t_bit (
            pk INT NOT NULL PRIMARY KEY,
            b1 BIT(1) NULL, b8 BIT(8) NULL, b9 BIT(9) NULL, b17 BIT(17) NULL, b64 BIT(64) NULL
        )""",
        (
            "(1, b'0', b'0', b'0', b'0', 0)",
            "(2, b'1', b'11111111', b'111111111', b'11111111111111111', 0xFFFFFFFFFFFFFFFF)",
            "(3, 1, 0x5A, b'100000001', 65536, 0x8000000000000001)",
            f"(4, {_NULLS(5)})",
            "(5, 0, 1, 256, 1, 1)",
        ),
    ),
    TableSpec(
        "t_date",
        """CREATE TABLE {db}.t_date (
            pk INT NOT NULL PRIMARY KEY, y YEAR NULL, d DATE NULL
        )""",
        (
            "(1, 0, '0000-00-00')",
            "(2, 1901, '1000-01-01')",
            "(3, 2155, '9999-12-31')",
            "(4, 2024, '2024-00-15')",
            "(5, 70, '2024-02-00')",
            "(6, NULL, NULL)",
            "(7, '2000', '2024-02-29')",
            "(10, 2010, '2010-10-10')",
            "(11, 2011, '2011-11-11')",
        ),
    ),
    TableSpec(
        "t_time",
        """CREATE TABLE {db}.t_time (
            pk INT NOT NULL PRIMARY KEY,
            t0 TIME NULL, t1 TIME(1) NULL, t2 TIME(2) NULL, t3 TIME(3) NULL,
            t4 TIME(4) NULL, t5 TIME(5) NULL, t6 TIME(6) NULL
        )""",
        (
            f"(1, {_per_fsp('-838:59:59', '999999')})",
            f"(2, {_per_fsp('838:59:59', '999999')})",
            f"(3, {_per_fsp('00:00:00', '000000')})",
            "(4, '-00:00:01', '-00:00:00.1', '-00:00:00.01', '-00:00:00.001', '-00:00:00.0001',"
            " '-00:00:00.00001', '-00:00:00.000001')",
            f"(5, {_per_fsp('12:34:56', '123456')})",
            f"(6, {_per_fsp('-12:34:56', '654321')})",
            f"(7, {_NULLS(7)})",
            f"(8, {_per_fsp('-01:00:00', '500000')})",
        ),
    ),
    TableSpec(
        "t_datetime",
        """CREATE TABLE {db}.t_datetime (
            pk INT NOT NULL PRIMARY KEY,
            dt0 DATETIME NULL, dt1 DATETIME(1) NULL, dt2 DATETIME(2) NULL, dt3 DATETIME(3) NULL,
            dt4 DATETIME(4) NULL, dt5 DATETIME(5) NULL, dt6 DATETIME(6) NULL
        )""",
        (
            f"(1, {_per_fsp('0000-00-00 00:00:00', '000000')})",
            f"(2, {_per_fsp('1000-01-01 00:00:00', '000001')})",
            f"(3, {_per_fsp('9999-12-31 23:59:59', '999999')})",
            f"(4, {_per_fsp('2024-02-29 12:34:56', '123456')})",
            f"(5, {_per_fsp('2024-00-00 00:00:00', '500000')})",
            f"(6, {_NULLS(7)})",
        ),
    ),
    TableSpec(
        "t_timestamp",
        """CREATE TABLE {db}.t_timestamp (
            pk INT NOT NULL PRIMARY KEY,
            ts0 TIMESTAMP NULL DEFAULT NULL, ts1 TIMESTAMP(1) NULL DEFAULT NULL,
            ts2 TIMESTAMP(2) NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL,
            ts4 TIMESTAMP(4) NULL DEFAULT NULL, ts5 TIMESTAMP(5) NULL DEFAULT NULL,
            ts6 TIMESTAMP(6) NULL DEFAULT NULL
        )""",
        (
            f"(1, {_per_fsp('0000-00-00 00:00:00', '000000')})",
            f"(2, {_per_fsp('1970-01-01 00:00:01', '000001')})",
            f"(3, {_per_fsp('2038-01-19 03:14:07', '999999')})",
            f"(4, {_per_fsp('2024-02-29 12:34:56', '123456')})",
            f"(5, {_NULLS(7)})",
        ),
    ),
    TableSpec(
        "t_temporal_old",
        """CREATE TABLE {db}.t_temporal_old (
            pk INT NOT NULL PRIMARY KEY,
            t0 TIME NULL, t3 TIME(3) NULL, t6 TIME(6) NULL,
            dt0 DATETIME NULL, dt3 DATETIME(3) NULL, dt6 DATETIME(6) NULL,
            ts0 TIMESTAMP NULL DEFAULT NULL, ts3 TIMESTAMP(3) NULL DEFAULT NULL,
            ts6 TIMESTAMP(6) NULL DEFAULT NULL
        )""",
        (
            "(1, '-838:59:59', '-838:59:59.999', '-838:59:59.999999', '0000-00-00 00:00:00',"
            " '1000-01-01 00:00:00.001', '9999-12-31 23:59:59.999999', '1970-01-01 00:00:01',"
            " '2038-01-19 03:14:07.999', '2024-02-29 12:34:56.123456')",
            "(2, '12:34:56', '-00:00:00.001', '838:59:59.999999', '2024-02-29 12:34:56',"
            " '2024-00-00 00:00:00.5', '0000-00-00 00:00:00.000000', '0000-00-00 00:00:00',"
            " '2001-02-03 04:05:06.789', '1999-12-31 23:59:59.000001')",
            f"(3, {_NULLS(9)})",
        ),
        setup=("SET GLOBAL mysql56_temporal_format = OFF",),
        teardown=("SET GLOBAL mysql56_temporal_format = ON",),
        note="created with mysql56_temporal_format=OFF: old MariaDB 5.3 TIME/DATETIME/TIMESTAMP"
        " storage (binlog types TIME/DATETIME/TIMESTAMP instead of TIME2/DATETIME2/TIMESTAMP2)",
    ),
    TableSpec(
        "t_string",
        """CREATE TABLE {db}.t_string (
            pk INT NOT NULL PRIMARY KEY,
            c10 CHAR(10) CHARACTER SET latin1 NULL,
            c255 CHAR(255) CHARACTER SET utf8mb4 NULL,
            c0 CHAR(0) NULL,
            bin8 BINARY(8) NULL,
            vc10 VARCHAR(10) CHARACTER SET latin1 NULL,
            vc300 VARCHAR(300) CHARACTER SET latin1 NULL,
            vc63 VARCHAR(63) CHARACTER SET utf8mb4 NULL,
            vc64 VARCHAR(64) CHARACTER SET utf8mb4 NULL,
            vb255 VARBINARY(255) NULL,
            vb256 VARBINARY(256) NULL
        ) DEFAULT CHARSET=utf8mb4""",
        (
            "(1, 'ab   ', 'x  ', '', X'0102', 'ab  ', '', '', '', X'00', X'0000')",
            f"(2, 'é', REPEAT('😀', 255), NULL, X'0000000000000000', 'ÿ', REPEAT('x', 300),"
            f" REPEAT('😀', 63), REPEAT('€', 64), {_hex(_ALL_BYTES[1:])}, {_hex(_ALL_BYTES)})",
            f"(3, {_NULLS(10)})",
            "(4, '', '', '', 'abcdefgh', '', 'a', 'ü', 'ab', '', '')",
            "(5, '0123456789', REPEAT('a', 255), '', X'ff00ff0000000000', 'xyz', 'tail  ',"
            " 'tab\\tnl\\n', CONCAT('q', REPEAT(' ', 10)), X'616200', X'ff')",
        ),
    ),
    TableSpec(
        "t_charset",
        """CREATE TABLE {db}.t_charset (
            pk INT NOT NULL PRIMARY KEY,
            a_ascii VARCHAR(10) CHARACTER SET ascii NULL,
            u8mb3 VARCHAR(10) CHARACTER SET utf8mb3 NULL,
            ucs2 CHAR(5) CHARACTER SET ucs2 NULL,
            u16 VARCHAR(10) CHARACTER SET utf16 NULL,
            u16le VARCHAR(10) CHARACTER SET utf16le NULL,
            u32 CHAR(5) CHARACTER SET utf32 NULL,
            cp1251 VARCHAR(10) CHARACTER SET cp1251 NULL,
            sjis VARCHAR(10) CHARACTER SET sjis NULL,
            nopad VARCHAR(10) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin NULL,
            bin_coll TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NULL
        ) DEFAULT CHARSET=latin1""",
        (
            "(1, 'abc', 'ñ€', 'Zoë', '𝄞x', '𝄞x', '𝄞', 'Привет', 'ｶﾀｶﾅ', 'pad  ', 'Ǆ')",
            f"(2, {_NULLS(10)})",
            "(3, '', '', '', '', '', '', '', '', '', '')",
        ),
    ),
    TableSpec(
        "t_blob",
        """CREATE TABLE {db}.t_blob (
            pk INT NOT NULL PRIMARY KEY,
            tb TINYBLOB NULL, b BLOB NULL, mb MEDIUMBLOB NULL, lb LONGBLOB NULL,
            tt TINYTEXT NULL, t TEXT NULL, mt MEDIUMTEXT NULL, lt LONGTEXT NULL,
            tlat TEXT CHARACTER SET latin1 NULL
        ) DEFAULT CHARSET=utf8mb4""",
        (
            "(1, '', '', '', '', '', '', '', '', '')",
            f"(2, {_hex(_ALL_BYTES[:255])}, REPEAT('b', 300), REPEAT('0123456789', 6600),"
            " X'00ff00', REPEAT('t', 255), REPEAT('é', 200), 'medium', 'long 😀', 'café')",
            f"(3, {_NULLS(9)})",
            "(4, X'00', X'0000', 'mb', 'lb', 'é', 'text', REPEAT('m', 300), REPEAT('L', 1000), '')",
        ),
    ),
    TableSpec(
        "t_enum_set",
        f"""CREATE TABLE {{db}}.t_enum_set (
            pk INT NOT NULL PRIMARY KEY,
            e ENUM('a','b','c') NULL,
            e300 ENUM({_ENUM300}) NULL,
            s SET('x','y','z') NULL,
            s9 SET({_SET9}) NULL,
            s17 SET({_SET17}) NULL,
            s64 SET({_SET64}) NULL,
            el ENUM('é','ü') CHARACTER SET latin1 NULL
        )""",
        (
            "(1, 'a', 'v000', '', '', '', '', 'é')",
            f"(2, 'c', 'v299', 'x,y,z', 's0,s8', 't00,t16', '{_SET64_ALL}', 'ü')",
            "(3, 'zzz', 'v255', 'z', 's8', 't08', 'm00,m63', NULL)",
            f"(4, {_NULLS(7)})",
            "(5, 2, 256, 5, 511, 65536, 'm31,m32', 1)",
        ),
        note="row 3 stores an invalid ENUM value (index 0, shown as '')",
    ),
    TableSpec(
        "t_json",
        """CREATE TABLE {db}.t_json (
            pk INT NOT NULL PRIMARY KEY, j JSON NULL
        )""",
        (
            """(1, '{"a": [1, 2.5, "x", null, true, false], "b": {"c": {}}}')""",
            "(2, '[]')",
            """(3, '"str"')""",
            "(4, 'null')",
            "(5, NULL)",
            """(6, '{"k": "é😀", "n": -1.5e300, "big": 18446744073709551616}')""",
        ),
    ),
    TableSpec(
        "t_geo",
        """CREATE TABLE {db}.t_geo (
            pk INT NOT NULL PRIMARY KEY,
            g GEOMETRY NULL, p POINT REF_SYSTEM_ID=4326 NULL, ls LINESTRING NULL,
            poly POLYGON NULL, mp MULTIPOINT NULL, mls MULTILINESTRING NULL,
            mpoly MULTIPOLYGON NULL, gc GEOMETRYCOLLECTION NULL
        )""",
        (
            "(1, ST_GeomFromText('POINT(1 2)'), ST_GeomFromText('POINT(-71.06 42.36)', 4326),"
            " ST_GeomFromText('LINESTRING(0 0,1 1,2 2)'),"
            " ST_GeomFromText('POLYGON((0 0,10 0,10 10,0 10,0 0))'),"
            " ST_GeomFromText('MULTIPOINT(1 1,2 2)'),"
            " ST_GeomFromText('MULTILINESTRING((0 0,1 1),(2 2,3 3))'),"
            " ST_GeomFromText('MULTIPOLYGON(((0 0,1 0,1 1,0 0)))'),"
            " ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1),LINESTRING(0 0,1 1))'))",
            "(2, ST_GeomFromText('POLYGON((0 0,4 0,4 4,0 4,0 0),(1 1,2 1,2 2,1 2,1 1))', 3857),"
            " ST_GeomFromText('POINT(0 0)', 4326), NULL, NULL, NULL, NULL, NULL, NULL)",
            f"(3, {_NULLS(8)})",
            "(4, ST_GeomFromText('POINT(4 4)'), NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
        ),
    ),
    TableSpec(
        "t_inet_uuid",
        """CREATE TABLE {db}.t_inet_uuid (
            pk INT NOT NULL PRIMARY KEY, i4 INET4 NULL, i6 INET6 NULL, u UUID NULL
        )""",
        (
            "(1, '0.0.0.0', '::', '00000000-0000-0000-0000-000000000000')",
            "(2, '255.255.255.255', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',"
            " 'ffffffff-ffff-ffff-ffff-ffffffffffff')",
            "(3, '192.0.2.1', '::ffff:192.0.2.1', '6ccd780c-baba-1026-9564-5b8c656024db')",
            "(4, '10.1.2.3', '2001:db8::ff00:42:8329', 'f47ac10b-58cc-4372-a567-0e02b2c3d479')",
            "(5, NULL, NULL, NULL)",
            "(6, '127.0.0.1', '::1', '01890a5d-ac96-774b-bcce-b302099a8057')",
        ),
        note="UUID v1 (row 3), v4 (row 4), v7 (row 6); 10.11.19 binlogs all of them as the"
        " 16 bytes in text order (INET4/INET6/UUID appear as fixed STRING columns)",
    ),
    TableSpec(
        "t_generated",
        """CREATE TABLE {db}.t_generated (
            pk INT NOT NULL PRIMARY KEY,
            a INT NULL,
            v INT AS (a * 2) VIRTUAL,
            st VARCHAR(20) AS (CONCAT('s', a)) PERSISTENT,
            inv INT INVISIBLE NULL DEFAULT 7,
            def_c VARCHAR(10) NOT NULL DEFAULT 'dflt'
        )""",
        (
            "(1, 10, DEFAULT, DEFAULT, 'given')",
            "(2, NULL, DEFAULT, DEFAULT, '')",
        ),
        note="VIRTUAL, PERSISTENT (stored) and INVISIBLE columns",
    ),
    TableSpec(
        "t_myisam",
        """CREATE TABLE {db}.t_myisam (
            pk INT NOT NULL PRIMARY KEY, v VARCHAR(20) NULL, n BIGINT NULL
        ) ENGINE=MyISAM""",
        ("(1, 'non-transactional', 1)", "(2, NULL, NULL)"),
        note="non-transactional engine: event groups end with a COMMIT query, not XID",
    ),
    TableSpec(
        "t_stmt",
        """CREATE TABLE {db}.t_stmt (
            pk INT NOT NULL AUTO_INCREMENT PRIMARY KEY,
            note VARCHAR(40) NOT NULL, n BIGINT NULL, s VARCHAR(200) NULL
        )""",
        (),
        note="filled by the statement-based section",
    ),
    TableSpec(
        "t_load",
        """CREATE TABLE {db}.t_load (
            pk INT NOT NULL PRIMARY KEY, a VARCHAR(200) NULL, b INT NULL
        )""",
        (),
        note="filled by LOAD DATA INFILE in statement format",
    ),
)

#: Content of the file loaded by ``LOAD DATA INFILE``: > 2 x 16 KiB, so the
#: server logs BEGIN_LOAD_QUERY (first 16 KiB block), two APPEND_BLOCK and
#: EXECUTE_LOAD_QUERY.
LOAD_DATA_CONTENT = "".join(
    f"{i}\tload-row-{i:04d}-{'x' * (100 + i % 7)}\t{i * i}\n" for i in range(1, 301)
).encode()

CODEC_STEPS: tuple[Step, ...] = (
    Step(
        "multi-row UPDATE",
        (
            "UPDATE {db}.t_int SET i = i - 1, bi = bi + 1 WHERE pk IN (3, 5, 6)",
            "UPDATE {db}.t_string SET vc10 = CONCAT(vc10, '!'), bin8 = X'AA' WHERE pk IN (1, 4)",
            "UPDATE {db}.t_time SET t3 = '-00:00:00.999', t6 = '01:02:03.000004' WHERE pk IN (3, 5)",
            "UPDATE {db}.t_blob SET tb = X'01', lt = NULL WHERE pk IN (1, 4)",
            "UPDATE {db}.t_json SET j = '{\"updated\": true}' WHERE pk IN (2, 4)",
        ),
    ),
    Step(
        "multi-row DELETE",
        (
            "DELETE FROM {db}.t_float WHERE pk IN (7, 8)",
            "DELETE FROM {db}.t_date WHERE pk IN (10, 11)",
            "DELETE FROM {db}.t_geo WHERE pk = 4",
        ),
    ),
    Step(
        "several tables in one transaction",
        (
            "BEGIN",
            "UPDATE {db}.t_decimal SET d14_4 = d14_4 + 1, d65_30 = -d65_30 WHERE pk IN (1, 4)",
            "INSERT INTO {db}.t_date VALUES (8, 1999, '1999-12-31'), (9, 0, '0000-01-01')",
            "DELETE FROM {db}.t_bit WHERE pk = 3",
            "UPDATE {db}.t_enum_set SET s = 'y', e300 = 'v128' WHERE pk = 1",
            "INSERT INTO {db}.t_inet_uuid VALUES (7, '1.2.3.4', 'fe80::1', UUID())",
            "COMMIT",
        ),
    ),
    Step(
        "multi-table UPDATE and savepoint",
        (
            "UPDATE {db}.t_int a JOIN {db}.t_decimal b ON a.pk = b.pk"
            " SET a.si = a.si + 0, a.tiu = 9, b.d5_2 = 1.25 WHERE a.pk = 1",
            "BEGIN",
            "INSERT INTO {db}.t_generated (pk, a) VALUES (3, 3)",
            "SAVEPOINT sp1",
            "INSERT INTO {db}.t_generated (pk, a) VALUES (4, 4)",
            "ROLLBACK TO SAVEPOINT sp1",
            "UPDATE {db}.t_generated SET a = 30, inv = 70 WHERE pk = 3",
            "COMMIT",
            "INSERT INTO {db}.t_myisam VALUES (3, 'after', 3)",
            "UPDATE {db}.t_myisam SET n = n + 1 WHERE pk IN (1, 3)",
        ),
    ),
    Step(
        "DDL",
        (
            "ALTER TABLE {db}.t_enum_set ADD COLUMN extra VARCHAR(20) NULL DEFAULT 'added'",
            "CREATE INDEX ix_i ON {db}.t_int (i)",
            "INSERT INTO {db}.t_enum_set (pk, e, extra) VALUES (6, 'b', 'post-ddl')",
            "CREATE TABLE {db}.t_scratch (pk INT PRIMARY KEY, x INT)",
            "INSERT INTO {db}.t_scratch VALUES (1, 1)",
            "DROP TABLE {db}.t_scratch",
        ),
    ),
    Step(
        "XA transactions",
        (
            "XA START 'fm-xa-1'",
            "INSERT INTO {db}.t_json VALUES (10, '{\"xa\": 1}')",
            "UPDATE {db}.t_int SET ti = 11 WHERE pk = 5",
            "XA END 'fm-xa-1'",
            "XA PREPARE 'fm-xa-1'",
            "XA COMMIT 'fm-xa-1'",
            "XA START X'01ff00', 'branch', 7",
            'INSERT INTO {db}.t_json VALUES (11, \'{"xa": "rolled back"}\')',
            "XA END X'01ff00', 'branch', 7",
            "XA PREPARE X'01ff00', 'branch', 7",
            "XA ROLLBACK X'01ff00', 'branch', 7",
            "XA START 'fm-xa-3'",
            'INSERT INTO {db}.t_json VALUES (12, \'{"xa": "one phase"}\')',
            "XA END 'fm-xa-3'",
            "XA COMMIT 'fm-xa-3' ONE PHASE",
        ),
    ),
    Step(
        "statement-based: INTVAR, RAND, USER_VAR",
        (
            "SET SESSION binlog_format = 'STATEMENT'",
            "INSERT INTO {db}.t_stmt (note) VALUES ('auto-inc')",
            "INSERT INTO {db}.t_stmt (note, n) VALUES ('last-insert-id', LAST_INSERT_ID())",
            "INSERT INTO {db}.t_stmt (note, n) VALUES ('rand', FLOOR(RAND() * 1000000))",
            "SET @s = 'héllo', @i = -42, @u = CAST(18446744073709551615 AS UNSIGNED),"
            " @d = 3.14, @r = 1.5e0, @n = NULL, @b = X'00ff'",
            "INSERT INTO {db}.t_stmt (note, n, s) VALUES ('user-vars', @i,"
            " CONCAT_WS('|', @s, @u, @d, @r, IFNULL(@n, 'null'), HEX(@b)))",
            "UPDATE {db}.t_stmt SET s = CONCAT('upd-', note) WHERE note = 'auto-inc'",
            "INSERT INTO {db}.t_stmt (note, n) VALUES ('delete-me', 0)",
            "DELETE FROM {db}.t_stmt WHERE note = 'delete-me'",
        ),
    ),
    Step(
        "statement-based: LOAD DATA INFILE",
        (
            # The file is logged in blocks sized by the GLOBAL read_buffer_size
            # (at least 16 KiB); the session value does not matter.
            "SET @fm_saved_rbs = @@GLOBAL.read_buffer_size",
            "SET GLOBAL read_buffer_size = 8192",
            "LOAD DATA INFILE '" + LOAD_FILE_TOKEN + "' INTO TABLE {db}.t_load"
            " FIELDS TERMINATED BY '\\t' LINES TERMINATED BY '\\n' (pk, a, b)",
            "SET GLOBAL read_buffer_size = @fm_saved_rbs",
            "SET SESSION binlog_format = 'ROW'",
        ),
    ),
    Step("rotation", ("FLUSH BINARY LOGS",)),
    Step(
        "after rotation",
        (
            "INSERT INTO {db}.t_int VALUES (7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 1, 7)",
            "DELETE FROM {db}.t_int WHERE pk = 8",
            "CREATE TABLE {db}.t_ctas ENGINE=InnoDB AS SELECT pk, i, bi, zf FROM {db}.t_int",
        ),
    ),
)

HUGE_ROW_STEPS: tuple[Step, ...] = (
    Step(
        "huge row (> 16 MiB)",
        (
            "CREATE TABLE {db}.t_huge (pk INT NOT NULL PRIMARY KEY, lb LONGBLOB NULL)",
            f"INSERT INTO {{db}}.t_huge VALUES (1, {HUGE_ROW_SQL}), (2, 'small')",
        ),
    ),
)

# -- binlog_row_image=MINIMAL / NOBLOB -------------------------------------

MINIMAL_TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "m_pk",
        """CREATE TABLE {db}.m_pk (
            pk INT NOT NULL PRIMARY KEY, a INT NULL, b VARCHAR(20) NULL, c TEXT NULL,
            d BLOB NULL, e DATETIME(3) NULL, f DECIMAL(10,2) NULL
        )""",
        (
            "(1, 1, 'one', 'text1', X'01', '2024-01-01 00:00:00.001', 1.10)",
            "(2, 2, 'two', NULL, X'02', '2024-01-02 00:00:00.002', -2.20)",
            "(3, 3, 'three', 'text3', NULL, NULL, 3.30)",
            "(4, NULL, NULL, NULL, NULL, NULL, NULL)",
            "(5, 5, 'five', REPEAT('c', 300), REPEAT('d', 300), '2024-01-05 00:00:00', 5)",
        ),
    ),
    TableSpec(
        "m_nopk",
        """CREATE TABLE {db}.m_nopk (a INT NULL, b VARCHAR(20) NULL, c DOUBLE NULL)""",
        ("(1, 'a', 1.5)", "(2, 'b', NULL)", "(2, 'b', NULL)", "(NULL, NULL, NULL)"),
        note="no key at all: MINIMAL before images carry every column",
    ),
    TableSpec(
        "m_uk",
        """CREATE TABLE {db}.m_uk (
            u INT NOT NULL, v VARCHAR(20) NULL, w BIGINT NULL, UNIQUE KEY uk (u)
        )""",
        ("(10, 'ten', 100)", "(20, 'twenty', 200)", "(30, NULL, NULL)"),
        note="NOT NULL unique key, no primary key",
    ),
    TableSpec(
        "m_auto",
        """CREATE TABLE {db}.m_auto (
            pk INT NOT NULL AUTO_INCREMENT PRIMARY KEY, a INT NOT NULL DEFAULT 5,
            b VARCHAR(10) NULL DEFAULT 'dflt', c TIMESTAMP(6) NULL DEFAULT NULL
        )""",
        (),
    ),
)

MINIMAL_STEPS: tuple[Step, ...] = (
    Step(
        "partial inserts",
        (
            "INSERT INTO {db}.m_auto (a) VALUES (1), (2)",
            "INSERT INTO {db}.m_auto () VALUES ()",
            "INSERT INTO {db}.m_auto (b, c) VALUES ('x', '2024-01-01 00:00:00.5')",
        ),
    ),
    Step(
        "updates touching few columns",
        (
            "UPDATE {db}.m_pk SET a = a + 100 WHERE pk <= 2",
            "UPDATE {db}.m_pk SET c = 'changed', d = NULL WHERE pk = 3",
            "UPDATE {db}.m_pk SET b = 'fourth' WHERE pk = 4",
            "UPDATE {db}.m_pk SET e = NULL, f = 0 WHERE pk = 5",
            "UPDATE {db}.m_pk SET pk = 50 WHERE pk = 5",
            "UPDATE {db}.m_nopk SET c = 2.5 WHERE a = 1",
            "UPDATE {db}.m_nopk SET b = 'bb' WHERE a = 2",
            "UPDATE {db}.m_uk SET v = 'TEN' WHERE u = 10",
            "UPDATE {db}.m_uk SET u = 21 WHERE u = 20",
            "UPDATE {db}.m_auto SET b = NULL WHERE pk = 1",
        ),
    ),
    Step(
        "deletes",
        (
            "DELETE FROM {db}.m_pk WHERE pk IN (1, 4)",
            "DELETE FROM {db}.m_nopk WHERE a IS NULL",
            "DELETE FROM {db}.m_uk WHERE u = 30",
        ),
    ),
    Step(
        "mixed transaction",
        (
            "BEGIN",
            "INSERT INTO {db}.m_pk (pk, a) VALUES (6, 6)",
            "UPDATE {db}.m_nopk SET a = 3 WHERE c = 2.5",
            "DELETE FROM {db}.m_auto WHERE pk = 2",
            "COMMIT",
        ),
    ),
)

# -- log_bin_compress=ON ----------------------------------------------------

COMPRESSED_TABLES: tuple[TableSpec, ...] = (
    TableSpec(
        "c_text",
        """CREATE TABLE {db}.c_text (
            pk INT NOT NULL PRIMARY KEY, t MEDIUMTEXT NULL, b BLOB NULL, n INT NULL
        )""",
        (
            "(1, REPEAT('compressible ', 1000), REPEAT(X'00010203', 500), 1)",
            "(2, 'short', X'00', 2)",
            "(3, NULL, NULL, NULL)",
        ),
    ),
)

COMPRESSED_STEPS: tuple[Step, ...] = (
    Step(
        "compressed rows and queries",
        (
            "UPDATE {db}.c_text SET n = n + 1, t = CONCAT(t, '!') WHERE pk IN (1, 2)",
            "DELETE FROM {db}.c_text WHERE pk = 3",
            "SET SESSION binlog_format = 'STATEMENT'",
            "INSERT INTO {db}.c_text VALUES (4, REPEAT('statement ', 300), NULL, 4)",
            "SET SESSION binlog_format = 'ROW'",
            "INSERT INTO {db}.c_text (pk, n) VALUES (5, 5)",
        ),
    ),
)


# ===========================================================================
# results
# ===========================================================================


@dataclass
class ColumnInfo:
    """One row of information_schema.COLUMNS (+ the collation's numeric id)."""

    name: str
    ordinal_position: int
    column_type: str  # e.g. "int(10) unsigned", "enum('a','b')"
    data_type: str  # e.g. "int", "varchar", "longtext" (JSON), "inet6"
    is_nullable: bool
    character_set_name: str | None
    collation_name: str | None
    collation_id: int | None
    character_maximum_length: int | None
    character_octet_length: int | None
    numeric_precision: int | None
    numeric_scale: int | None
    datetime_precision: int | None
    column_key: str  # "PRI", "UNI", "MUL" or ""
    extra: str  # "VIRTUAL GENERATED", "STORED GENERATED", "INVISIBLE", "auto_increment", ...

    @property
    def unsigned(self) -> bool:
        return " unsigned" in self.column_type

    @property
    def generated(self) -> bool:
        return "GENERATED" in self.extra


@dataclass
class TableResult:
    schema: str
    name: str
    engine: str
    create_table: str  # SHOW CREATE TABLE
    columns: list[ColumnInfo]
    order_by: list[str]
    rows: list[tuple[bytes | None, ...]]  # raw text-protocol bytes, see module doc

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> ColumnInfo:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(name)

    def rows_as_dicts(self) -> list[dict[str, bytes | None]]:
        names = self.column_names
        return [dict(zip(names, r, strict=True)) for r in self.rows]


@dataclass
class WorkloadResult:
    variant: str
    version: str
    server_variables: dict[str, str]
    tables: dict[str, TableResult]  # key: table name (all in DATABASE)
    binlog_files: list[str]  # file names at the end of the workload, oldest first
    gtid_binlog_pos: str
    steps: list[str]
    huge_row: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    def table(self, name: str) -> TableResult:
        return self.tables[name]

    def temporal_precisions(self) -> dict[tuple[str, str], tuple[int, ...]]:
        """Fractional-second precisions of the tables with MariaDB 5.3-format temporal
        columns, in the form ``BinlogContext.temporal_precisions`` takes: the binlog carries
        no metadata for those columns, so a decoder needs them from the schema."""
        return {
            (table.schema, table.name): tuple(c.datetime_precision or 0 for c in table.columns)
            for table in self.tables.values()
            if any("mariadb-5.3" in c.column_type for c in table.columns)
        }

    # -- JSON (golden files) -------------------------------------------------

    def to_json_dict(self) -> dict[str, Any]:
        """JSON-able dict; cells are ``null``, a ``str`` (the raw bytes were
        valid UTF-8 without control characters other than TAB/LF/CR) or
        ``{"hex": "..."}``.  :meth:`from_json_dict` restores the bytes."""
        return {
            "format": "fakemaster-workload-result/1",
            "variant": self.variant,
            "version": self.version,
            "server_variables": self.server_variables,
            "binlog_files": self.binlog_files,
            "gtid_binlog_pos": self.gtid_binlog_pos,
            "steps": self.steps,
            "huge_row": self.huge_row,
            "extra": self.extra,
            "tables": {
                name: {
                    "schema": t.schema,
                    "name": t.name,
                    "engine": t.engine,
                    "create_table": t.create_table,
                    "columns": [asdict(c) for c in t.columns],
                    "order_by": t.order_by,
                    "rows": [[_cell_to_json(v) for v in row] for row in t.rows],
                }
                for name, t in self.tables.items()
            },
        }

    @classmethod
    def from_json_dict(cls, d: dict[str, Any]) -> WorkloadResult:
        tables = {}
        for name, t in d["tables"].items():
            tables[name] = TableResult(
                schema=t["schema"],
                name=t["name"],
                engine=t["engine"],
                create_table=t["create_table"],
                columns=[ColumnInfo(**c) for c in t["columns"]],
                order_by=list(t["order_by"]),
                rows=[tuple(_cell_from_json(v) for v in row) for row in t["rows"]],
            )
        return cls(
            variant=d["variant"],
            version=d["version"],
            server_variables=dict(d["server_variables"]),
            tables=tables,
            binlog_files=list(d["binlog_files"]),
            gtid_binlog_pos=d["gtid_binlog_pos"],
            steps=list(d["steps"]),
            huge_row=bool(d.get("huge_row", False)),
            extra=dict(d.get("extra", {})),
        )

    def dumps(self) -> str:
        """Indented JSON with one line per column and per row."""
        d = self.to_json_dict()
        compact: dict[str, list[Any]] = {}
        for tname, t in d["tables"].items():
            for part in ("columns", "rows"):
                marker = f"@@{part}:{tname}@@"
                compact[marker] = t[part]
                t[part] = marker
        text = json.dumps(d, indent=1, ensure_ascii=False)
        for marker, items in compact.items():
            body = (
                "[\n"
                + ",\n".join("    " + json.dumps(i, ensure_ascii=False) for i in items)
                + "\n   ]"
                if items
                else "[]"
            )
            text = text.replace(json.dumps(marker), body, 1)
        return text + "\n"

    @classmethod
    def loads(cls, text: str) -> WorkloadResult:
        return cls.from_json_dict(json.loads(text))


_SAFE_CONTROLS = {"\t", "\n", "\r"}


def _cell_to_json(v: bytes | None) -> Any:
    if v is None:
        return None
    try:
        s = v.decode("utf-8")
    except UnicodeDecodeError:
        return {"hex": v.hex()}
    if any((ord(ch) < 0x20 and ch not in _SAFE_CONTROLS) or ord(ch) == 0x7F for ch in s):
        return {"hex": v.hex()}
    return s


def _cell_from_json(v: Any) -> bytes | None:
    if v is None:
        return None
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, dict) and "hex" in v:
        return bytes.fromhex(v["hex"])
    if isinstance(v, dict) and "b64" in v:
        return base64.b64decode(v["b64"])
    raise ValueError(f"bad cell {v!r}")


# ===========================================================================
# running
# ===========================================================================

#: Session settings of the workload connection.
SESSION_SETUP: tuple[str, ...] = (
    "SET SESSION sql_mode = ''",
    "SET SESSION time_zone = '+00:00'",
)

_SERVER_VARIABLES = (
    "version",
    "version_comment",
    "server_id",
    "binlog_format",
    "binlog_row_image",
    "binlog_row_metadata",
    "binlog_checksum",
    "binlog_annotate_row_events",
    "log_bin_compress",
    "log_bin_compress_min_len",
    "log_bin_basename",
    "gtid_domain_id",
    "character_set_server",
    "collation_server",
    "time_zone",
    "max_allowed_packet",
    "encrypt_binlog",
)


def _format_sql(sql: str, load_file: str | None) -> str:
    sql = sql.replace("{db}", DATABASE)
    if LOAD_FILE_TOKEN in sql:
        if load_file is None:
            raise ValueError("LOAD DATA step needs a load file")
        sql = sql.replace(LOAD_FILE_TOKEN, load_file.replace("\\", "\\\\").replace("'", "\\'"))
    return sql


def workload_statements(
    tables: Iterable[TableSpec], steps: Iterable[Step], load_file: str | None = None
) -> list[tuple[str, list[str]]]:
    """The (step name, statements) list a workload runs, fully rendered."""
    out: list[tuple[str, list[str]]] = [
        (
            "create database",
            [
                f"DROP DATABASE IF EXISTS {DATABASE}",
                f"CREATE DATABASE {DATABASE} CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci",
            ],
        )
    ]
    tables = list(tables)
    for t in tables:
        stmts = [*t.setup, t.ddl, *t.teardown]
        out.append((f"create {t.name}", [_format_sql(s, load_file) for s in stmts]))
    for t in tables:
        if t.rows:
            sql = f"INSERT INTO {DATABASE}.{t.name} VALUES\n  " + ",\n  ".join(t.rows)
            out.append((f"insert {t.name}", [sql]))
    for step in steps:
        out.append((step.name, [_format_sql(s, load_file) for s in step.sql]))
    return out


def run_workload(
    server: MariaDBServer,
    tables: Sequence[TableSpec],
    steps: Sequence[Step],
    *,
    variant: str,
) -> WorkloadResult:
    """Run ``tables`` + ``steps`` on one session and collect the ground truth."""
    load_file: str | None = None
    if any(LOAD_FILE_TOKEN in s for step in steps for s in step.sql):
        path = server.files_dir / "fm_load.tsv"
        path.write_bytes(LOAD_DATA_CONTENT)
        load_file = str(path)
    plan = workload_statements(tables, steps, load_file)
    conn = server.connect()
    try:
        with conn.cursor() as cur:
            for stmt in SESSION_SETUP:
                cur.execute(stmt)
            for name, stmts in plan:
                for stmt in stmts:
                    try:
                        cur.execute(stmt)
                    except Exception as e:
                        raise RuntimeError(
                            f"workload step {name!r} failed on {stmt[:300]!r}: {e}"
                        ) from e
    finally:
        conn.close()
    # The binlog as the workload leaves it, not as it is a moment later when the server has
    # written the checkpoint of the rotation in the background: what readers compare.
    server.wait_for_binlog_checkpoint()
    return collect_result(server, variant=variant, steps=[name for name, _ in plan])


def raw_connection(server: MariaDBServer, **kw: Any) -> Any:
    """A pymysql connection returning every value as raw ``bytes`` (or None).

    ``use_unicode=False`` + a ``conv`` with no field-type decoders + no
    result charset conversion (``character_set_results = NULL``).
    """
    import pymysql.converters

    encoders = {k: v for k, v in pymysql.converters.conversions.items() if not isinstance(k, int)}
    conn = server.connect(conv=encoders, use_unicode=False, **kw)
    with conn.cursor() as cur:
        cur.execute("SET SESSION character_set_results = NULL")
        cur.execute("SET SESSION time_zone = '+00:00'")
        cur.execute("SET SESSION sql_mode = ''")
    return conn


def _q(ident: str) -> str:
    return "`" + ident.replace("`", "``") + "`"


def fetch_columns(conn: Any, schema: str, table: str) -> list[ColumnInfo]:
    with conn.cursor() as cur:
        cur.execute(
            "SELECT c.COLUMN_NAME, c.ORDINAL_POSITION, c.COLUMN_TYPE, c.DATA_TYPE, c.IS_NULLABLE,"
            " c.CHARACTER_SET_NAME, c.COLLATION_NAME, co.ID, c.CHARACTER_MAXIMUM_LENGTH,"
            " c.CHARACTER_OCTET_LENGTH, c.NUMERIC_PRECISION, c.NUMERIC_SCALE,"
            " c.DATETIME_PRECISION, c.COLUMN_KEY, c.EXTRA"
            " FROM information_schema.COLUMNS c"
            " LEFT JOIN information_schema.COLLATIONS co ON co.COLLATION_NAME = c.COLLATION_NAME"
            " WHERE c.TABLE_SCHEMA = %s AND c.TABLE_NAME = %s ORDER BY c.ORDINAL_POSITION",
            (schema, table),
        )
        rows = cur.fetchall()

    def _int(v: Any) -> int | None:
        return None if v is None else int(v)

    def _str(v: Any) -> str | None:
        if v is None:
            return None
        return v.decode() if isinstance(v, bytes) else str(v)

    return [
        ColumnInfo(
            name=str(_str(r[0])),
            ordinal_position=int(r[1]),
            column_type=str(_str(r[2])),
            data_type=str(_str(r[3])),
            is_nullable=_str(r[4]) == "YES",
            character_set_name=_str(r[5]),
            collation_name=_str(r[6]),
            collation_id=_int(r[7]),
            character_maximum_length=_int(r[8]),
            character_octet_length=_int(r[9]),
            numeric_precision=_int(r[10]),
            numeric_scale=_int(r[11]),
            datetime_precision=_int(r[12]),
            column_key=str(_str(r[13]) or ""),
            extra=str(_str(r[14]) or ""),
        )
        for r in rows
    ]


def fetch_raw_rows(
    raw_conn: Any, schema: str, table: str, columns: Sequence[ColumnInfo]
) -> tuple[list[str], list[tuple[bytes | None, ...]]]:
    """Rows of ``schema.table`` as raw bytes; returns (order_by, rows)."""
    names = [c.name for c in columns]
    order_by = ["pk"] if "pk" in names else names
    sql = (
        f"SELECT {', '.join(_q(n) for n in names)} FROM {_q(schema)}.{_q(table)}"
        f" ORDER BY {', '.join(_q(n) for n in order_by)}"
    )
    with raw_conn.cursor() as cur:
        cur.execute(sql)
        rows = [tuple(r) for r in cur.fetchall()]
    return order_by, rows


def collect_result(
    server: MariaDBServer, *, variant: str, steps: list[str], schema: str = DATABASE
) -> WorkloadResult:
    meta = server.connect()
    raw = raw_connection(server)
    try:
        with meta.cursor() as cur:
            cur.execute(
                "SELECT TABLE_NAME, ENGINE FROM information_schema.TABLES"
                " WHERE TABLE_SCHEMA = %s AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
                (schema,),
            )
            table_rows = [(str(n), str(e)) for n, e in cur.fetchall()]
            variables = {}
            for var in _SERVER_VARIABLES:
                try:
                    cur.execute(f"SELECT @@GLOBAL.{var}")
                    variables[var] = str(cur.fetchone()[0])
                except Exception:
                    variables[var] = ""
            # no machine-specific paths in the (golden) results
            variables = {k: v.replace(str(server.root), "<tmp>") for k, v in variables.items()}
            cur.execute("SELECT VERSION(), @@GLOBAL.gtid_binlog_pos")
            version, gtid_pos = cur.fetchone()
            cur.execute("SHOW BINARY LOGS")
            binlogs = [str(r[0]) for r in cur.fetchall()]
        tables: dict[str, TableResult] = {}
        for name, engine in table_rows:
            columns = fetch_columns(meta, schema, name)
            with meta.cursor() as cur:
                cur.execute(f"SHOW CREATE TABLE {_q(schema)}.{_q(name)}")
                create = str(cur.fetchone()[1])
            order_by, rows = fetch_raw_rows(raw, schema, name, columns)
            tables[name] = TableResult(schema, name, engine, create, columns, order_by, rows)
    finally:
        meta.close()
        raw.close()
    return WorkloadResult(
        variant=variant,
        version=str(version),
        server_variables=variables,
        tables=tables,
        binlog_files=binlogs,
        gtid_binlog_pos=str(gtid_pos),
        steps=steps,
    )


def _check_variable(server: MariaDBServer, var: str, expected: str) -> None:
    actual = str(server.query_one(f"SELECT @@GLOBAL.{var}"))
    if actual.upper() not in {expected.upper(), {"ON": "1", "OFF": "0"}.get(expected.upper(), "")}:
        raise ValueError(
            f"this workload needs a server started with {var}={expected} (it has {var}={actual})"
        )


# -- public entry points -----------------------------------------------------


def run_codec_workload(
    server: MariaDBServer, huge_row: bool = False, *, variant: str = "default"
) -> WorkloadResult:
    """Every column type + DML/DDL/XA/statement-based/LOAD DATA/rotation.

    Needs the server's default options (``binlog_format=ROW``); with
    ``huge_row`` also a row with a LONGBLOB > 16 MiB (needs
    ``max_allowed_packet`` >= 64M, the harness default).
    """
    steps = CODEC_STEPS + (HUGE_ROW_STEPS if huge_row else ())
    result = run_workload(server, CODEC_TABLES, steps, variant=variant)
    result.huge_row = huge_row
    return result


def run_full_metadata_workload(server: MariaDBServer, huge_row: bool = False) -> WorkloadResult:
    """The codec workload on a server with ``binlog_row_metadata=FULL``."""
    _check_variable(server, "binlog_row_metadata", "FULL")
    return run_codec_workload(server, huge_row, variant="full_metadata")


def run_minimal_image_workload(
    server: MariaDBServer, *, variant: str = "minimal"
) -> WorkloadResult:
    """Partial row images; for a server with ``binlog_row_image=MINIMAL``
    (also meaningful with ``NOBLOB``)."""
    image = str(server.query_one("SELECT @@GLOBAL.binlog_row_image")).upper()
    if image not in ("MINIMAL", "NOBLOB"):
        raise ValueError(f"needs binlog_row_image=MINIMAL or NOBLOB (server has {image})")
    return run_workload(server, MINIMAL_TABLES, MINIMAL_STEPS, variant=variant)


def run_compressed_workload(
    server: MariaDBServer, *, include_codec: bool = True, variant: str = "compressed"
) -> WorkloadResult:
    """For ``log_bin_compress=ON`` (+ ``log_bin_compress_min_len=10``): every
    query and rows event is big enough to be written as QUERY_COMPRESSED /
    *_ROWS_COMPRESSED_V1.  ``include_codec`` also runs the codec workload."""
    _check_variable(server, "log_bin_compress", "ON")
    tables = (CODEC_TABLES if include_codec else ()) + COMPRESSED_TABLES
    steps = (CODEC_STEPS if include_codec else ()) + COMPRESSED_STEPS
    return run_workload(server, tables, steps, variant=variant)
