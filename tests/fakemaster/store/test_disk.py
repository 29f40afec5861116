"""DiskBinlogStore: the memory store's files, written into a directory as they grow; the same
operations give the same bytes as a MemoryBinlogStore, readable while written, and the directory
is what a DirectoryBinlogStore serves."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.store import DirectoryBinlogStore, MemoryBinlogStore
from fakemaster.store.disk import DiskBinlogStore, DiskFile
from fakemaster.vocabulary.events import QueryEvent, XidEvent
from tests.budget import examples

__all__: list[str] = []

OPERATIONS = st.lists(
    st.sampled_from(("tx", "big", "rotate", "restart", "read", "purge")), max_size=12
)


def apply(store: MemoryBinlogStore, operation: str) -> None:
    if operation == "tx":
        store.append_transaction([QueryEvent(query=b"INSERT 1"), XidEvent(xid=7)])
    elif operation == "big":  # more than the write-behind buffer at once
        store.append_transaction([QueryEvent(query=b"x" * 70_000)])
    elif operation == "rotate":
        store.rotate()
    elif operation == "restart":
        store.restart(server_id=5)
    elif operation == "purge":
        store.purge_to(store.file_names()[-1])


def contents(store: MemoryBinlogStore) -> dict[str, bytes]:
    return {name: store.read_bytes(name, 0, store.file_size(name)) for name in store.file_names()}


@settings(max_examples=examples(0.5), deadline=None)
@given(OPERATIONS)
def test_the_same_bytes_as_the_memory_store(operations: list[str]) -> None:
    """Transactions, rotations, restarts and purges in any order: the disk store reads what the
    memory store holds after each operation, and its directory, closed, holds the same files,
    listed in order in its index, which a DirectoryBinlogStore serves byte for byte."""
    import tempfile

    with tempfile.TemporaryDirectory() as where:
        memory = MemoryBinlogStore(clock=lambda: 1000.0)
        with DiskBinlogStore(where, clock=lambda: 1000.0) as disk:
            for operation in operations:
                apply(memory, operation)
                apply(disk, operation)
                if operation == "read":
                    assert contents(disk) == contents(memory)
            assert disk.end_state().gtid_list() == memory.end_state().gtid_list()
        expected = contents(memory)
        listed = (Path(where) / "mysql-bin.index").read_text().split()
        on_disk = {Path(p).name: (Path(where) / p).read_bytes() for p in listed}
        assert {n: on_disk[n] for n in expected} == expected
        with DirectoryBinlogStore(where) as served:
            assert {n: contents(served)[n] for n in expected} == expected


def test_a_disk_file_is_appended_behind_and_overwritten_in_place(tmp_path: Path) -> None:
    path = tmp_path / "f"
    data = DiskFile(path, b"abc")
    data += b"def"
    assert len(data) == 6 and path.read_bytes() == b""  # still buffered
    assert data[1:5] == b"bcde"  # a read writes the buffer out first
    data[0:1] = b"A"
    data.close()
    assert path.read_bytes() == b"Abcdef"
    assert data[0:2] == b"Ab"  # opened again to be read
    data.close()
