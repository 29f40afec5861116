"""What a reader or writer of a binlog stream must remember between events.

The encoder and the decoder keep the same state, updated by the same rule: a
FORMAT_DESCRIPTION sets the checksum algorithm and the post-header lengths, a TABLE_MAP
defines a table id until it is mapped again.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fakemaster.vocabulary.constants import MAX_UNCOMPRESSED_LENGTH, ChecksumAlg, EventType
from fakemaster.vocabulary.events import Event, FormatDescriptionEvent, TableMapEvent

__all__ = ["BinlogContext"]


@dataclass(slots=True)
class BinlogContext:
    """What decoding and encoding a stream's events needs: its FDE, checksum and table maps."""

    fde: FormatDescriptionEvent = field(default_factory=FormatDescriptionEvent)
    checksum: bool = True
    table_maps: dict[int, TableMapEvent] = field(default_factory=dict)
    # Set when the stream came from a server without 6-byte table ids in its FDE.
    table_id_size: int = 6
    # Fractional-second precision per column of tables whose TIME/DATETIME/TIMESTAMP columns
    # use MariaDB 5.3's format (mysql56_temporal_format=OFF): the binlog carries no metadata
    # for them, so the value's length comes from the schema: {(database, table): (fsp, ...)}.
    temporal_precisions: dict[tuple[str, str], tuple[int, ...]] = field(default_factory=dict)
    # A compressed record whose header claims more is refused before inflating (DecodeError).
    max_uncompressed_length: int = MAX_UNCOMPRESSED_LENGTH

    @classmethod
    def for_checksum(cls, checksum: bool) -> BinlogContext:
        return cls(checksum=checksum)

    def observe(self, event: Event) -> None:
        """Apply what ``event`` tells later events."""
        if isinstance(event, FormatDescriptionEvent):
            self.fde = event
            self.checksum = event.checksum_alg == ChecksumAlg.CRC32
            self.table_id_size = 4 if event.post_header_length(EventType.TABLE_MAP) == 6 else 6
        elif isinstance(event, TableMapEvent):
            self.table_maps[event.table_id] = event

    def copy(self) -> BinlogContext:
        return BinlogContext(
            self.fde,
            self.checksum,
            dict(self.table_maps),
            self.table_id_size,
            self.temporal_precisions,
            self.max_uncompressed_length,
        )
