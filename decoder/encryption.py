"""Encrypted binlog files: event decryption (mirror of encoder/encryption.py).

The keys, the layout and the cipher are in fakemaster/vocabulary/encryption.py, which describes them.
:class:`FileDecryption` reads a file's events from its START_ENCRYPTION on; without an
algorithm in the keys it finds AES_CBC or AES_CTR from the first encrypted event.
"""

from __future__ import annotations

from fakemaster.vocabulary.constants import (
    BINLOG_VERSION,
    CHECKSUM_LEN,
    HEADER_LEN,
    EventFlag,
    EventType,
)
from fakemaster.vocabulary.encryption import (
    BLOCK,
    START_ENCRYPTION_BODY_LEN,
    SYSTEM_DATA_KEY_ID,
    Algorithm,
    BinlogKeys,
    crypt_event,
    crypto_problem,
)
from fakemaster.vocabulary.errors import DecodeError
from fakemaster.vocabulary.events import StartEncryptionEvent
from fakemaster.vocabulary.header import (
    CRC,
    FLAGS_OFFSET,
    LOG_POS_OFFSET,
    TYPE_CODE_OFFSET,
    event_crc,
)
from fakemaster.vocabulary.layouts import FDE_FIXED, START_ENCRYPTION, U32

__all__ = [
    "FileDecryption",
    "decrypt_event",
    "has_valid_crc",
    "looks_decrypted",
    "parse_start_encryption",
]


def _binlog_key(crypto: StartEncryptionEvent, key: bytes, offset: int) -> None:
    problem = crypto_problem(crypto, key)
    if problem is not None:
        raise DecodeError(problem, offset=offset)


def decrypt_event(
    data: bytes | bytearray | memoryview,
    offset: int,
    crypto: StartEncryptionEvent,
    key: bytes,
    *,
    algorithm: Algorithm = Algorithm.AES_CBC,
) -> bytes:
    """The plaintext of the encrypted event ``data`` found at file ``offset``, in a file whose
    START_ENCRYPTION is ``crypto``, with ``key`` (key id 1 at ``crypto.key_version``)."""
    _binlog_key(crypto, key, offset)
    return crypt_event(data, offset, crypto.nonce, key, algorithm, encrypt=False)


def has_valid_crc(data: bytes) -> bool:
    """Whether the event ``data`` ends with a valid CRC32 of the rest."""
    end = len(data) - CHECKSUM_LEN
    return (
        end >= HEADER_LEN
        and event_crc(data[:end], data[TYPE_CODE_OFFSET]) == CRC.unpack_from(data, end)[0]
    )


def looks_decrypted(plain: bytes, offset: int) -> bool:
    """Whether ``plain`` (an event from file ``offset``) has a valid CRC32 or a log_pos equal
    to its end offset: a wrong key or mode gives neither but by a 2^-31 chance."""
    if has_valid_crc(plain):
        return True
    return bool(U32.unpack_from(plain, LOG_POS_OFFSET)[0] == (offset + len(plain)) & 0xFFFFFFFF)


def parse_start_encryption(data: bytes, offset: int) -> StartEncryptionEvent:
    """The START_ENCRYPTION fields of raw event bytes (header fields left at their defaults)."""
    end = HEADER_LEN + START_ENCRYPTION_BODY_LEN
    if len(data) < end:
        raise DecodeError(
            f"truncated: START_ENCRYPTION of {len(data)} bytes, needs {end}",
            offset=offset,
            event_type="START_ENCRYPTION",
        )
    scheme, key_version, nonce = START_ENCRYPTION.unpack_from(data, HEADER_LEN)
    return StartEncryptionEvent(scheme=scheme, key_version=key_version, nonce=nonce)


