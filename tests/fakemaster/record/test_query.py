"""record's SQL session against a scripted server (no socket): it logs in through the shared
login helper, keeps each statement's rows or (tolerated) error, and a hostile answer is a
typed error, never a crash."""

from __future__ import annotations

import struct

import pytest

from encoder.packets import encode_err, encode_ok, frame
from fakemaster.client.errors import ProtocolError
from fakemaster.protocol.handshake import HandshakeV10
from fakemaster.record.query import QueryConnection
from fakemaster.vocabulary.packets import EofPacket, ErrPacket, OkPacket

# A column definition named "v" (catalog def, no schema/table), and an EOF packet.
COLUMN = b"\x03def\x00\x00\x00\x01v\x00\x0c\x21\x00\x00\x01\x00\x00\xfd\x00\x00\x00\x00\x00"
EOF = struct.pack("<BHH", 0xFE, 0, EofPacket().status_flags)


def logged_in(statements: list[str], **options: bool) -> QueryConnection:
    session = QueryConnection("u", "pw", statements, **options)
    session.feed(frame(HandshakeV10("10.11.19-MariaDB", 5, b"abcdefghij0123456789").encode(), 0)[0])
    session.data_to_send()
    session.feed(frame(encode_ok(OkPacket()), 2)[0])
    return session


def test_rows_and_tolerated_errors_are_kept_per_statement() -> None:
    session = logged_in(["SELECT 1", "SELECT nope"], tolerate_errors=True)
    assert session.data_to_send() == frame(b"\x03SELECT 1", 0)[0]
    answer = [b"\x01", COLUMN, EOF, b"\x011", EOF]
    session.feed(b"".join(frame(p, n)[0] for n, p in enumerate(answer, 1)))
    session.feed(frame(encode_err(ErrPacket(1054, "42S22", "Unknown column")), 1)[0])
    assert session.done
    first, second = session.results
    assert (first.columns, first.rows, first.error) == (["v"], [(b"1",)], None)
    assert second.error is not None and second.error.errno == 1054


def test_an_empty_answer_is_a_typed_error() -> None:
    session = logged_in(["SELECT 1"])
    with pytest.raises(ProtocolError, match="empty packet"):
        session.feed(frame(b"", 1)[0])
