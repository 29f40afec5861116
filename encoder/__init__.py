"""The binlog encoder: typed events to MariaDB's bytes."""

from encoder.core import encode_event

__all__ = ["encode_event"]
