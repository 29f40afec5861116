"""The compressed protocol (``--compress``) in the replica client against the fake master,
which speaks it too (fakemaster.protocol.compression): a scenario streamed compressed equals its
oracle, plain and as a semi-sync replica (whose ACKs travel compressed and after whose
acknowledged events the primary numbers its compressed packets from 1 again). Against a real
MariaDB 10.11: tests/integration/test_client_tls_ed25519.py."""

from __future__ import annotations

from typing import Any

import pytest

from fakemaster.client import ClientConfig
from tests.support.live_stream import EXTRA, SCENARIO, stream_live_commits


@pytest.mark.parametrize("semi_sync", [False, True])
def test_a_compressed_stream_from_the_fake_master_equals_the_oracle(
    fake_master_factory: Any, semi_sync: bool
) -> None:
    """Semi-sync: the primary restarts its compressed packets' numbers after each event it
    wants acknowledged, and reads the client's ACKs compressed."""
    master = fake_master_factory(
        scenario=SCENARIO, semi_sync=semi_sync, semi_sync_timeout_ms=60_000
    )
    config = ClientConfig(
        user=master.user, password=master.password, server_id=77, semi_sync=semi_sync,
        compress=True,
    )  # fmt: skip
    client, acknowledged = stream_live_commits(master, config, wait_for_acks=semi_sync)
    assert client.ready is not None and client.ready.compressed
    assert client.ready.semi_sync is semi_sync
    assert acknowledged == [True] * EXTRA if semi_sync else acknowledged == []
