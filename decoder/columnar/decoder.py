"""The columnar decoder: :class:`ColumnarDecoder` (sans-IO, an event or a read buffer at a time)
holds each table's rows events until a batch is due; :func:`read_changes` runs it over a binlog
file (the package docstring).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Collection, Iterator, Sequence
from typing import Any

from decoder.binlog_file import Source, iter_raw_blocks
from decoder.columnar.batches import ChangeBatch, _build_batch, _column_names, _TableBuffer
from decoder.columnar.libraries import _np
from decoder.columnar.scanner import Scanner
from decoder.columnar.shape import columnar_shape
from decoder.compression import decompress_record
from decoder.core import CRC_RESIDUE, decode_event
from decoder.rows import RowsHeader, read_row_images, read_rows_header
from fakemaster.vocabulary.columns import schema_precisions
from fakemaster.vocabulary.constants import CHECKSUM_LEN, HEADER_LEN, EventType, event_type_name
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import BinlogKeys
from fakemaster.vocabulary.errors import ChecksumError, DecodeError
from fakemaster.vocabulary.events import ROWS_EVENT_CLASSES, Event, QueryEvent, TableMapEvent
from fakemaster.vocabulary.header import CRC, HEADER
from fakemaster.vocabulary.layouts import GTID_BODY_MIN, GTID_FIXED, U32

__all__ = [
    "ColumnarDecoder",
    "DDL_EVENT_TYPES",
    "read_changes",
]


DDL_EVENT_TYPES = frozenset({int(EventType.QUERY), int(EventType.QUERY_COMPRESSED)})
# Statements of these QUERY events change no table: no flush before them.
_NOT_DDL = frozenset({b"BEGIN", b"COMMIT", b"ROLLBACK", b"XA END", b"XA COMMIT"})

_ROWS_CODES = frozenset(int(code) for code in ROWS_EVENT_CLASSES)
_FDE = int(EventType.FORMAT_DESCRIPTION)
_TABLE_MAP = int(EventType.TABLE_MAP)
_GTID = int(EventType.GTID)
_QUERY = int(EventType.QUERY)
_START_ENCRYPTION = int(EventType.START_ENCRYPTION)
# ColumnarDecoder.feed_buffer's actions per type code: only check it (CRC32, framing), a rows
# event, a TABLE_MAP, a GTID, a QUERY that may be one passed over.
_DO_CHECK, _DO_ROWS, _DO_TABLE_MAP, _DO_GTID, _DO_QUERY = range(5)
_MALFORMED = (struct.error, IndexError, ValueError, OverflowError, zlib.error)


Output = ChangeBatch | tuple[int, Event]


class ColumnarDecoder:
    """Rows events into per-table Arrow batches, fed one whole event at a time (sans-IO).

    ``feed(offset, data)`` takes one event's bytes (header to CRC, decrypted) and returns what
    is ready, in order: ChangeBatch objects and ``(offset, event)`` for the type codes in
    ``events``; ``flush()`` gives out every table's held rows. ``ctx`` is updated as by
    ``decoder.decode_event`` (FDE, TABLE_MAPs).

    For a replication connection, feed the event bytes of each binlog packet
    (``decoder.packets.parse_binlog_packet``) with a context made for the checksum setting
    the replica asked for (``BinlogContext.for_checksum``), as ``decoder.StreamDecoder`` does:
    the stream's first events (artificial ROTATE, FDE) come before the rows. ``offset`` is
    whatever position the caller keeps for the event (its ``log_pos`` minus its length in a
    dump of one file); it is what the batches' ``event_offset`` column holds.
    """

    def __init__(
        self,
        ctx: BinlogContext | None = None,
        *,
        batch_rows: int = 65536,
        verify_checksum: bool = True,
        allow_unknown: bool = False,
        events: Collection[int] = frozenset(),
        flush_on: Collection[int] = DDL_EVENT_TYPES,
    ) -> None:
        self.ctx = ctx if ctx is not None else BinlogContext()
        self.batch_rows = batch_rows
        self.verify_checksum = verify_checksum
        self.allow_unknown = allow_unknown
        self.events = frozenset(int(code) for code in events)
        self.flush_on = frozenset(int(code) for code in flush_on)
        # The type codes feed_block handles itself (the others go through feed).
        # (feed only checks the framing and CRC of an event outside ``events`` and
        # ``flush_on`` that is not an FDE, a TABLE_MAP, a GTID or a rows event).
        self._checked = frozenset(range(256)) - {_FDE} - self.events - self.flush_on
        # Those feed_buffer takes from a file's read buffer (not a START_ENCRYPTION, which
        # the file reader acts on).
        self._inline = self._checked - {_START_ENCRYPTION}
        # A QUERY that only flushes when it is DDL, and is not given out: the bodies of those
        # seen before that are not DDL (a server's COMMIT of a non-transactional table's
        # statement: the same bytes every time) are passed over as they were (decoded, not DDL).
        self._skip_known_queries = _QUERY in self.flush_on and _QUERY not in self.events
        self._queries: set[bytes] = set()
        # What feed_buffer does with each type code it takes (the others stop it).
        self._actions = {code: _DO_CHECK for code in self._inline}
        self._actions.update({code: _DO_ROWS for code in _ROWS_CODES & self._inline})
        for code, action in ((_TABLE_MAP, _DO_TABLE_MAP), (_GTID, _DO_GTID)):
            if code in self._inline:
                self._actions[code] = action
        if self._skip_known_queries:
            self._actions[_QUERY] = _DO_QUERY
        self.gtid: tuple[int | None, int | None, int | None] = (None, None, None)
        self._buffers: dict[int, _TableBuffer] = {}
        # The last TABLE_MAP decoded from each body: a server repeats it before every statement.
        self._maps: dict[bytes, TableMapEvent] = {}
        # Per (type code, table id and flags bytes): the post-header and bitmaps last seen
        # (a statement's last event has STMT_END, the others not), for events
        # that repeat them (see _known_rows).
        self._templates: dict[
            tuple[int, bytes], tuple[RowsHeader, bytes, Scanner, _TableBuffer, int, int]
        ] = {}

    def flush(self) -> list[ChangeBatch]:
        """Every table's held rows, as batches (tables in the order their rows began)."""
        buffers = sorted(self._buffers.values(), key=lambda b: b.runs[0][0] if b.runs else 0)
        self._buffers.clear()
        return [_build_batch(buffer) for buffer in buffers if buffer.rows]

    def feed(self, offset: int, data: bytes) -> list[Output]:
        size = len(data)
        if size < HEADER_LEN:
            return self._decoded(offset, data)
        fields = _unpack_header(data, 0)
        type_code = fields[1]
        if fields[3] != size or type_code in self.events or type_code == _FDE:
            return self._decoded(offset, data)
        out: list[Output] = []
        if type_code in self.flush_on:
            if type_code in DDL_EVENT_TYPES:
                if type_code == _QUERY and self._queries and self._known_query(data):
                    return out
                return self._decoded(offset, data)
            out += self.flush()
        ctx = self.ctx
        end = size
        if ctx.checksum:
            end -= CHECKSUM_LEN
            if end < HEADER_LEN:
                raise DecodeError(
                    "truncated: no room for the CRC",
                    offset=offset + size,
                    event_type=event_type_name(type_code),
                )
            if self.verify_checksum:
                # (a copy of a small event costs less than a view of it)
                computed = _crc32(data[:end] if end < 4096 else memoryview(data)[:end])
                stored = _unpack_crc(data, end)[0]
                if stored != computed:
                    raise ChecksumError(
                        f"CRC32 mismatch: stored 0x{stored:08x}, computed 0x{computed:08x}",
                        offset=offset + end,
                        event_type=event_type_name(type_code),
                    )
        start = ctx.fde.header_length
        if start < HEADER_LEN:
            start = HEADER_LEN
        if start > end:
            raise DecodeError(
                "truncated: shorter than the header",
                offset=offset + end,
                event_type=event_type_name(type_code),
            )
        if type_code in _ROWS_CODES:
            if not self._known_rows(offset, data, fields, start, end, out):
                self._rows(offset, data, fields, start, end, out)
        elif type_code == _TABLE_MAP:
            body = data[start:end]
            table_map = self._maps.get(body)
            if table_map is None:
                event = decode_event(data, ctx, offset, self.verify_checksum, self.allow_unknown)
                assert isinstance(event, TableMapEvent)
                if len(self._maps) >= 1024:
                    self._maps.clear()
                self._maps[body] = event
            else:
                ctx.table_maps[table_map.table_id] = table_map
        elif type_code == _GTID:
            if end - start < GTID_BODY_MIN:
                decode_event(data, ctx, offset, self.verify_checksum, self.allow_unknown)
            seq_no, domain_id, _ = _unpack_gtid(data, start)
            self.gtid = (domain_id, fields[2], seq_no)
        return out

    def feed_block(self, block: Sequence[tuple[int, bytes]], out: list[Output]) -> None:
        """``feed`` for each ``(offset, event bytes)`` of ``block`` (what
        ``decoder.binlog_file.iter_raw_blocks`` gives), the outputs appended to ``out`` in
        order (those of the events before an error are there when it is raised).

        The events this decoder only checks (types outside ``events`` and ``flush_on`` other
        than FDE, GTID, TABLE_MAP and the rows events: ANNOTATE_ROWS, XID...), a GTID, a
        TABLE_MAP seen before and a rows event of a known post-header, all under 64 KiB, are
        handled in this loop; every other event, and any the short way finds wrong, goes to
        ``feed``."""
        ctx = self.ctx
        checked = self._checked
        verify = self.verify_checksum
        templates = self._templates
        maps = self._maps
        buffers = self._buffers
        table_maps = ctx.table_maps
        unpack_header = _unpack_header
        crc32 = _crc32
        batch_rows = self.batch_rows
        feed = self.feed
        # Only an FDE (which goes through feed) changes these: read again after feed.
        trailer = CHECKSUM_LEN if ctx.checksum else 0
        start = max(ctx.fde.header_length, HEADER_LEN)
        for offset, data in block:
            size = len(data)
            if size < HEADER_LEN or size >= _VIEW_MIN or data[4] not in checked:
                out += feed(offset, data)
                trailer = CHECKSUM_LEN if ctx.checksum else 0
                start = max(ctx.fde.header_length, HEADER_LEN)
                continue
            type_code = data[4]
            end = size - trailer
            if (
                start > end
                or _unpack_length(data, 9)[0] != size
                or (trailer and verify and crc32(data) != CRC_RESIDUE)
            ):
                out += feed(offset, data)  # the error, or what feed makes of it
                continue
            if type_code in _ROWS_CODES:
                template = templates.get((type_code, data[start : start + ctx.table_id_size + 2]))
                if template is not None:
                    header, prefix, scanner, buffer, header_index, shift = template
                    table_id = header.table_id
                    images = start + header.images_start
                    if (
                        buffers.get(table_id) is buffer
                        and table_maps.get(table_id) is header.table_map
                        and data[start:images] == prefix
                    ):
                        try:
                            starts = scanner(data, images, end)
                        except (IndexError, struct.error):
                            starts = None
                        if starts is not None:
                            fields = unpack_header(data, 0)
                            buffer.runs.append(
                                (offset, fields[4], fields[0], fields[2], self.gtid,
                                 None, header_index, starts, data, images, end)
                            )  # fmt: skip
                            buffer.rows += len(starts) >> shift
                            if buffer.rows >= batch_rows:
                                del buffers[table_id]
                                out.append(_build_batch(buffer))
                            continue
                out += feed(offset, data)
            elif type_code == _TABLE_MAP:
                table_map = maps.get(data[start:end])
                if table_map is None:
                    out += feed(offset, data)
                else:
                    table_maps[table_map.table_id] = table_map
            elif type_code == _GTID:
                if end - start < GTID_BODY_MIN:
                    out += feed(offset, data)
                else:
                    seq_no, domain_id, _ = _unpack_gtid(data, start)
                    self.gtid = (domain_id, _unpack_server(data, 5)[0], seq_no)

    def feed_buffer(self, buf: bytes, pos: int, offset: int, out: list[Output]) -> tuple[int, int]:
        """``feed_block`` on the events framed straight from a read buffer (the ``inline`` of
        ``decoder.binlog_file.iter_raw_blocks``): from ``pos`` (the event there at
        ``offset``), the events feed_block handles in its own loop, each wholly in ``buf``
        (of any size: the large rows events of a blob table too, kept as the event's bytes
        sliced from the buffer, as small ones are), and a QUERY seen before that is not DDL
        (``_queries``); returns where it stopped, ``(pos, offset)``: at the end of the
        buffer's whole events, or at an event to be framed and fed (to feed_block) as usual
        (one it does not handle, a bad length, a START_ENCRYPTION, one the short way finds
        wrong), before which nothing of it has been taken."""
        ctx = self.ctx
        actions = self._actions
        templates = self._templates
        maps = self._maps
        buffers = self._buffers
        table_maps = ctx.table_maps
        unpack_header = _unpack_header
        unpack_gtid = _unpack_gtid
        crc32 = _crc32
        residue = CRC_RESIDUE
        queries = self._queries
        batch_rows = self.batch_rows
        check = self.verify_checksum and ctx.checksum
        trailer = CHECKSUM_LEN if ctx.checksum else 0
        start = max(ctx.fde.header_length, HEADER_LEN)
        id_end = start + ctx.table_id_size + 2
        min_length = start + trailer  # (start is at least HEADER_LEN)
        gtid_min = min_length + GTID_BODY_MIN
        gtid = self.gtid
        size = len(buf)
        last = size - HEADER_LEN
        try:
            while pos <= last:
                fields = unpack_header(buf, pos)
                length = fields[3]
                end = pos + length
                if end > size or length < min_length:
                    break
                action = actions.get(fields[1])
                if action is None:
                    break
                data = buf[pos:end]
                if check and crc32(data) != residue:
                    break  # feed says what is wrong
                if not action:  # (only checked)
                    pass
                elif action == _DO_ROWS:
                    template = templates.get((fields[1], data[start:id_end]))
                    if template is None:
                        break
                    header, prefix, scanner, buffer, header_index, shift = template
                    table_id = header.table_id
                    images = start + header.images_start
                    if (
                        buffers.get(table_id) is not buffer
                        or table_maps.get(table_id) is not header.table_map
                        or data[start:images] != prefix
                    ):
                        break
                    images_end = length - trailer
                    try:
                        starts = scanner(data, images, images_end)
                    except (IndexError, struct.error):
                        break
                    if starts is None:
                        break
                    buffer.runs.append(
                        (offset, fields[4], fields[0], fields[2], gtid,
                         None, header_index, starts, data, images, images_end)
                    )  # fmt: skip
                    buffer.rows += len(starts) >> shift
                    if buffer.rows >= batch_rows:
                        del buffers[table_id]
                        out.append(_build_batch(buffer))
                elif action == _DO_TABLE_MAP:
                    table_map = maps.get(data[start : length - trailer])
                    if table_map is None:
                        break
                    table_maps[table_map.table_id] = table_map
                elif action == _DO_GTID:
                    if length < gtid_min:
                        break
                    seq_no, domain_id, _ = unpack_gtid(data, start)
                    gtid = (domain_id, fields[2], seq_no)
                elif data[start : length - trailer] not in queries:  # (_DO_QUERY)
                    break
                pos = end
                offset += length
        finally:
            self.gtid = gtid
        return pos, offset

    def _known_rows(
        self,
        offset: int,
        data: bytes,
        fields: tuple[int, ...],
        start: int,
        end: int,
        out: list[Output],
    ) -> bool:
        """A rows event whose post-header and bitmaps are those of an earlier event of the
        same table map (a server's single-row statements): its rows added without reading
        them again; False when it is not one."""
        id_end = start + self.ctx.table_id_size + 2  # the table id and the rows flags
        template = self._templates.get((fields[1], data[start:id_end]))
        if template is None:
            return False
        header, prefix, scanner, buffer, header_index, shift = template
        images = start + header.images_start
        if (
            self._buffers.get(header.table_id) is not buffer  # flushed since, or replaced
            or self.ctx.table_maps.get(header.table_id) is not header.table_map
            or data[start:images] != prefix
        ):
            return False
        area = _area(data, images, end)
        try:
            starts = scanner(area, 0, len(area))
        except (IndexError, struct.error):
            return False
        if starts is None:
            return False
        buffer.runs.append(
            (offset, fields[4], fields[0], fields[2], self.gtid, None, header_index, starts,
             area, 0, len(area))
        )  # fmt: skip
        buffer.rows += len(starts) >> shift
        if buffer.rows >= self.batch_rows:
            del self._buffers[header.table_id]
            out.append(_build_batch(buffer))
        return True

    def _known_query(self, data: bytes) -> bool:
        """Whether ``data`` (a QUERY event of the right length) has a body decoded before as
        not DDL, and its CRC32 (when checked) is right."""
        ctx = self.ctx
        end = len(data) - (CHECKSUM_LEN if ctx.checksum else 0)
        start = max(ctx.fde.header_length, HEADER_LEN)
        if start > end or data[start:end] not in self._queries:
            return False
        return not (ctx.checksum and self.verify_checksum and _crc32(data) != CRC_RESIDUE)

    def _decoded(self, offset: int, data: bytes) -> list[Output]:
        ctx = self.ctx
        event = decode_event(data, ctx, offset, self.verify_checksum, self.allow_unknown)
        out: list[Output] = []
        if event.type_code in self.flush_on:
            if isinstance(event, QueryEvent) and event.query.strip().upper() in _NOT_DDL:
                if event.type_code == _QUERY and self._skip_known_queries:
                    # (its body alone says what it is: QUERY's post-header has a fixed size)
                    if len(self._queries) >= 1024:
                        self._queries.clear()
                    end = len(data) - (CHECKSUM_LEN if ctx.checksum else 0)
                    self._queries.add(data[max(ctx.fde.header_length, HEADER_LEN) : end])
            else:
                out += self.flush()
        if event.type_code == _GTID:
            self.gtid = (event.domain_id, event.server_id, event.seq_no)  # type: ignore[attr-defined]
        if event.type_code in self.events:
            out.append((offset, event))
        return out

    def _rows(
        self,
        offset: int,
        data: bytes,
        fields: tuple[int, ...],
        start: int,
        end: int,
        out: list[Output],
    ) -> None:
        body = memoryview(data)[start:end]
        ctx = self.ctx
        body_start = offset + start
        scanner = None
        try:
            header: RowsHeader = read_rows_header(body, fields[1], ctx)
            table_map = header.table_map
            try:
                shape = columnar_shape(table_map, schema_precisions(ctx, table_map))
                shape.arrow_columns()
            except DecodeError as exc:
                raise DecodeError(
                    f"table id {header.table_id}: {exc.reason}", offset=header.images_start
                ) from None
            rows: list[Any] | None = None
            starts: Sequence[int] | None = None
            area = b""
            if _np() is not None:
                # Where each row starts, now (the values are read a column at a time when the
                # batch is built); anything the walk does not take is read the row decoder's way.
                if header.compressed:
                    area = decompress_record(body, header.images_start, ctx.max_uncompressed_length)
                else:
                    area = _area(data, start + header.images_start, end)
                scanner = shape.scanner(header.width, header.present, header.present_after)
                try:
                    starts = scanner(area, 0, len(area))
                except (IndexError, struct.error):
                    starts = None
            if starts is None:
                rows = read_row_images(body, header, ctx, shape)
        except DecodeError as exc:
            raise exc.relocated(body_start, event_type_name(fields[1])) from None
        except _MALFORMED as exc:
            raise DecodeError(
                f"malformed body: {exc}", offset=body_start, event_type=event_type_name(fields[1])
            ) from exc
        width = header.width
        key = (id(shape), width, table_map.database, table_map.table, id(table_map))
        buffer = self._buffers.get(header.table_id)
        if buffer is not None and buffer.key != key:
            if (
                buffer.shape is not shape
                or buffer.width != width
                or buffer.table_map.database != table_map.database
                or buffer.table_map.table != table_map.table
                or buffer.names != _column_names(table_map, width)
                # Names, charsets, signedness... a batch carries one TABLE_MAP's metadata.
                or buffer.table_map.optional_metadata != table_map.optional_metadata
            ):
                del self._buffers[header.table_id]
                if buffer.rows:
                    out.append(_build_batch(buffer))
                buffer = None
            else:
                buffer.key = key
        if buffer is None:
            buffer = _TableBuffer(key, table_map, shape, width, _column_names(table_map, width))
            self._buffers[header.table_id] = buffer
        header_index = buffer.header_index(header)
        if starts is None:
            buffer.walked = False
        buffer.runs.append(
            (offset, fields[4], fields[0], fields[2], self.gtid, rows, header_index, starts,
             area, 0, len(area))
        )  # fmt: skip
        shift = 0 if header.present_after is None else 1  # (an UPDATE's rows: two images)
        buffer.rows += len(rows) if rows is not None else len(starts or ()) >> shift
        if starts is not None and scanner is not None and not header.compressed:
            if len(self._templates) >= 1024:
                self._templates.clear()
            id_end = start + ctx.table_id_size + 2
            prefix = data[start : start + header.images_start]
            self._templates[(fields[1], data[start:id_end])] = (
                header, prefix, scanner, buffer, header_index, shift
            )  # fmt: skip
        if buffer.rows >= self.batch_rows:
            del self._buffers[header.table_id]
            out.append(_build_batch(buffer))


