"""Typed errors shared by the codec and the server."""

from __future__ import annotations

from typing import Any

__all__ = [
    "ChecksumError",
    "ConfigError",
    "DecodeError",
    "EncodeError",
    "FakemasterError",
    "InputError",
]


class FakemasterError(Exception):
    """Base class of every error the project raises on purpose."""


class DecodeError(FakemasterError):
    """Bytes that are not a valid event, packet or value.

    ``offset`` is where the problem lies, counted from the start of the unit being decoded
    (the binlog file, the stream, or the event when no outer position is known);
    ``event_type`` names the event being decoded, when one was identified.
    """

    def __init__(self, message: str, *, offset: int = 0, event_type: str | None = None) -> None:
        self.reason = message
        self.offset = offset
        self.event_type = event_type
        where = f" at offset {offset}"
        what = f" in {event_type}" if event_type else ""
        super().__init__(f"{message}{what}{where}")

    def relocated(self, base: int, event_type: str | None = None) -> DecodeError:
        """The same error with its offset moved by ``base`` (an outer unit's start)."""
        return DecodeError(
            self.reason, offset=self.offset + base, event_type=self.event_type or event_type
        )


class ChecksumError(DecodeError):
    """An event whose CRC32 does not match its bytes."""


class EncodeError(FakemasterError, ValueError):
    """An event or value that cannot be represented on the wire.

    For a column value of a rows event, ``value`` is that value, ``column`` the column's index,
    ``column_name`` its name when the TABLE_MAP has column names, and ``where`` the row (and
    image) it is in; the message names all of them. ``reason`` is the message without that
    location. Outside rows events they are None (``where`` empty). ``field`` names the event's
    (or packet's) field that cannot be encoded, dotted into nested values (``xid.gtrid``,
    ``gtids[2].seq_no``) when one is to blame; ``event_type`` names the event being encoded, as
    the message's end does (`` in ROTATE``).
    """

    def __init__(
        self,
        message: str,
        *,
        value: Any = None,
        column: int | None = None,
        column_name: str | None = None,
        where: str = "",
        field: str | None = None,
        event_type: str | None = None,
    ) -> None:
        self.reason = message
        self.value = value
        self.column = column
        self.column_name = column_name
        self.where = where
        self.field = field
        self.event_type = event_type
        location = where
        if column is not None:
            name = "" if column_name is None else f" `{column_name}`"
            location = f"{where}, column {column}{name}" if where else f"column {column}{name}"
        text = f"{location}: {message}" if location else message
        super().__init__(f"{text} in {event_type}" if event_type else text)

    def _copy(self, **changes: Any) -> EncodeError:
        fields = {
            "value": self.value,
            "column": self.column,
            "column_name": self.column_name,
            "where": self.where,
            "field": self.field,
            "event_type": self.event_type,
            **changes,
        }
        return EncodeError(self.reason, **fields)

    def in_column(
        self, column: int, *, where: str = "", column_name: str | None = None
    ) -> EncodeError:
        """The same error placed in a column (and row) of a rows event."""
        return self._copy(column=column, column_name=column_name, where=where or self.where)

    def in_field(self, field: str) -> EncodeError:
        """The same error blamed on ``field``, unless it names one already."""
        return self if self.field is not None else self._copy(field=field)

    def in_event(self, event_type: str) -> EncodeError:
        """The same error placed in an event (named as ``event_type_name`` names it)."""
        return self._copy(event_type=event_type)


class ConfigError(FakemasterError, ValueError):
    """A server configuration that cannot stand: an invalid setting, or one that contradicts
    the binlog being served (``configured`` and ``served`` then hold both values)."""

    def __init__(
        self,
        message: str,
        *,
        variable: str | None = None,
        configured: object = None,
        served: object = None,
    ) -> None:
        self.variable = variable
        self.configured = configured
        self.served = served
        super().__init__(message)


class InputError(FakemasterError, ValueError):
    """An input file (or text) that cannot be read as what it claims to be: not UTF-8, too
    large, nested too deeply, a number out of range. ``source`` names the file, ``where`` the
    place in it (``line 3, column 7``, ``byte 12``, or a dotted path ``faults[0].at``)."""

    def __init__(self, message: str, *, source: str = "<input>", where: str = "") -> None:
        self.reason = message
        self.source = source
        self.where = where
        place = f"{source}, {where}" if where else source
        super().__init__(f"{place}: {message}")
