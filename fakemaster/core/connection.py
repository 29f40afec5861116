"""The sans-IO composition of one client connection: its session and its binlog dump stream.

:class:`ServerConnection` is what the asyncio shell (:mod:`fakemaster.server.master`) runs for each
socket, and what a test drives without one: bytes from the client go to
:meth:`ServerConnection.receive_data`; the session's answers come back as actions, in order;
once the client asked for a binlog dump, :meth:`ServerConnection.dump_output` gives the dump's
packets whenever the socket can take more (the session keeps reading meanwhile: semi-sync ACKs
go to the dump, KILL and COM_QUIT to the shell).

The actions left for the shell are those only it can carry out: write bytes
(:class:`~fakemaster.core.session.SendBytes`), close, kill or end another connection's dump, start
TLS, and start streaming (:class:`~fakemaster.core.session.StartDump`, after which
:attr:`ServerConnection.dump` is set).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fakemaster.core.session import Ack, Action, DumpRequest, SendBytes, ServerSession, StartDump

__all__ = ["ServerConnection"]


class ServerConnection:
    """A client connection: its :class:`ServerSession` and, once asked for, its dump.

    ``make_dump`` builds the dump for a request (``fakemaster.core.dump.stream.DumpStream`` over the
    served store, in the server).
    """

    def __init__(self, session: ServerSession, make_dump: Callable[[DumpRequest], Any]) -> None:
        self.session = session
        self._make_dump = make_dump
        # What is streamed: the dump itself, or on a compressed connection the dump through
        # the connection's compression.
        self.dump: Any = None
        # The dump as made (a DumpStream in the server), and whether its parts may be asked
        # for directly (not through a wrapper, whose attributes may lead to the wrapped dump).
        self.made_dump: Any = None
        self.dump_parts = False

    @property
    def thread_id(self) -> int:
        return self.session.thread_id

    def initial_bytes(self) -> bytes:
        """The greeting (or the ERR of a connection over the limit)."""
        return self.session.initial_bytes()

    def receive_data(self, data: bytes) -> list[Action]:
        """Bytes from the client; the actions for the shell, in order (ACKs are handed to the
        dump here and still reported, so the shell can wake the dump up)."""
        return self.take_actions(self.session.receive_data(data))

    def take_actions(self, actions: list[Action]) -> list[Action]:
        """What follows the session's actions on this side (the dump starts, ACKs reach it):
        the second half of :meth:`receive_data`, for a shell that ran the first half,
        ``session.receive_data``, in a worker thread (the dump is made on the loop)."""
        for action in actions:
            if isinstance(action, StartDump):
                self._start_dump(action.request)
            elif isinstance(action, Ack) and self.dump is not None:
                self.dump.on_semi_sync_ack(action.position, action.file_name)
        return actions

    def _start_dump(self, request: DumpRequest) -> None:
        made = self._make_dump(request)
        self.made_dump = made
        self.dump = self.session.wrap_dump(made, request)
        self.dump_parts = self.dump is made and callable(getattr(made, "next_parts", None))

    @property
    def dump_reads_off_loop(self) -> bool:
        """The dump may be asked for output from a worker thread (one call at a time, with
        nothing else touching it meanwhile but ACKs, which go to the primary's semi-sync
        state under its lock): any dump but one through the compression, which the session
        shares for reading."""
        return self.dump_parts

    def allow_framed_spans(self) -> bool:
        """The shell can send frame-cache spans (plain TCP): tell the dump if it can use them;
        whether it can."""
        allow = getattr(self.made_dump, "allow_framed_spans", None)
        if not self.dump_parts or not callable(allow):
            return False
        allow()
        return True

    def dump_output(self) -> list[Any]:
        """The dump's next packets (buffers, and possibly a frame-cache span last); empty when
        it has nothing to send now."""
        dump = self.dump
        if dump is None:
            return []
        if self.dump_parts:
            parts: list[Any] = dump.next_parts()
            return parts
        chunk = dump.next_chunk()
        return [chunk] if chunk else []

    def connection_lost(self) -> None:
        """The socket closed: the session forgets the connection (SHOW PROCESSLIST, KILL)."""
        self.session.connection_lost()

    def close_dump(self) -> None:
        """The dump is over for good (its connection is closing): it stops counting as a
        (semi-sync) replica."""
        close = getattr(self.dump, "close", None)
        if callable(close):
            close()


def sent_bytes(actions: list[Action]) -> bytes:
    """The bytes of the SendBytes among ``actions``, in order."""
    return b"".join(action.data for action in actions if isinstance(action, SendBytes))
