"""MariaDB's client_ed25519 signature equals RFC 8032 Ed25519 (computed here by the
``cryptography`` package, an independent implementation) when the password is 32 bytes, the
seed's length; other lengths are checked by verifying the signature with the public key."""

from __future__ import annotations

import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from hypothesis import given, settings
from hypothesis import strategies as st

from fakemaster.protocol.ed25519 import ed25519_public_key, ed25519_response
from tests.budget import examples


@settings(max_examples=examples(0.5))
@given(seed=st.binary(min_size=32, max_size=32), scramble=st.binary(min_size=32, max_size=32))
def test_a_32_byte_password_signs_as_rfc_8032(seed: bytes, scramble: bytes) -> None:
    key = Ed25519PrivateKey.from_private_bytes(seed)
    assert ed25519_response(seed, scramble) == key.sign(scramble)
    public = key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    assert ed25519_public_key(seed) == public


@settings(max_examples=examples(0.5))
@given(password=st.text(max_size=40), scramble=st.binary(min_size=32, max_size=32))
def test_any_password_signs_what_its_public_key_verifies(password: str, scramble: bytes) -> None:
    signature = ed25519_response(password, scramble)
    public = Ed25519PublicKey.from_public_bytes(ed25519_public_key(password))
    public.verify(signature, scramble)  # raises when wrong
    with pytest.raises(InvalidSignature):
        public.verify(signature, bytes(b ^ 1 for b in scramble))


def test_the_public_key_is_what_mariadb_stores() -> None:
    # What MariaDB 10.11 stores (mysql.global_priv, $.authentication_string) for an account
    # IDENTIFIED VIA ed25519 USING PASSWORD('secret'), read off a real server.
    import base64

    stored = "ZIgUREUg5PVgQ6LskhXmO+eZLS0nC8be6HPjYWR4YJY"
    assert base64.b64encode(ed25519_public_key("secret")).decode().rstrip("=") == stored