def _area(data: bytes, start: int, end: int) -> Any:
    """The row images of an event: a copy when small, a view of the event when large (the
    batch copies it once more; small copies are cheaper than views, which the garbage
    collector tracks)."""
    return memoryview(data)[start:end] if end - start > _VIEW_MIN else data[start:end]


_VIEW_MIN = 1 << 16
_unpack_header = HEADER.unpack_from
_unpack_crc = CRC.unpack_from
_unpack_gtid = GTID_FIXED.unpack_from
_unpack_length = U32.unpack_from
_unpack_server = U32.unpack_from
_crc32 = zlib.crc32


def read_changes(
    source: Source,
    *,
    ctx: BinlogContext | None = None,
    keys: BinlogKeys | None = None,
    batch_rows: int = 65536,
    verify_checksum: bool = True,
    allow_truncated_tail: bool = False,
    allow_unknown: bool = False,
    events: Collection[int] = frozenset(),
    flush_on: Collection[int] = DDL_EVENT_TYPES,
    offset: int = 0,
    expect_magic: bool = True,
) -> Iterator[Output]:
    """The changed rows of a binlog file as per-table Arrow batches (the module docstring)."""
    decoder = ColumnarDecoder(
        ctx,
        batch_rows=batch_rows,
        verify_checksum=verify_checksum,
        allow_unknown=allow_unknown,
        events=events,
        flush_on=flush_on,
    )
    feed_block = decoder.feed_block
    out: list[Output] = []  # (filled by feed_buffer too: emptied in place)

    def inline(buf: bytes, pos: int, at: int) -> tuple[int, int]:
        return decoder.feed_buffer(buf, pos, at, out)

    blocks = iter_raw_blocks(
        source,
        allow_truncated_tail=allow_truncated_tail,
        expect_magic=expect_magic,
        offset=offset,
        keys=keys,
        inline=inline,
    )
    while True:
        try:
            block = next(blocks, None)
            if block is not None:
                feed_block(block, out)
        except BaseException:
            ready = out[:]
            out.clear()
            yield from ready
            raise
        if out:
            ready = out[:]
            out.clear()
            yield from ready
        if block is None:
            break
    yield from decoder.flush()
