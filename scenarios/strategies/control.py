"""Hypothesis strategies for the control events (FDE, ROTATE, STOP, HEARTBEAT, ...)."""

from __future__ import annotations

from hypothesis import strategies as st

from fakemaster.vocabulary.constants import MARIADB_POST_HEADER_LENGTHS, EventType
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    HeartbeatEvent,
    IncidentEvent,
    RotateEvent,
    StartEncryptionEvent,
    StopEvent,
    UnknownEvent,
)

u8 = st.integers(0, 0xFF)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
u64 = st.integers(0, 0xFFFF_FFFF_FFFF_FFFF)
file_names = st.from_regex(r"[a-z][a-z0-9_-]{0,20}\.[0-9]{6}", fullmatch=True)


@st.composite
def headers(draw: st.DrawFn, flags: st.SearchStrategy[int] = u16) -> dict[str, int]:
    return {
        "timestamp": draw(u32),
        "server_id": draw(u32),
        "log_pos": draw(u32),
        "flags": draw(flags),
    }


# The reader decides from the version string whether the FDE has an alg byte, so versions
# are drawn from the two families the server knows: checksum-capable and pre-checksum.
fde_versions = st.one_of(
    st.builds(
        "{}.{}.{}-MariaDB{}".format,
        st.integers(5, 11),
        st.integers(3, 11),
        st.integers(0, 99),
        st.sampled_from(["", "-log"]),
    ),
    st.builds("5.{}.{}".format, st.integers(0, 5), st.integers(0, 99)),
)


@st.composite
def format_description_events(draw: st.DrawFn) -> FormatDescriptionEvent:
    version = draw(fde_versions)
    checksum_capable = "MariaDB" in version
    return FormatDescriptionEvent(
        **draw(headers(flags=st.sampled_from([0, 1]))),
        binlog_version=draw(st.sampled_from([4, 3, 0xFFFF])),
        server_version=version,
        server_version_tail=draw(
            st.one_of(
                st.just(b""),
                st.binary(min_size=1, max_size=20).map(lambda tail: tail.replace(b"\x00", b"x")),
            )
        ),
        create_timestamp=draw(u32),
        header_length=draw(st.sampled_from([19, 19, 20])),
        post_header_lengths=draw(
            st.one_of(st.just(MARIADB_POST_HEADER_LENGTHS), st.binary(min_size=0, max_size=200))
        ),
        checksum_alg=draw(st.sampled_from([0, 1, 255])) if checksum_capable else None,
    )


def rotate_events() -> st.SearchStrategy[RotateEvent]:
    return st.builds(
        lambda h, p, n: RotateEvent(**h, position=p, next_file=n), headers(), u64, file_names
    )


def heartbeat_events() -> st.SearchStrategy[HeartbeatEvent]:
    small = st.builds(lambda h, n: HeartbeatEvent(**h, file_name=n), headers(), file_names)
    big = st.builds(
        lambda h, p, n: HeartbeatEvent(**{**h, "log_pos": 0}, position=p, file_name=n),
        headers(),
        st.integers(1 << 32, (1 << 48) - 1),
        file_names,
    )
    return st.one_of(small, big)


def stop_events() -> st.SearchStrategy[StopEvent]:
    return st.builds(lambda h: StopEvent(**h), headers())


def start_encryption_events() -> st.SearchStrategy[StartEncryptionEvent]:
    return st.builds(
        lambda h, s, k, n: StartEncryptionEvent(**h, scheme=s, key_version=k, nonce=n),
        headers(),
        u8,
        u32,
        st.binary(min_size=12, max_size=12),
    )


def incident_events() -> st.SearchStrategy[IncidentEvent]:
    return st.builds(
        lambda h, i, m: IncidentEvent(**h, incident=i, message=m),
        headers(),
        u16,
        st.binary(max_size=255),
    )


def unknown_events() -> st.SearchStrategy[UnknownEvent]:
    """Ignorable events of codes no server uses yet, and MySQL's events, kept as bodies."""
    return st.one_of(
        st.builds(
            lambda h, c, b: UnknownEvent(**h, code=c, body=b),
            headers(flags=st.just(0x80)),
            st.integers(200, 255),
            st.binary(max_size=300),
        ),
        st.builds(
            lambda h, c, b: UnknownEvent(**h, code=c, body=b),
            headers(),
            st.sampled_from([EventType.PREVIOUS_GTIDS, EventType.MYSQL_GTID, EventType.IGNORABLE]),
            st.binary(max_size=100),
        ),
    )


def control_events() -> st.SearchStrategy[Event]:
    """Every control event; FDEs are left out because they change the stream's checksum."""
    return st.one_of(
        rotate_events(),
        heartbeat_events(),
        stop_events(),
        start_encryption_events(),
        incident_events(),
        unknown_events(),
    )
