"""COM_CHANGE_USER's body as MariaDB reads it (the malformed cases are the ones a real 10.11
answered with 1047 in tests/integration/test_change_user_differential.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.protocol.change_user import ChangeUser
from fakemaster.protocol.handshake import Capability
from fakemaster.vocabulary.errors import DecodeError
from tests.budget import examples

MODERN = Capability.PROTOCOL_41 | Capability.SECURE_CONNECTION | Capability.PLUGIN_AUTH


def test_a_full_request() -> None:
    body = b"bob\0\x03abcshop\0\x08\x00mysql_native_password\0"
    request = ChangeUser.parse(body, MODERN)
    assert request == ChangeUser(b"bob", b"abc", b"shop", 8, b"mysql_native_password")


def test_an_old_client_sends_no_plugin_and_a_nul_terminated_password() -> None:
    request = ChangeUser.parse(b"bob\0pw\0shop\0", Capability.PROTOCOL_41)
    assert request == ChangeUser(b"bob", b"pw", b"shop", None, None)


@pytest.mark.parametrize(
    "body",
    [b"root", b"root\0", b"root\0\0keys\0"],
    ids=["no user terminator", "only a user", "cut before the plugin"],
)
def test_requests_cut_short_are_refused(body: bytes) -> None:
    with pytest.raises(DecodeError):
        ChangeUser.parse(body, MODERN)


@settings(max_examples=examples(1), deadline=None)
@given(body=st.binary(max_size=80), capabilities=st.sampled_from([0, int(MODERN)]))
def test_any_body_parses_or_is_refused(body: bytes, capabilities: int) -> None:
    try:
        request = ChangeUser.parse(body, capabilities)
    except DecodeError:
        return
    assert body.startswith(request.user + b"\0")
