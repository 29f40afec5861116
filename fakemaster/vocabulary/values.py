"""Python representations of column values that have no exact standard-library type.

MariaDB allows dates with zero parts ('0000-00-00', '2023-00-15') and TIME values past 24 hours,
so temporal values keep their fields as stored instead of being forced into ``datetime``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple, TypeAlias

if TYPE_CHECKING:  # imported by the conversions that need it: the codec and server do not
    import datetime as _dt
    from decimal import Decimal

    from fakemaster.vocabulary.mariadb_types import FixedBinaryValue

__all__ = ["ABSENT", "ColumnValue", "Date", "DateTime", "Time", "Timestamp"]

# One column's value in a row image: what decoder/values.py gives (the first line; None for
# NULL) and what encoder/values.py also takes (the second: a str only for a DECIMAL, a date,
# datetime or timedelta for the temporal types, bytes-like objects for the byte types, a UUID,
# INET4 or INET6 value for those logged as BINARY(n)). A
# string, so that neither decimal nor datetime is imported to name it.
ColumnValue: TypeAlias = (
    "int | float | Decimal | bytes | Date | DateTime | Time | Timestamp | None"
    " | str | _dt.date | _dt.timedelta | bytearray | memoryview | FixedBinaryValue"
)


class _Absent:
    """A column that is not part of a (partial) row image: not the same thing as NULL."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


class Date(NamedTuple):
    year: int
    month: int
    day: int

    def is_zero(self) -> bool:
        return self.year == 0 and self.month == 0 and self.day == 0

    def to_date(self) -> _dt.date | None:
        """A ``datetime.date``, or None where MariaDB allows what Python does not."""
        import datetime as _dt

        try:
            return _dt.date(self.year, self.month, self.day)
        except ValueError:
            return None

    def __str__(self) -> str:
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"


class DateTime(NamedTuple):
    year: int
    month: int
    day: int
    hour: int = 0
    minute: int = 0
    second: int = 0
    microsecond: int = 0

    def to_datetime(self) -> _dt.datetime | None:
        import datetime as _dt

        try:
            return _dt.datetime(
                self.year,
                self.month,
                self.day,
                self.hour,
                self.minute,
                self.second,
                self.microsecond,
            )
        except ValueError:
            return None

    def format(self, fsp: int = 6) -> str:
        text = (
            f"{self.year:04d}-{self.month:02d}-{self.day:02d} "
            f"{self.hour:02d}:{self.minute:02d}:{self.second:02d}"
        )
        return text + _fraction(self.microsecond, fsp)

    def __str__(self) -> str:
        return self.format(6 if self.microsecond else 0)


class Time(NamedTuple):
    """A TIME value: a signed duration of up to 838:59:59.999999."""

    negative: bool
    hour: int
    minute: int
    second: int
    microsecond: int = 0

    def to_timedelta(self) -> _dt.timedelta:
        import datetime as _dt

        delta = _dt.timedelta(
            hours=self.hour,
            minutes=self.minute,
            seconds=self.second,
            microseconds=self.microsecond,
        )
        return -delta if self.negative else delta

    @classmethod
    def from_timedelta(cls, delta: _dt.timedelta) -> Time:
        import datetime as _dt

        negative = delta < _dt.timedelta(0)
        total_us = abs(delta) // _dt.timedelta(microseconds=1)
        seconds, microsecond = divmod(total_us, 1_000_000)
        minutes, second = divmod(seconds, 60)
        hour, minute = divmod(minutes, 60)
        return cls(negative, hour, minute, second, microsecond)

    def format(self, fsp: int = 6) -> str:
        sign = "-" if self.negative else ""
        return f"{sign}{self.hour:02d}:{self.minute:02d}:{self.second:02d}" + _fraction(
            self.microsecond, fsp
        )

    def __str__(self) -> str:
        return self.format(6 if self.microsecond else 0)


class Timestamp(NamedTuple):
    """Seconds since the Unix epoch (UTC) as stored; 0 is also MariaDB's zero timestamp."""

    seconds: int
    microsecond: int = 0

    def to_datetime(self) -> _dt.datetime:
        import datetime as _dt

        return _dt.datetime.fromtimestamp(self.seconds, _dt.UTC).replace(
            microsecond=self.microsecond
        )


def _fraction(microsecond: int, fsp: int) -> str:
    if fsp <= 0:
        return ""
    return "." + f"{microsecond:06d}"[:fsp]
