"""The dump thread's socket writer: gathered buffers and file ranges arrive whole and in order
through a socket that takes a little at a time, and an abort frees a writer that waits."""

from __future__ import annotations

import os
import random
import socket
import tempfile
import threading
from collections.abc import Iterator
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.core.dump.framing import FramedSpan
from fakemaster.server import sender
from fakemaster.server.sender import SocketWriter, pump_dump
from tests.budget import examples
from tests.peers.policy import require_peer


def _needs_the_extension() -> None:
    require_peer(
        "fakemaster.server._send_accel (the C write loop)",
        sender.ACCELERATED,
        "install the package where a C compiler and the Python headers are "
        "(apt-get install gcc python3-dev; scripts/install-deps.sh does), or in a checkout "
        "`python3 setup.py build_ext --inplace`",
    )


@pytest.fixture(scope="module", autouse=True, params=["c", "python"])
def write_loop(request: pytest.FixtureRequest) -> Iterator[str]:
    """Every test with the write loop as served (in C), then with the loop in Python."""
    if request.param == "c":
        _needs_the_extension()
        yield "c"
    else:
        with mock.patch.object(sender, "_send_views", None):
            yield "python"


def small_socket_pair() -> tuple[socket.socket, socket.socket]:
    left, right = socket.socketpair()
    for sock in (left, right):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    left.setblocking(False)  # as an asyncio transport leaves it
    return left, right


def read_all(sock: socket.socket, out: bytearray, pieces: list[int]) -> None:
    """Read until the peer closes, in pieces of the given sizes (cycled)."""
    index = 0
    while True:
        data = sock.recv(pieces[index % len(pieces)])
        if not data:
            return
        out += data
        index += 1


@settings(max_examples=examples(0.5), deadline=None)
@given(
    sizes=st.lists(st.integers(0, 70_000), max_size=40),
    pieces=st.lists(st.integers(1, 9000), min_size=1, max_size=5),
    seed=st.integers(0, 2**32),
)
def test_buffers_arrive_whole_and_in_order(sizes: list[int], pieces: list[int], seed: int) -> None:
    rng = random.Random(seed)
    buffers: list[bytes | bytearray | memoryview] = []
    for size in sizes:
        data = rng.randbytes(size)
        kind = rng.randrange(3)
        buffers.append(data if kind == 0 else bytearray(data) if kind == 1 else memoryview(data))
    expected = b"".join(bytes(buffer) for buffer in buffers)
    left, right = small_socket_pair()
    received = bytearray()
    reader = threading.Thread(target=read_all, args=(right, received, pieces))
    reader.start()
    writer = SocketWriter(left.fileno())
    try:
        writer.send_buffers(buffers)
    finally:
        writer.close()
        left.close()
    reader.join(timeout=60)
    right.close()
    assert bytes(received) == expected


def test_a_file_range_arrives_whole() -> None:
    data = os.urandom(300_000)
    with tempfile.TemporaryFile() as file:
        file.write(data)
        file.flush()
        left, right = small_socket_pair()
        received = bytearray()
        reader = threading.Thread(target=read_all, args=(right, received, [777]))
        reader.start()
        writer = SocketWriter(left.fileno())
        writer.send_file(file.fileno(), 12_345, 250_000)
        writer.close()
        left.close()
        reader.join(timeout=60)
        right.close()
    assert bytes(received) == data[12_345 : 12_345 + 250_000]


def test_a_file_that_ends_before_its_range_ends_the_write() -> None:
    """sendfile returns 0 at the end of a file (one truncated since its size was known): the
    write ends with an error instead of looping."""
    with tempfile.TemporaryFile() as file:
        file.write(os.urandom(10_000))
        file.flush()
        left, right = small_socket_pair()
        received = bytearray()
        reader = threading.Thread(target=read_all, args=(right, received, [4096]))
        reader.start()
        writer = SocketWriter(left.fileno())
        with pytest.raises(ConnectionResetError, match="ends before offset 20000"):
            writer.send_file(file.fileno(), 0, 20_000)
        writer.close()
        left.close()
        reader.join(timeout=60)
        right.close()
    assert len(received) == 10_000


def test_a_mapped_file_truncated_under_a_write_fails_it_without_a_signal() -> None:
    """Pages of a mapped file past its new end: read by the kernel in sendmsg they give
    EFAULT (an error the dump ends with), never the SIGBUS a read in the process would."""
    import mmap

    with tempfile.TemporaryFile() as file:
        file.write(os.urandom(1 << 20))
        file.flush()
        mapped = mmap.mmap(file.fileno(), 1 << 20, access=mmap.ACCESS_READ)
        view = memoryview(mapped)[1 << 19 :]
        os.ftruncate(file.fileno(), 4096)
        left, right = small_socket_pair()
        reader = threading.Thread(target=read_all, args=(right, bytearray(), [4096]))
        reader.start()
        writer = SocketWriter(left.fileno())
        with pytest.raises(ConnectionResetError, match="Bad address"):
            writer.send_buffers([b"head", view])
        writer.close()
        left.close()
        reader.join(timeout=60)
        right.close()
        view.release()
        mapped.close()


def test_an_abort_frees_a_writer_waiting_for_a_replica_that_does_not_read() -> None:
    left, right = small_socket_pair()
    writer = SocketWriter(left.fileno())
    failures: list[BaseException] = []

    def write() -> None:
        try:
            writer.send_buffers([b"x" * (8 << 20)])
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join(timeout=0.5)
    assert thread.is_alive()  # the peer reads nothing: the writer waits
    writer.abort()
    thread.join(timeout=60)
    assert not thread.is_alive()
    assert [type(error) for error in failures] == [ConnectionResetError]
    writer.close()
    left.close()
    right.close()


def test_the_pump_stops_before_writing_to_a_replica_that_hung_up() -> None:
    batches = [[b"first"], [b"second"]]
    left, right = small_socket_pair()
    writer = SocketWriter(left.fileno())
    allowed = iter([True, False])

    def span(part: FramedSpan, _: SocketWriter) -> None:
        raise AssertionError("no span here")

    with pytest.raises(ConnectionResetError):
        pump_dump(lambda: batches.pop(0) if batches else [], writer, span, lambda: next(allowed))
    writer.close()
    left.close()
    assert right.recv(100) == b"first"
    right.close()
