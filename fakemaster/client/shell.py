"""What the blocking and the asyncio replica shells share (:mod:`fakemaster.client.blocking`,
:mod:`fakemaster.client.aio`): their fields and counters, the resume position, the reconnect
policy and how a failed connection counts, and what one read's happenings hand over. The
shells keep only their I/O: connecting, reading, writing and waiting."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from fakemaster.client.changes import ChangeStream
from fakemaster.client.position import CommittedGroup, GroupAssembler, Position, ReceivedEvent
from fakemaster.client.protocol import (
    ClientConfig,
    ClientError,
    ConnectionLost,
    EventReceived,
    Happening,
    Ready,
    StreamEnded,
)
from fakemaster.vocabulary.events import HeartbeatEvent

__all__ = ["ReconnectPolicy", "ReplicaShell"]


@dataclass(frozen=True, slots=True)
class ReconnectPolicy:
    """``max_retries`` connections in a row that hand over nothing before the last error is
    raised; ``delay`` seconds before each reconnect (doubling up to ``max_delay``).
    ``report``, when given, is told of every failed connection the client retries after:
    ``report(failures_in_a_row, error, seconds_until_the_next_attempt)``."""

    max_retries: int = 10
    delay: float = 0.05
    max_delay: float = 2.0
    report: Callable[[int, BaseException, float], None] | None = field(default=None, compare=False)

    @classmethod
    def as_replica(
        cls,
        connect_retry: float = 60.0,
        retry_count: int = 100_000,
        report: Callable[[int, BaseException, float], None] | None = None,
    ) -> ReconnectPolicy:
        """What a MariaDB replica does with ``MASTER_CONNECT_RETRY`` (``connect_retry`` s,
        default 60) and ``master_retry_count`` (default 100000, about 69 days at 60 s): up to
        ``retry_count`` attempts, ``connect_retry`` seconds apart once the backoff (from
        0.05 s, doubling: a blip costs no minute) reaches it."""
        return cls(
            max_retries=retry_count,
            delay=min(0.05, connect_retry),
            max_delay=connect_retry,
            report=report,
        )

    def backoff(self, failures: int) -> float:
        """Seconds to wait before the next connection after ``failures`` in a row."""
        return min(self.delay * 2.0 ** (failures - 1), self.max_delay)


@dataclass
class ReplicaShell:
    """The state of a replica client across its connections (see
    :class:`~fakemaster.client.blocking.BlockingReplica` for the fields)."""

    host: str
    port: int
    config: ClientConfig = field(default_factory=ClientConfig)
    start: Position | None = None
    until: Callable[[Position], bool] | None = None
    catalogue: Mapping[str, Sequence[str]] | None = None
    reconnect: ReconnectPolicy = field(default_factory=ReconnectPolicy)
    connections: int = 0
    heartbeats: int = 0
    acks_sent: int = 0
    errors: list[ClientError] = field(default_factory=list)
    ready: Ready | None = None

    def __post_init__(self) -> None:
        self.assembler = GroupAssembler(self.start or Position(), gtid_mode=self.config.gtid_mode)
        # Holds prepared XA groups' changes across reconnects (fakemaster.client.changes).
        self.change_stream = ChangeStream(self.catalogue)

    @property
    def position(self) -> Position:
        """The position after the last group handed over."""
        return self.assembler.position

    def _done(self) -> bool:
        return self.until is not None and self.until(self.position)

    def _failed(self, error: Exception, failures: int) -> int:
        """Count a failed connection (``failures`` before it); raises when the client gives
        up: an error a new connection cannot get past, or too many failures in a row."""
        failures += 1
        if isinstance(error, ClientError):
            self.errors.append(error)
            if not error.retryable or failures > self.reconnect.max_retries:
                raise error
        else:
            self.errors.append(ConnectionLost(str(error)))
            if failures > self.reconnect.max_retries:
                raise ConnectionLost(f"{failures} connections failed: {error}") from error
        if self.reconnect.report is not None:
            self.reconnect.report(failures, error, self.reconnect.backoff(failures))
        return failures

    def _hand_over(
        self, happenings: Sequence[Happening]
    ) -> Iterator[CommittedGroup | ReceivedEvent | None]:
        """What one read's ``happenings`` hand over, lazily (a consumer that stops takes no
        group further: the position stays after the last one handed over); None when the
        dump ended."""
        for happening in happenings:
            if isinstance(happening, EventReceived):
                self.acks_sent += happening.acknowledged
                event = happening.decoded.event
                if isinstance(event, HeartbeatEvent):
                    self.heartbeats += 1
                    continue
                yield from self.assembler.feed(event, happening.raw)
            elif isinstance(happening, Ready):
                self.ready = happening
            elif isinstance(happening, StreamEnded):
                yield None
                return