class FileDecryption:
    """Decryption of one binlog file's events, from its START_ENCRYPTION on.

    The file reader makes one at a START_ENCRYPTION event (type 164 in clear, see
    :meth:`starts`) and calls :meth:`decrypt` for every later event. With keys, every later
    event is decrypted (as the server reads the file); a missing key version or a wrong key
    raises DecodeError at the first encrypted event.

    Without keys the first event after START_ENCRYPTION decides, when START_ENCRYPTION itself
    carries a CRC32 (so the file's events do): an event whose CRC32 is not valid as it is is
    encrypted and raises DecodeError saying a key is needed; one whose CRC32 is valid, or an
    FDE (a plaintext file that kept its START_ENCRYPTION), lets the rest of the file through
    as it is. Without CRC32s the bytes are passed through undecided.
    """

    __slots__ = ("keys", "crypto", "start_offset", "_with_crc", "_key", "_algorithm", "_plain")

    def __init__(self, keys: BinlogKeys | None, data: bytes, offset: int) -> None:
        self.keys = keys
        self.crypto = parse_start_encryption(data, offset)
        self.start_offset = offset
        self._with_crc = len(data) >= HEADER_LEN + START_ENCRYPTION_BODY_LEN + CHECKSUM_LEN
        self._key: bytes | None = None
        self._algorithm = keys.algorithm if keys is not None else None
        self._plain = False

    @staticmethod
    def starts(header: bytes | bytearray | memoryview) -> bool:
        """Whether the event with this header starts encryption: a START_ENCRYPTION, unless
        flagged IGNORABLE as the dump thread sends it (a file saved from a replication stream,
        e.g. by ``mariadb-binlog --raw``, then holds plaintext events, which the server's
        readers take as they are)."""
        return header[TYPE_CODE_OFFSET] == EventType.START_ENCRYPTION and not (
            header[FLAGS_OFFSET] & EventFlag.IGNORABLE
        )

    def _where(self) -> str:
        return (
            f"(START_ENCRYPTION at offset {self.start_offset}, "
            f"key version {self.crypto.key_version})"
        )

    def _first_key(self, offset: int, data: bytes) -> bytes | None:
        """The key, or None if the events pass through as they are."""
        if self.keys is None:
            # A plaintext FDE (it may change the checksum setting) never follows a server's
            # START_ENCRYPTION: a plaintext file it is. An encrypted event's type byte is
            # ciphertext, an FDE's code once in 256 events (its length field is kept plaintext):
            # an FDE also holds its fixed part, binlog version 4 and the header length.
            is_fde = data[TYPE_CODE_OFFSET] == EventType.FORMAT_DESCRIPTION and _plain_fde(data)
            if self._with_crc and not is_fde and not has_valid_crc(data):
                raise DecodeError(
                    f"the event is encrypted {self._where()}: reading it needs the binlog key "
                    f"(keys=BinlogKeys..., or --key-file)",
                    offset=offset,
                )
            self._plain = True
            return None
        key = self.keys.key(self.crypto.key_version)
        if key is None:
            raise DecodeError(
                f"the event is encrypted {self._where()} and the keys have no key id "
                f"{SYSTEM_DATA_KEY_ID} version {self.crypto.key_version}",
                offset=offset,
            )
        _binlog_key(self.crypto, key, self.start_offset)
        return key

    def decrypt(self, offset: int, data: bytes) -> bytes:
        """The plaintext of the event ``data`` found at file ``offset``."""
        key = self._key
        if key is None:
            if self._plain:
                return data
            key = self._key = self._first_key(offset, data)
            if key is None:
                return data
        algorithm = self._algorithm
        if algorithm is not None:
            return crypt_event(data, offset, self.crypto.nonce, key, algorithm, encrypt=False)
        for candidate in Algorithm:
            plain = crypt_event(data, offset, self.crypto.nonce, key, candidate, encrypt=False)
            if looks_decrypted(plain, offset):
                # Under one block both modes are the same XOR with AES(IV): nothing is told yet.
                # (The cipher input is the event without its length field.)
                if len(data) - U32.size >= BLOCK:
                    self._algorithm = candidate
                return plain
        hint = (
            "it has a valid CRC32 as it is: not encrypted" if has_valid_crc(data) else "wrong key?"
        )
        raise DecodeError(
            f"cannot decrypt the event {self._where()} with key id {SYSTEM_DATA_KEY_ID} "
            f"({len(key) * 8}-bit): neither AES_CBC nor AES_CTR gives a valid event ({hint})",
            offset=offset,
        )

    @property
    def algorithm(self) -> Algorithm | None:
        """The AES mode in use (None until found from the first encrypted event)."""
        return self._algorithm


def _plain_fde(data: bytes) -> bool:
    """Whether ``data`` holds an FDE's fixed part as a plaintext FDE does: binlog version 4
    and the common header's length."""
    if len(data) < HEADER_LEN + FDE_FIXED.size:
        return False
    version, _, _, header_length = FDE_FIXED.unpack_from(data, HEADER_LEN)
    return bool(version == BINLOG_VERSION and header_length == HEADER_LEN)
