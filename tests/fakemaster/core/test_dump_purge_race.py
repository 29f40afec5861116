"""A forced purge of the file a dump reads, landing between the dump's two looks at the file
(its size, then its bytes; or, inside the store's read, the size and the range): the dump ends
with ERR 1236 "could not find next log" after whole events, as at its next read of the file,
never with an exception out of the dump (which closed the connection without a packet: the
race tests/fakemaster/faults/test_server_hooks.py's purge test lost under load)."""

from __future__ import annotations

import pytest

from fakemaster.core.dump.stream import DumpStream
from fakemaster.store import MemoryBinlogStore
from fakemaster.vocabulary.constants import HEADER_LEN
from fakemaster.vocabulary.events import QueryEvent
from tests.fakemaster.core.test_dump import err_text, request, run, split

__all__: list[str] = []

FIRST = "mysql-bin.000001"
LAST = "mysql-bin.000003"


class PurgedOnRead(MemoryBinlogStore):
    """Purges up to the last file (forced: the dump's file too) at the first read of the
    first file past its header events, at the point ``where`` says."""

    def __init__(self, where: str) -> None:
        super().__init__()
        self.where = where
        self.armed = False
        self.fired = False

    def _fire(self, name: str, offset: int) -> None:
        if self.armed and not self.fired and name == FIRST and offset > 4:
            self.fired = True
            self.purge_to(LAST)

    def read(self, name: str, offset: int, max_bytes: int = 1 << 20) -> bytes:
        if self.where == "before the read" and max_bytes > HEADER_LEN:
            # A block of events (not a look at one event's header, which _read_one takes).
            self._fire(name, offset)
        return super().read(name, offset, max_bytes)

    def _read_range(self, name: str, offset: int, size: int) -> bytes:
        if self.where == "inside the read":
            self._fire(name, offset)
        return super()._read_range(name, offset, size)


@pytest.mark.parametrize("where", ["before the read", "inside the read"])
def test_a_purge_between_the_dumps_size_check_and_its_read_ends_it_with_1236(where: str) -> None:
    store = PurgedOnRead(where)
    for number in range(8):
        store.append_transaction([QueryEvent(query=b"SELECT %d" % number, database="")])
    store.rotate()
    store.rotate()
    store.armed = True
    stream = DumpStream(store, request())
    data = run(stream)
    assert store.fired and stream.is_finished
    assert store.file_names() == [LAST]
    events, end = split(data)
    assert events  # the fake ROTATE and the format description came first
    errno, text = err_text(end)
    assert errno == 1236
    assert text.startswith(f"could not find next log; the first event '{FIRST}' at 4, ")
