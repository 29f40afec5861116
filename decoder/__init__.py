"""The binlog decoder: MariaDB's bytes to typed events."""

from decoder.core import decode_event

__all__ = ["decode_event"]
