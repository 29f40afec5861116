"""Hostile SQL on one connection while a replica streams a dump on another: every statement is
answered and the dump goes on between the answers.

SQL runs on the event loop every connection shares, so a statement that took a minute (a LIKE
translated to a backtracking regex, a lazy pattern over a long run of spaces, a per-character
scan of a long literal) or that blew Python's stack would stall the replica. No verdict here
depends on the clock: the dump's packets are counted, and the waits only bound a hang.
"""

from __future__ import annotations

import asyncio
import socket
import threading

from decoder.packets import parse_err
from fakemaster.server.master import FakeMaster
from tests.fakemaster.server.test_server import CONFIG, DumpRecorder, dump_command, open_raw, until
from tests.support.wire import RawClient

DEEP = 40_000
HOSTILE = [  # a statement and a piece of its expected answer
    ("SHOW VARIABLES LIKE '" + "%" * 10_000 + "server\\_id'", b"server_id"),
    ("SHOW VARIABLES WHERE Variable_name LIKE '" + "%_" * 4 + "%" * 5_000 + "_id'", b"server_id"),
    ("SET STATEMENT" + " " * (1 << 20) + "max_statement_time=1 FOR SELECT 'set'", b"set"),
    ("SELECT '" + "x" * (4 << 20) + "' AS long_literal", b"long_literal"),
    ("SELECT " + "(" * DEEP + "1" + ")" * DEEP, b"memory exhausted near"),
    ("SHOW VARIABLES WHERE " + "NOT " * DEEP + "Variable_name=''", b"memory exhausted near"),
]
EVENTS_PER_STATEMENT = 50  # binlog events that arrive while each hostile statement is sent


class CountingReader:
    """Reads a replica's dump packets on a thread until its socket closes, counting them."""

    def __init__(self, replica: RawClient) -> None:
        self.replica = replica
        self.count = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while True:
                if self.replica.read() == b"\x00event":
                    self.count += 1
        except (ConnectionError, OSError):
            return


async def test_hostile_statements_are_answered_while_a_dump_streams() -> None:
    recorder = DumpRecorder([b"event"], then="wait")
    async with FakeMaster(CONFIG, dump_factory=recorder) as master:
        replica = await open_raw(master)
        replica.write(dump_command())
        reader = CountingReader(replica)
        await until(lambda: reader.count == 1, "the dump to start")
        client = await open_raw(master)
        prober = await open_raw(master)
        sent = 1
        for sql, expected in HOSTILE:
            # New events for the replica, announced as the hostile statement goes out.
            for _ in range(EVENTS_PER_STATEMENT):
                recorder.dumps[0].append(b"event")
            master.notify_binlog_changed()
            sent += EVENTS_PER_STATEMENT
            answer = await asyncio.to_thread(client.query, sql)
            assert any(expected in payload for payload in answer), (sql[:40], answer[:2])
            if expected.startswith(b"memory"):
                assert parse_err(answer[0]).errno == 1064
            # The server is still everyone's: the replica gets every event, a third
            # connection is answered.
            await until(lambda sent=sent: reader.count == sent, "the dump to deliver the events")
            prober.write(b"\x0e")  # COM_PING
            assert (await asyncio.to_thread(prober.read))[:1] == b"\x00"
        client.close()
        prober.close()
        replica.sock.shutdown(socket.SHUT_RDWR)  # ends the reader's recv at once
        await asyncio.to_thread(reader.thread.join)
        replica.sock.close()
        assert master.errors == []
