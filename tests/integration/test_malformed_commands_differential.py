"""Malformed commands, each sent to a real MariaDB 10.11 and to the fake master: the same
answers (ERR numbers and texts, OK, EOF, result sets, a dump's events as one), and the same
end of the connection: open (answers a ping, closes with a FIN after a half-close), closed,
or reset (RST: the server closed with client bytes it never read, as after
python-mysql-replication's COM_BINLOG_DUMP that declares 14 bytes and sends 15).

Dumps are non-blocking here so that each ends by itself; the binlogs differ (the fake serves a
store of its own), so a dump's events are compared as "EVENTS".
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

import pytest

from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from tests.integration.test_server_robustness import small_store
from tests.peers.mariadb import MariaDBServer
from tests.support.raw_probe import Outcome, packet, probe

pytestmark = pytest.mark.mariadb

SETUP = ("SET @master_binlog_checksum=@@global.binlog_checksum", "SET @mariadb_slave_capability=4")
STALE_NAME = (*SETUP, "SELECT 1 #mysql-bin.000009")  # leaves that name where a short dump reads


def dump(position: int = 4, flags: int = 1, server_id: int = 99, name: bytes = b"") -> bytes:
    return b"\x12" + struct.pack("<IHI", position, flags, server_id) + name


FIRST = b"mysql-bin.000001"
REGISTER = (
    b"\x15" + struct.pack("<I", 7) + b"\x04host\x04user\x02pw" + struct.pack("<HII", 3307, 0, 0)
)

# name: (setup statements, raw bytes, whether the server ends the connection by itself)
CASES: dict[str, tuple[tuple[str, ...], bytes, bool]] = {
    # COM_BINLOG_DUMP
    "dump declared 14 sent 15 (python-mysql-replication)": (
        SETUP,
        packet(dump(name=b"\0\0\0\0"), declared=14),
        True,
    ),
    "dump then a stray byte": (SETUP, packet(dump(name=FIRST)) + b"\0", True),
    "dump then a ping": (SETUP, packet(dump(name=FIRST)) + packet(b"\x0e"), True),
    "dump name without NUL": (SETUP, packet(dump(name=FIRST)), True),
    "dump name, NUL, junk": (SETUP, packet(dump(name=FIRST + b"\0junk")), True),
    "dump flags 0xffff": (SETUP, packet(dump(flags=0xFFFF, name=FIRST)), True),
    "dump server id 0, blocking flags": (
        SETUP,
        packet(dump(flags=0, server_id=0, name=FIRST)),
        True,
    ),
    "dump position 0": (SETUP, packet(dump(position=0, name=FIRST)), True),
    "dump position 3": (SETUP, packet(dump(position=3, name=FIRST)), True),
    "dump name of 511 bytes": (SETUP, packet(dump(name=b"a" * 511)), True),
    "dump name of 512 bytes": (SETUP, packet(dump(name=b"a" * 512)), True),
    "dump sequence 1": (SETUP, packet(dump(name=FIRST), seq=1), True),
    "dump of the command byte only": (SETUP, packet(b"\x12"), True),
    "dump of 5 bytes": (SETUP, packet(dump()[:5]), True),
    "dump of 7 bytes, a name left by the last query": (STALE_NAME, packet(dump()[:7]), True),
    "dump of 9 bytes, a name left by the last query": (STALE_NAME, packet(dump()[:10]), True),
    "dump of the fixed fields only": (STALE_NAME, packet(dump()), True),
    "MySQL's dump_gtid": ((), packet(b"\x1e" + struct.pack("<HII", 0, 5, 16) + FIRST), False),
    # COM_REGISTER_SLAVE
    "register": ((), packet(REGISTER), False),
    "register, trailing bytes": ((), packet(REGISTER + b"junk"), False),
    "register, host past the end": ((), packet(b"\x15" + struct.pack("<I", 7) + b"\x40ho"), False),
    "register, command byte only": ((), packet(b"\x15"), False),
    "register without master id": ((), packet(REGISTER[:-4]), False),
    "register without port": ((), packet(REGISTER[:-10]), False),
    # COM_QUERY
    "query empty": ((), packet(b"\x03"), False),
    "query NUL inside": ((), packet(b"\x03SELECT 1\0junk"), False),
    "query final NUL": ((), packet(b"\x03SELECT 1\0"), False),
    "query two final NULs": ((), packet(b"\x03SELECT 1\0\0"), False),
    "query blank, NUL": ((), packet(b"\x03SELECT 1 \0"), False),
    "query ';', NUL": ((), packet(b"\x03SELECT 1;\0"), False),
    "query NUL only": ((), packet(b"\x03\0"), False),
    "query sequence 5": ((), packet(b"\x03SELECT 1", seq=5), True),
    "query declaring 1 byte": ((), packet(b"\x03SELECT 1", declared=1), True),
    # COM_PING, COM_QUIT
    "ping, trailing bytes": ((), packet(b"\x0ejunk"), False),
    "ping sequence 3": ((), packet(b"\x0e", seq=3), True),
    "quit, trailing bytes": ((), packet(b"\x01junk"), True),
    "quit then a ping": ((), packet(b"\x01") + packet(b"\x0e"), True),
    "quit then a stray byte": ((), packet(b"\x01") + b"\0", True),
    # COM_INIT_DB, COM_FIELD_LIST
    "init_db empty": ((), packet(b"\x02"), False),
    "init_db, final NUL": ((), packet(b"\x02mysql\0"), False),
    "init_db, NUL inside": ((), packet(b"\x02my\0sql"), False),
    "init_db, trailing space": ((), packet(b"\x02mysql "), False),
    "USE, trailing space": ((), packet(b"\x03USE `mysql `"), False),
    "init_db unknown": ((), packet(b"\x02nosuchdb"), False),
    "field_list empty": ((), packet(b"\x04"), False),
    "field_list without a database": ((), packet(b"\x04t\0"), False),
    # others
    "empty payload": ((), packet(b""), False),
    "unknown command 0x20": ((), packet(b"\x20"), False),
    "unknown command 0xff": ((), packet(b"\xff"), False),
    "COM_SLEEP": ((), packet(b"\x00"), False),
    "COM_TIME": ((), packet(b"\x0f"), False),
    "COM_DEBUG": ((), packet(b"\x0d"), False),
    "set_option of 1 byte": ((), packet(b"\x1b\x00"), False),
    "set_option of 3 bytes": ((), packet(b"\x1b\x00\x00\x00"), False),
    "process_kill of 1 byte": ((), packet(b"\x0c\x01"), False),
}


@pytest.fixture(scope="module")
def fake() -> Iterator[BackgroundFakeMaster]:
    with BackgroundFakeMaster(ServerConfig(user="root", password=""), small_store()) as master:
        yield master


@pytest.mark.parametrize("name", list(CASES))
def test_malformed_command_as_a_real_primary_answers_it(
    name: str, mariadb_server: MariaDBServer, fake: BackgroundFakeMaster
) -> None:
    setup, raw, ends_by_itself = CASES[name]

    def run(port: int) -> Outcome:
        return probe(port, raw, setup=setup, ping=not ends_by_itself)

    real = run(mariadb_server.port)
    assert run(fake.port) == real
    assert fake.errors == []
