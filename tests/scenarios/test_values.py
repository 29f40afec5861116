"""Plain Python values are converted per column type exactly, or refused with an error that
names the table, the column and the value."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.vocabulary.values import Date, DateTime, Time, Timestamp
from scenarios.builder import column
from scenarios.errors import ValueDoesNotFit
from scenarios.schema import Column
from scenarios.strategies.history import columns, values_for
from scenarios.values import convert, float32
from tests.budget import examples


@pytest.mark.parametrize(
    ("type_text", "given", "kept"),
    [
        ("TINYINT", -128, -128),
        ("BIGINT UNSIGNED", 2**64 - 1, 2**64 - 1),
        ("DECIMAL(5,2)", "-123.4", Decimal("-123.40")),
        ("DECIMAL(5,2)", 7, Decimal("7.00")),
        ("FLOAT", 0.5, 0.5),
        ("DOUBLE", 3, 3.0),
        ("BIT(9)", b"\x01\x00", 256),
        ("YEAR", 2155, 2155),
        ("DATE", dt.date(2024, 2, 29), Date(2024, 2, 29)),
        ("DATE", "0000-00-00", Date(0, 0, 0)),
        ("TIME(2)", dt.timedelta(hours=-1, minutes=-30), Time(True, 1, 30, 0, 0)),
        ("TIME(2)", "838:59:59.00", Time(False, 838, 59, 59, 0)),
        (
            "DATETIME(1)",
            dt.datetime(2024, 1, 2, 3, 4, 5, 600000),
            DateTime(2024, 1, 2, 3, 4, 5, 600000),
        ),
        (
            "TIMESTAMP(3)",
            dt.datetime(2038, 1, 19, 3, 14, 7, 123000, tzinfo=dt.UTC),
            Timestamp(0x7FFFFFFF, 123000),
        ),
        ("VARCHAR(3) CHARACTER SET latin1", "é€x", "é€x".encode("cp1252")),
        ("CHAR(2)", "☃☃", "☃☃".encode()),
        ("BINARY(3)", b"a", b"a\x00\x00"),
        ("ENUM('a','b')", "b", 2),
        ("SET('a','b','c')", ["c", "a"], 0b101),
        ("SET('a','b','c')", "", 0),
        ("JSON", {"k": [1, 2]}, b'{"k": [1, 2]}'),
    ],
)
def test_plain_values_are_kept_as_the_codec_keeps_them(
    type_text: str, given: Any, kept: Any
) -> None:
    value = convert(column("c", type_text), given, table="d.t")
    assert type(value) is type(kept) and value == kept


@pytest.mark.parametrize(
    ("type_text", "given", "why"),
    [
        ("TINYINT", 128, "out of range"),
        ("INT UNSIGNED", -1, "out of range"),
        ("INT", True, "bool"),
        ("INT", 1.0, "takes an int"),
        ("DECIMAL(5,2)", "1.234", "more than 2 digits after"),
        ("DECIMAL(5,2)", 1000, "more than 3 digits before"),
        ("DECIMAL(5,2)", 1.5, "not exact"),
        ("DECIMAL(5,2) UNSIGNED", "-1", "negative"),
        ("FLOAT", 0.1, "float32"),
        ("DOUBLE", float("nan"), "finite"),
        ("DOUBLE", -0.0, "negative zero"),
        ("BIT(3)", 8, "3 bits"),
        ("YEAR", 1900, "1901..2155"),
        ("DATE", dt.datetime(2024, 1, 1), "not a datetime"),
        ("DATE", Date(2023, 2, 29), "calendar"),
        ("TIME", dt.timedelta(seconds=1, microseconds=5), "precision 0"),
        ("TIME(6)", Time(False, 839, 0, 0), "838"),
        ("TIME(6)", Time(True, 0, 0, 0), "negative zero"),
        ("DATETIME", dt.datetime(2024, 1, 1, 0, 0, 0, 500000), "precision 0 (it has none)"),
        ("DATETIME", dt.datetime(2024, 1, 1, tzinfo=dt.UTC), "no time zone"),
        ("TIMESTAMP", dt.datetime(2024, 1, 1), "naive"),
        ("TIMESTAMP", Timestamp(0x80000000), "range"),
        ("VARCHAR(2)", "abc", "longer than 2 characters"),
        ("VARBINARY(2)", b"abc", "longer than 2 bytes"),
        ("VARBINARY(2)", "ab", "takes bytes"),
        ("VARCHAR(2) CHARACTER SET latin1", "☃", "not representable in latin1"),
        ("VARCHAR(4)", b"\xff", "not utf8mb4 text"),
        ("CHAR(4)", "ab ", "trailing spaces"),
        ("TINYTEXT", "x" * 256, "TINYTEXT holds 255"),
        ("ENUM('a','b')", "A", "not a member"),
        ("ENUM('a','b')", 3, "beyond the 2 members"),
        ("SET('a','b')", "a,c", "'c' is not a member"),
        ("SET('a','b')", 4, "beyond the 2 members"),
        ("JSON", "{", "not valid JSON"),
    ],
)
def test_a_value_that_does_not_fit_names_table_column_and_value(
    type_text: str, given: Any, why: str
) -> None:
    with pytest.raises(ValueDoesNotFit) as raised:
        convert(column("col", type_text), given, table="shop.orders")
    error = raised.value
    assert (error.table, error.column) == ("shop.orders", "col")
    assert error.value is given
    assert str(error).startswith(f"shop.orders.col: {given!r:.20}"[:30])
    assert why in str(error)


def test_null_is_refused_in_a_not_null_column_only() -> None:
    assert convert(column("c", "INT"), None) is None
    with pytest.raises(ValueDoesNotFit, match="NOT NULL"):
        convert(column("c", "INT", null=False), None, table="d.t")


def test_float32_rounds_what_a_float_column_keeps() -> None:
    assert convert(column("c", "FLOAT"), float32(0.1)) == float32(0.1) != 0.1


@settings(max_examples=examples(2))
@given(st.data())
def test_the_model_values_of_the_strategies_convert_to_themselves(data: st.DataObject) -> None:
    drawn: Column = data.draw(columns())
    value = data.draw(values_for(drawn))
    again = convert(drawn, value, table="d.t")
    assert type(again) is type(value) and again == value
