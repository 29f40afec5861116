"""The reconnect policy as a replica's (``MASTER_CONNECT_RETRY``, ``master_retry_count``):
every failed attempt reported with the wait before the next one, and the last error raised
after ``retry_count`` attempts in a row (a port nobody listens on: the attempts are counted
by the report, not by the code's own counter)."""

from __future__ import annotations

import socket

import pytest

from fakemaster.client.blocking import BlockingReplica, ReconnectPolicy
from fakemaster.client.protocol import ClientConfig, ConnectionLost


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_replica_policy_defaults_are_a_replicas() -> None:
    policy = ReconnectPolicy.as_replica()
    assert (policy.max_retries, policy.max_delay) == (100_000, 60.0)
    # Backoff from 0.05 s doubling, capped at MASTER_CONNECT_RETRY.
    assert [policy.backoff(n) for n in (1, 2, 3)] == [0.05, 0.1, 0.2]
    assert policy.backoff(20) == 60.0
    assert ReconnectPolicy.as_replica(0.01).backoff(1) == 0.01


def test_every_failed_attempt_is_reported_then_the_last_error_raised() -> None:
    reports: list[tuple[int, str, float]] = []
    policy = ReconnectPolicy.as_replica(
        0.01, 4, report=lambda n, error, wait: reports.append((n, type(error).__name__, wait))
    )
    replica = BlockingReplica(
        "127.0.0.1", _closed_port(), ClientConfig(non_blocking=True), reconnect=policy
    )
    with pytest.raises(ConnectionLost, match="5 connections failed"):
        list(replica.groups())
    assert reports == [(n, "ConnectionRefusedError", 0.01) for n in (1, 2, 3, 4)]
