"""UUID/INET4/INET6 columns declared by the binlog's own CREATE TABLE: the materialiser gives
them the server's text without a catalogue (the TABLE_MAP logs them as BINARY(n))."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fakemaster.spark.declared_types import declared_kinds, fixed_binary_text, with_declared_types
from scenarios.create_table import parse_create_table
from tests.support.spark_tables import read_tables

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "table_kinds"

# Pairs a real MariaDB 10.11 gave: the bytes its binlog logged (as the decoder's image text,
# BINARY(n) padded) and the text its SELECT printed for the same value.
SERVER_PAIRS = [
    ("uuid", "0xC8C5E948F12E11F1B5B502FC00000001", "c8c5e948-f12e-11f1-b5b5-02fc00000001"),
    ("uuid", "0x6CCD780CBABA102695645B8C656024DB", "6ccd780c-baba-1026-9564-5b8c656024db"),
    ("inet6", "0x00000000000000000000FFFFC6336407", "::ffff:198.51.100.7"),
    ("inet6", "0x20010DB8000000000000000000000001", "2001:db8::1"),
    ("inet6", "0x00000000000000000000000000000001", "::1"),
    ("inet4", "0x0A000001", "10.0.0.1"),
    ("inet4", "0xCB007109", "203.0.113.9"),
]


@pytest.mark.parametrize(("kind", "logged", "printed"), SERVER_PAIRS)
def test_an_images_bytes_become_the_servers_text(kind: str, logged: str, printed: str) -> None:
    assert fixed_binary_text(kind, logged) == printed
    assert fixed_binary_text(kind, logged.lower()) == printed


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("uuid", None),  # NULL stays NULL
        ("uuid", "6ccd780c-baba-1026-9564-5b8c656024db"),  # already text (a catalogue's)
        ("inet4", "10.0.0.1"),
        ("inet6", "::1"),
        ("uuid", "0x0A000001"),  # hex of another length: not a UUID after all, kept
        ("inet4", "0xZZ000001"),  # not hex: kept
    ],
)
def test_text_that_is_not_a_logged_value_is_kept(kind: str, text: str | None) -> None:
    assert fixed_binary_text(kind, text) == text


def test_only_columns_the_ddl_declares_and_the_table_map_logs_as_binary_are_retyped() -> None:
    table = parse_create_table(
        "CREATE TABLE s (id UUID, ip INET6, v4 INET4, raw BINARY(16), gone INET4)", "d"
    )
    kinds = declared_kinds(table)
    assert kinds == {"id": "uuid", "ip": "inet6", "v4": "inet4", "gone": "inet4"}
    # A TABLE_MAP of the table after `gone` was dropped, `v4` logged as something else.
    mapped = {
        "columns": ["id", "ip", "v4", "raw"],
        "column_types": ["binary", "binary", "int", "binary"],
        "primary_key": ["id"],
    }
    assert with_declared_types(mapped, kinds) == {
        "columns": ["id", "ip", "v4", "raw"],
        "column_types": ["string", "string", "int", "binary"],
        "primary_key": ["id"],
        "mariadb_types": {"id": "uuid", "ip": "inet6", "v4": "inet4"},
    }
    assert with_declared_types(None, kinds) is None


def test_a_real_capture_without_a_catalogue_holds_the_servers_text(
    spark: Any, tmp_path: Path
) -> None:
    """The golden binlog of a real MariaDB 10.11 (its CREATE TABLE of a UUID/INET4/INET6 table,
    then rows), materialised with no catalogue: the values are the primary's SELECT text."""
    from fakemaster.spark import FORMAT_NAME, materialise

    expected = json.loads((GOLDEN / "expected.json").read_text())
    files = [str(GOLDEN / name) for name in expected["binlog_files"]]
    events = spark.read.format(FORMAT_NAME).load(files)
    materialise(spark, events, str(tmp_path / "out"))
    rows = read_tables(tmp_path / "out")["kinds.t_types"]
    got = sorted([None if v is None else str(v) for v in row.values()] for row in rows)
    assert got == sorted(expected["tables"]["t_types"]["rows"])
