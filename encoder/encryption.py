"""Encrypted binlog files: event encryption (mirror of decoder/encryption.py).

A file is encrypted the way MariaDB's ``encrypt_binlog=ON`` does it: the FDE and the
START_ENCRYPTION event in clear, every later event encrypted on its own with IV = nonce +
its file offset (the layout is described in fakemaster/vocabulary/encryption.py). Encrypting the plaintext
of a server's file with its nonce and key gives back the server's bytes.
"""

from __future__ import annotations

import os

from encoder.fields import check_fields
from encoder.primitives import buffer_argument
from fakemaster.vocabulary.encryption import (
    NONCE_LEN,
    SCHEME,
    SYSTEM_DATA_KEY_ID,
    Algorithm,
    BinlogKeys,
    crypt_event,
    crypto_problem,
)
from fakemaster.vocabulary.errors import DecodeError, EncodeError
from fakemaster.vocabulary.events import StartEncryptionEvent

__all__ = ["FileEncryption", "encrypt_event", "start_encryption_event"]


def _check(crypto: StartEncryptionEvent, key: bytes) -> None:
    if not isinstance(crypto, StartEncryptionEvent):
        raise EncodeError(f"expected a StartEncryptionEvent, not {type(crypto).__name__}")
    try:
        check_fields(crypto)
    except EncodeError as exc:
        raise exc.in_event("START_ENCRYPTION") from None
    buffer_argument(key, "the key")
    problem = crypto_problem(crypto, key)
    if problem is not None:
        raise EncodeError(problem)


def _check_offset(offset: object) -> None:
    if not isinstance(offset, int) or offset < 0:
        raise EncodeError(f"an event's file offset must be an int >= 0, not {offset!r}")


def encrypt_event(
    data: bytes | bytearray | memoryview,
    offset: int,
    crypto: StartEncryptionEvent,
    key: bytes,
    *,
    algorithm: Algorithm = Algorithm.AES_CBC,
) -> bytes:
    """The on-disk bytes of the plaintext event ``data`` (header, body, CRC) written at file
    ``offset`` after the START_ENCRYPTION ``crypto``, with ``key`` (key id 1 at
    ``crypto.key_version``)."""
    _check(crypto, key)
    buffer_argument(data, "the event")
    _check_offset(offset)
    if not isinstance(algorithm, Algorithm):
        raise EncodeError(f"algorithm {algorithm!r} is not an Algorithm")
    try:
        return crypt_event(data, offset, crypto.nonce, key, algorithm, encrypt=True)
    except DecodeError as exc:  # a length field that does not match the bytes
        raise EncodeError(f"cannot encrypt the event at offset {offset}: {exc.reason}") from None


def start_encryption_event(
    *,
    key_version: int = 1,
    nonce: bytes | None = None,
    timestamp: int = 0,
    server_id: int = 1,
    log_pos: int = 0,
    flags: int = 0,
) -> StartEncryptionEvent:
    """A START_ENCRYPTION event, with a random nonce unless one is given (as the server's)."""
    return StartEncryptionEvent(
        timestamp=timestamp,
        server_id=server_id,
        log_pos=log_pos,
        flags=flags,
        scheme=SCHEME,
        key_version=key_version,
        nonce=os.urandom(NONCE_LEN) if nonce is None else nonce,
    )


class FileEncryption:
    """Encryption of one binlog file's events, from its START_ENCRYPTION on.

    The file writer calls :meth:`begin` with the START_ENCRYPTION event it writes (in clear)
    and :meth:`encrypt` for every later event. ``keys.algorithm`` None means AES_CBC, the
    server's default. A START_ENCRYPTION flagged IGNORABLE (as the dump thread sends it)
    starts nothing, as readers do not decrypt after it (see decoder/encryption.py).
    """

    __slots__ = ("keys", "algorithm", "crypto", "_key")

    def __init__(self, keys: BinlogKeys) -> None:
        self.keys = keys
        self.algorithm = keys.algorithm or Algorithm.AES_CBC
        self.crypto: StartEncryptionEvent | None = None
        self._key = b""

    @property
    def active(self) -> bool:
        return self.crypto is not None

    def begin(self, crypto: StartEncryptionEvent) -> None:
        key = self.keys.key(crypto.key_version)
        if key is None:
            raise EncodeError(
                f"no key id {SYSTEM_DATA_KEY_ID} version {crypto.key_version} for the "
                f"START_ENCRYPTION event"
            )
        _check(crypto, key)
        self.crypto = crypto
        self._key = key

    def encrypt(self, offset: int, data: bytes | bytearray | memoryview) -> bytes:
        crypto = self.crypto
        if crypto is None:
            raise EncodeError("no START_ENCRYPTION event was written before an encrypted one")
        buffer_argument(data, "the event")
        _check_offset(offset)
        try:
            return crypt_event(data, offset, crypto.nonce, self._key, self.algorithm, encrypt=True)
        except DecodeError as exc:
            raise EncodeError(
                f"cannot encrypt the event at offset {offset}: {exc.reason}"
            ) from None
