"""Typed errors shared by the codec and the server."""

from __future__ import annotations


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
    """An event or value that cannot be represented on the wire."""


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
