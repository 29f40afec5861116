"""The columnar path's vectorised texts (fakemaster.spark.column_texts) equal the reference converters'
value by value: DOUBLE/FLOAT as ``repr(float(v))`` (fakemaster.spark.columns), DATETIME and
TIMESTAMP as ``YYYY-MM-DD hh:mm:ss[.fraction]`` (the per-value rule the fast path used before),
on drawn values including the edges of Python's fixed notation, signed zeros, non-finite values
and nulls."""

from __future__ import annotations

import datetime
import struct
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.spark.columns import _float_text
from tests.budget import examples
from tests.peers.policy import require_module

_EDGES = [0.0, -0.0, 1e-4, -1e-4, 9.999999999999999e-05, 1e16, 9999999999999998.0, 1e15, 0.1]
_EDGES += [
    float("inf"),
    float("-inf"),
    float("nan"),
    2.0**53,
    2.0**53 + 2,
    5e-324,
    1.7976931348623157e308,
]


def _doubles() -> Any:
    bits = st.integers(0, 2**64 - 1).map(lambda b: struct.unpack("<d", b.to_bytes(8, "little"))[0])
    scaled = st.tuples(st.integers(-(10**17), 10**17), st.integers(0, 20)).map(
        lambda t: t[0] / 10.0 ** t[1]
    )
    return st.one_of(st.floats(), bits, scaled, st.sampled_from(_EDGES), st.none())


@settings(max_examples=examples(2), deadline=None)
@given(values=st.lists(_doubles(), max_size=60))
def test_double_texts_are_the_reference_texts(values: list[float | None]) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import pyarrow as pa  # type: ignore[import-untyped]

    from fakemaster.spark.column_texts import _double_texts

    got = _double_texts(pa.array(values, pa.float64())).to_pylist()
    assert got == [None if v is None else _float_text(v) for v in values]


@settings(max_examples=examples(1), deadline=None)
@given(values=st.lists(st.floats(width=32, allow_nan=False) | st.none(), max_size=60))
def test_float_texts_are_the_reference_texts(values: list[float | None]) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import pyarrow as pa

    from fakemaster.spark.column_texts import _double_texts

    got = _double_texts(pa.array(values, pa.float32())).to_pylist()
    assert got == [None if v is None else _float_text(v) for v in values]


@settings(max_examples=examples(2), deadline=None)
@given(
    values=st.lists(
        st.datetimes(datetime.datetime(1, 1, 1), datetime.datetime(9999, 12, 31, 23, 59, 59))
        | st.none(),
        max_size=40,
    ),
    fsp=st.integers(0, 6),
    utc=st.booleans(),
)
def test_datetime_texts_are_the_reference_texts(
    values: list[datetime.datetime | None], fsp: int, utc: bool
) -> None:
    require_module("pyarrow", "pip install 'fakemaster[spark]'")
    import pyarrow as pa

    from fakemaster.spark.column_texts import _datetime_text, _datetime_vector

    field = pa.array(values, pa.timestamp("us"))
    if utc:
        field = field.cast(pa.timestamp("us", tz="UTC"))
    convert = _datetime_text(fsp)
    got = _datetime_vector(field, fsp).to_pylist()
    assert got == [None if v is None else convert(v) for v in values]
