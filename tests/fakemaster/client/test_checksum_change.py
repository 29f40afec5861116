"""The client resumes by file/position inside a file written without checksums after the
history turned them on: the fake master sends, as a real 10.11 primary does
(tests/integration/test_client_recording.py), that file's FORMAT_DESCRIPTION with its own
algorithm OFF and a CRC not recomputed after log_pos was zeroed, though the client negotiated
CRC32; the client checks that FDE's CRC by its own algorithm byte and gets every later group."""

from __future__ import annotations

from fakemaster.client.blocking import BlockingReplica
from fakemaster.client.position import CommittedGroup, Position
from fakemaster.client.protocol import ClientConfig
from fakemaster.config.server_config import ServerConfig
from fakemaster.server.master import BackgroundFakeMaster
from scenarios import Scenario, Settings, to_store


def test_resumed_inside_a_checksumless_file_after_checksums_were_turned_on() -> None:
    scenario = Scenario(Settings(binlog_checksum=False, binlog_row_metadata="FULL"))
    scenario.create_table("CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(20))")
    for n in range(1, 5):
        scenario.insert("d.t", {"id": n, "v": f"row {n}"})
    scenario.set(binlog_checksum=True)  # rotates
    for n in range(5, 8):
        scenario.insert("d.t", {"id": n, "v": f"row {n}"})
    config = ClientConfig(user="root", server_id=77, gtid_mode=False, non_blocking=True)
    with BackgroundFakeMaster(ServerConfig(), to_store(scenario)) as master:
        with BlockingReplica(master.host, master.port, config) as everything:
            whole = [item for item in everything.items() if isinstance(item, CommittedGroup)]
            assert everything.ready is not None and everything.ready.checksum
        # The second insert's group ends inside the first file: resume there.
        after_two = whole[2].position
        assert after_two.file == "mysql-bin.000001" and after_two.position > 4
        assert whole[-1].position.file == "mysql-bin.000002"
        start = Position(file=after_two.file, position=after_two.position)
        with BlockingReplica(master.host, master.port, config, start=start) as resumed:
            items = list(resumed.items())
            assert resumed.errors == []
        groups = [item for item in items if isinstance(item, CommittedGroup)]
        assert [group.gtid for group in groups] == [group.gtid for group in whole[3:]]
        fdes = [
            item.raw for item in items if not isinstance(item, CommittedGroup) and item.raw[4] == 15
        ]
        assert [bytes(fde)[-5] for fde in fdes] == [0, 1]
