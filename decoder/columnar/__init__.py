"""Rows events decoded straight into Arrow columns, per table (the Spark pipeline's hot path).

pyarrow is imported when the first batch is built (``pip install 'fakemaster[spark]'``), not
when this module is.

The function the pipeline calls::

    read_changes(
        source,                      # a binlog file path, or a binary file object
        *,
        ctx=None,                    # BinlogContext: temporal_precisions, checksum, table maps
        keys=None,                   # BinlogKeys of an encrypted file
        batch_rows=65536,            # a table's rows are given out in batches of about this many
        verify_checksum=True,
        allow_truncated_tail=False,  # a file still being written: stop before a partial event
        events=frozenset(),          # type codes of the other events to give out, decoded
        flush_on=DDL_EVENT_TYPES,    # type codes before which every table's rows are given out
        offset=0, expect_magic=True, # where ``source`` starts (a file object read mid-file)
    ) -> Iterator[ChangeBatch | tuple[int, Event]]

It yields :class:`ChangeBatch` objects (one table's rows, an Arrow record batch) and, for the
type codes in ``events``, ``(offset, event)`` pairs decoded as ``decoder.read_binlog`` decodes
them. Everything is in binlog order except that a table's rows are held until its batch is
full: they come out when ``batch_rows`` is reached, when a TABLE_MAP gives the table id another
shape, before an event whose type is in ``flush_on`` (QUERY and QUERY_COMPRESSED by default:
DDL; not before BEGIN, COMMIT or ROLLBACK), and at the end of the input. The order of the rows
themselves is always given by ``(event_offset, row)``; within a batch they are in that order.
:class:`ColumnarDecoder` is the same thing sans-IO (``feed(offset, event_bytes)`` per event,
``flush()``), for a replication stream; ``read_changes`` on a path hands it the file's events
straight from the read buffer (``ColumnarDecoder.feed_buffer``: one header unpack per event, no
``(offset, bytes)`` pair), the others framed and fed as usual.

Each batch's record batch has one row per changed row:

============== ====================== ====================================================
column         Arrow type             value
============== ====================== ====================================================
op             string                 ``c`` WRITE (insert), ``u`` UPDATE, ``d`` DELETE
event_offset   int64                  the rows event's offset in its file (or stream)
row            int32                  the row's index in its event
log_pos        int64                  the event header's end position
timestamp      int64                  the event header's timestamp (seconds)
server_id      int64                  the event header's server id
gtid_domain    int64 (nullable)       the last GTID event before the rows event: domain,
gtid_server    int64 (nullable)       server id and sequence number (null when the input
gtid_seq       decimal(20,0) (null.)  had none before it)
before         struct (nullable)      the before image (UPDATE, DELETE), null for ``c``
after          struct (nullable)      the after image (WRITE, UPDATE), null for ``d``
before_present binary (nullable)      the image's columns-present bitmap as in the event
after_present  binary (nullable)      (a column it leaves out is null in the struct)
============== ====================== ====================================================

The struct fields are the table's columns, named as the TABLE_MAP's COLUMN_NAME metadata says
(``binlog_row_metadata=FULL``), otherwise ``c0``, ``c1``...; typed per column type:

* integers: the smallest signed type that holds every value (TINYINT int8, TINYINT UNSIGNED
  int16, ..., INT UNSIGNED int64, BIGINT UNSIGNED decimal(20,0)); YEAR int16; BIT(M), ENUM
  (index) and SET (bitmask) the same, from their bit count (Spark has no unsigned types);
* FLOAT float32, DOUBLE float64; DECIMAL(p,s) decimal128(p,s), or decimal256(p,s) above 38
  digits (Spark reads up to 38);
* DATE date32; DATETIME timestamp[us] (no time zone); TIMESTAMP timestamp[us, tz=UTC]; TIME
  duration[us] (negative and over 24 hours as MariaDB keeps them); every fsp and the MariaDB
  5.3 formats (with ``ctx.temporal_precisions``). A DATE or DATETIME that is not a calendar
  date (zero dates, month or day 0, year 0) and the zero TIMESTAMP (0 seconds) are null;
* CHAR/BINARY, VARCHAR, TEXT/BLOB, JSON, GEOMETRY, compressed columns: binary, the bytes as
  stored (the column's charset, if any, is the TABLE_MAP's);
* columns of type NULL: null.

The values are those the row decoder (``decoder.read_binlog``) gives, converted
(tests/decoder/test_columnar.py checks that against the row decoder's values handed to
``pyarrow.array`` as Python objects). How they are read: when a rows event is fed, a walk
compiled per table shape and column-present bitmaps (the row decoder's, without reading the
values) finds where each row starts; when the batch is built, every column is read at once over
all the rows of the same kind and bitmaps with numpy (the row images of all those events side by
side): fixed-size columns as a byte matrix converted by array arithmetic (integers, floats,
DECIMALs of up to 18 digits, DATE, DATETIME2, TIMESTAMP2, TIME2), strings as offsets and one
join. The rarer columns (longer DECIMALs, MariaDB 5.3 and old temporal formats, INT24, YEAR...)
go through the row decoder's own value statements one value at a time. Without numpy, or for a
batch of fewer than ``_VECTOR_MIN`` rows, the rows are read by the row decoder's generated code
(decoder/row_images.py) into tuples of raw values and converted a column at a time. The row
decoder's refusals (digit groups out of range, fractions of a second or more...) are raised
here too. Events of types not in ``events`` other than FORMAT_DESCRIPTION, TABLE_MAP, GTID, the
rows events and (for ``flush_on``) QUERY are checked for framing and CRC32 only, not decoded; a
GTID is read for its numbers only; a QUERY of ``flush_on`` not in ``events`` whose body equals
one decoded before as not DDL (a server's COMMIT after each statement on a non-transactional
table) is only checked.

numpy: it comes with PySpark's Arrow support (``pyspark[sql]``) and with most pyarrow installs;
this package imports it lazily and works without it (slower).

The modules, from the decoder down:

============== ==============================================================================
decoder        ColumnarDecoder (events in, each table's rows events held) and read_changes
batches        a table's held rows events made into a ChangeBatch (numpy, or the row decoder's
               way)
images         a batch's joined row images read a column at a time (numpy)
scanner        the walk compiled per table shape and bitmaps: where each row image starts
shape          a table shape's column readers, Arrow conversions, scanners and fields
numeric        fixed-size raw columns converted a column at a time (numpy)
arrow_types    a column's Arrow type and its per-value conversion (_Column)
libraries      pyarrow and numpy imported on first use; ``_VECTOR_MIN``
============== ==============================================================================
"""

from __future__ import annotations

from decoder.columnar.arrow_types import arrow_type
from decoder.columnar.batches import ChangeBatch
from decoder.columnar.decoder import DDL_EVENT_TYPES, ColumnarDecoder, read_changes

__all__ = [
    "DDL_EVENT_TYPES",
    "ChangeBatch",
    "ColumnarDecoder",
    "arrow_type",
    "read_changes",
]
