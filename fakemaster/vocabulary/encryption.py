"""Encrypted binlog files: keys, the START_ENCRYPTION rules and the event cipher, shared by the
decrypting reader (decoder/encryption.py) and the encrypting writer (encoder/encryption.py).

With ``encrypt_binlog=ON`` MariaDB writes START_ENCRYPTION (scheme 1, key version, 12-byte
nonce) right after the FDE and encrypts every later event of the file on its own, with the
key plugin's AES mode (``file_key_management_encryption_algorithm``: AES_CBC, the default, or
AES_CTR) and no padding, so an event keeps its length. The layout (MariaDB
``Log_event_writer::write_header``/``encrypt_and_write``/``maybe_write_event_len`` and
``Log_event::read_log_event``, checked against 10.11 files):

* IV = nonce (12) + the event's file offset (uint32 LE, ``Binlog_crypt_data::set_iv``);
* the cipher input is the plaintext event without its length field, with the timestamp moved
  to where the length was: ``P[4:9] + P[0:4] + P[13:]`` (the CRC, taken on the plaintext,
  is encrypted with the rest);
* on disk, ciphertext ``C`` is stored as ``C[5:9] + C[0:5] + length + C[9:]``: the length
  field stays in clear so that events can be framed without the key.

AES_CBC without padding (``MyCTX_nopad``) encrypts the whole blocks in CBC mode and XORs a
last partial block with AES-ECB(key, IV) — the *original* IV, not the last ciphertext block —
so it is its own inverse there. AES_CTR uses the IV as the whole 128-bit counter block.

The server never records which algorithm it used; :class:`BinlogKeys` with ``algorithm=None``
finds it from the first encrypted event (the one giving a valid CRC32, or a log_pos equal to
the event's end offset). The ``cryptography`` package (extra ``fakemaster[crypto]``) is
imported only when something is en- or decrypted.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from fakemaster.vocabulary.constants import HEADER_LEN
from fakemaster.vocabulary.errors import DecodeError, FakemasterError
from fakemaster.vocabulary.events import StartEncryptionEvent
from fakemaster.vocabulary.header import (
    EVENT_LENGTH_OFFSET,
    LOG_POS_OFFSET,
    TIMESTAMP_OFFSET,
    TYPE_CODE_OFFSET,
)
from fakemaster.vocabulary.layouts import NONCE_LEN, START_ENCRYPTION, U32

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers import CipherContext

__all__ = [
    "BLOCK",
    "KEY_SIZES",
    "NONCE_LEN",
    "SCHEME",
    "START_ENCRYPTION_BODY_LEN",
    "SYSTEM_DATA_KEY_ID",
    "Algorithm",
    "BinlogKeys",
    "KeyFileError",
    "aes_nopad",
    "crypt_event",
    "crypto_problem",
    "decrypt_key_file",
    "event_iv",
    "parse_key_file",
]

SCHEME = 1  # the only binlog crypto scheme MariaDB has
SYSTEM_DATA_KEY_ID = 1  # ENCRYPTION_KEY_SYSTEM_DATA: the key id of binlogs (and redo logs)
KEY_SIZES = (16, 24, 32)
BLOCK = 16
START_ENCRYPTION_BODY_LEN = START_ENCRYPTION.size
# Bytes of the header before the length field that the cipher input moves behind the timestamp.
_MOVED = EVENT_LENGTH_OFFSET - TYPE_CODE_OFFSET


class Algorithm(StrEnum):
    """The AES mode of the key plugin, as ``file_key_management_encryption_algorithm`` names
    it (binlogs use it without padding)."""

    AES_CBC = "aes_cbc"
    AES_CTR = "aes_ctr"

    @classmethod
    def parse(cls, text: str) -> Algorithm:
        try:
            return cls(text.strip().lower())
        except ValueError:
            names = ", ".join(member.value for member in cls)
            raise ValueError(f"unknown encryption algorithm {text!r} (one of: {names})") from None


class KeyFileError(FakemasterError, ValueError):
    """A key file that the file_key_management plugin would refuse."""


# --- keys ---------------------------------------------------------------------------------


_OPENSSL_SALTED = b"Salted__"
_OPENSSL_SALT_LEN = 8
_KEY_FILE_DIGESTS = ("sha1", "sha224", "sha256", "sha384", "sha512")
_MAX_SECRET = 256
_MAX_KEY_ID = 0xFFFFFFFF
_SPACE = b" \t\r\v\f"
_HEX_RUN = re.compile(rb"[0-9A-Fa-f]*")


def parse_key_file(data: bytes) -> dict[int, bytes]:
    """``{key id: key}`` from a file_key_management key file's (decrypted) text.

    The plugin's rules: one ``<id>;<hex key>`` per line (id 1..2^32-1, a 128/192/256-bit
    key, anything after the key ignored), ``#`` comment and blank lines, a later line
    replacing an earlier one of the same id, and key id 1 (the system key) required.
    """
    text = data.split(b"\0", 1)[0]  # the plugin reads the file as a C string
    keys: dict[int, bytes] = {}
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # nothing after the last newline
    ends_with_newline = text.endswith(b"\n")
    for number, line in enumerate(lines, 1):
        body = line.lstrip(_SPACE)
        column = len(line) - len(body) + 1
        # A blank line is a comment, but the plugin rejects blanks after the last newline.
        if body.startswith(b"#") or (not body and (number < len(lines) or ends_with_newline)):
            continue
        digits = len(body) - len(body.lstrip(b"0123456789"))
        if not digits:
            raise KeyFileError(f"syntax error at line {number}, column {column}")
        key_id = int(body[:digits]) if digits <= 10 else 0
        if not 1 <= key_id <= _MAX_KEY_ID:
            raise KeyFileError(f"invalid key id at line {number}, column {column + digits}")
        if body[digits : digits + 1] != b";":
            raise KeyFileError(f"syntax error at line {number}, column {column + digits}")
        hex_key = _HEX_RUN.match(body, digits + 1)
        assert hex_key is not None  # the pattern matches the empty string
        hex_digits = len(hex_key[0])
        if hex_digits % 2 or hex_digits // 2 not in KEY_SIZES:
            raise KeyFileError(
                f"invalid key at line {number}: {hex_digits} hex digits, not 32, 48 or 64"
            )
        keys[key_id] = bytes.fromhex(hex_key[0].decode("ascii"))
    if SYSTEM_DATA_KEY_ID not in keys:
        raise KeyFileError(f"system key id {SYSTEM_DATA_KEY_ID} is missing")
    return keys


def _secret_bytes(filekey: str | bytes) -> bytes:
    """The key file's secret; ``FILE:path`` names a file holding it (as the plugin's
    ``file_key_management_filekey``)."""
    raw = filekey.encode("utf-8") if isinstance(filekey, str) else filekey
    if raw.startswith(b"FILE:"):
        with open(raw[5:], "rb") as secret_file:
            raw = secret_file.read(_MAX_SECRET + 1).rstrip(b"\r\n")
        if len(raw) > _MAX_SECRET:
            raise KeyFileError(f"the file key is longer than {_MAX_SECRET} bytes")
    return raw.split(b"\0", 1)[0]


def decrypt_key_file(
    data: bytes, filekey: str | bytes, *, digest: str = "sha1", pbkdf2_iterations: int = 0
) -> bytes:
    """The text of a key file encrypted with ``openssl enc -aes-256-cbc -md DIGEST -k SECRET``
    (``-pbkdf2 -iter N`` when ``pbkdf2_iterations``), as the plugin reads it with
    ``file_key_management_filekey``. MariaDB 10.11 knows only the defaults (SHA1, no PBKDF2);
    newer servers add ``file_key_management_digest`` and ``_use_pbkdf2``."""
    if not data.startswith(_OPENSSL_SALTED) or len(data) <= len(_OPENSSL_SALTED):
        raise KeyFileError("a file key was given but the key file is not encrypted")
    if digest not in _KEY_FILE_DIGESTS:
        raise KeyFileError(f"unknown digest {digest!r} (one of: {', '.join(_KEY_FILE_DIGESTS)})")
    secret = _secret_bytes(filekey)
    salt_end = len(_OPENSSL_SALTED) + _OPENSSL_SALT_LEN
    salt = data[len(_OPENSSL_SALTED) : salt_end]
    if pbkdf2_iterations:
        material = hashlib.pbkdf2_hmac(digest, secret, salt, pbkdf2_iterations, 48)
    else:  # EVP_BytesToKey with one iteration
        material = b""
        block = b""
        while len(material) < 48:
            block = hashlib.new(digest, block + secret + salt).digest()
            material += block
    ciphers = _cryptography()
    decryptor = ciphers.Cipher(
        ciphers.algorithms.AES(material[:32]), ciphers.modes.CBC(material[32:48])
    ).decryptor()
    ciphertext = data[salt_end:]
    if not ciphertext or len(ciphertext) % BLOCK:
        raise KeyFileError("cannot decrypt the key file: its length is not whole AES blocks")
    padded: bytes = decryptor.update(ciphertext) + decryptor.finalize()
    pad = padded[-1]
    if not 1 <= pad <= BLOCK or padded[-pad:] != bytes([pad]) * pad:
        raise KeyFileError("cannot decrypt the key file: wrong file key?")
    return padded[:-pad]


class BinlogKeys:
    """The keys a key management plugin would give the server: ``{key id: {version: key}}``.

    Binlogs use key id 1 at the version their START_ENCRYPTION names. ``algorithm`` is the
    plugin's AES mode (AES_CBC or AES_CTR); None finds it when reading (and means AES_CBC,
    the server's default, when writing). The key bytes stay out of ``repr``.
    """

    __slots__ = ("_keys", "algorithm")

    def __init__(
        self,
        keys: Mapping[int, Mapping[int, bytes]],
        *,
        algorithm: Algorithm | str | None = None,
    ) -> None:
        checked: dict[int, dict[int, bytes]] = {}
        for key_id, versions in keys.items():
            for version, key in versions.items():
                if len(key) not in KEY_SIZES:
                    raise KeyFileError(
                        f"key {key_id} version {version} is {len(key)} bytes, not 16, 24 or 32"
                    )
                checked.setdefault(int(key_id), {})[int(version)] = bytes(key)
        self._keys = checked
        self.algorithm = Algorithm.parse(algorithm) if isinstance(algorithm, str) else algorithm

    @classmethod
    def parse(cls, data: bytes | str, *, algorithm: Algorithm | str | None = None) -> BinlogKeys:
        """Keys from a key file's text (file_key_management keys all have version 1)."""
        raw = data.encode("utf-8") if isinstance(data, str) else data
        return cls(
            {key_id: {1: key} for key_id, key in parse_key_file(raw).items()},
            algorithm=algorithm,
        )

    @classmethod
    def from_key_file(
        cls,
        path: str | os.PathLike[str],
        *,
        algorithm: Algorithm | str | None = None,
        filekey: str | bytes | None = None,
        digest: str = "sha1",
        pbkdf2_iterations: int = 0,
    ) -> BinlogKeys:
        """Keys from a ``file_key_management_filename`` file, decrypted with ``filekey``
        (``file_key_management_filekey``, also ``FILE:path``) when it is encrypted."""
        with open(path, "rb") as key_file:
            data = key_file.read()
        if filekey:
            data = decrypt_key_file(
                data, filekey, digest=digest, pbkdf2_iterations=pbkdf2_iterations
            )
        elif data.startswith(_OPENSSL_SALTED):
            raise KeyFileError("the key file is encrypted (openssl enc): its file key is needed")
        return cls.parse(data, algorithm=algorithm)

    def key(self, version: int, key_id: int = SYSTEM_DATA_KEY_ID) -> bytes | None:
        return self._keys.get(key_id, {}).get(version)

    @property
    def key_ids(self) -> dict[int, tuple[int, ...]]:
        """``{key id: versions}``, without the keys."""
        return {key_id: tuple(sorted(v)) for key_id, v in sorted(self._keys.items())}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BinlogKeys):
            return NotImplemented
        return self._keys == other._keys and self.algorithm == other.algorithm

    def __hash__(self) -> int:
        return hash((tuple(self.key_ids.items()), self.algorithm))

    def __repr__(self) -> str:
        return f"BinlogKeys(key_ids={self.key_ids}, algorithm={self.algorithm})"


# --- AES as MariaDB's my_aes_crypt with ENCRYPTION_FLAG_NOPAD ----------------------------


_ciphers: Any = None


def _cryptography() -> Any:
    """``cryptography.hazmat.primitives.ciphers``, imported on first use (an optional extra)."""
    global _ciphers
    if _ciphers is None:
        try:
            from cryptography.hazmat.primitives import ciphers
        except ImportError:  # pragma: no cover - depends on the environment
            raise FakemasterError(
                "encrypted binlogs need the cryptography package: pip install 'fakemaster[crypto]'"
            ) from None
        _ciphers = ciphers
    return _ciphers


def _context(key: bytes, mode: Any, encrypt: bool) -> CipherContext:
    ciphers = _cryptography()
    cipher = ciphers.Cipher(ciphers.algorithms.AES(key), mode)
    context: CipherContext = cipher.encryptor() if encrypt else cipher.decryptor()
    return context


def _xor(data: bytes, mask: bytes) -> bytes:
    size = len(data)
    value = int.from_bytes(data, "little") ^ int.from_bytes(mask[:size], "little")
    return value.to_bytes(size, "little")


def aes_nopad(data: bytes, key: bytes, iv: bytes, algorithm: Algorithm, *, encrypt: bool) -> bytes:
    """``data`` en- or decrypted the length-preserving way MariaDB does it for binlogs."""
    if len(key) not in KEY_SIZES:
        raise ValueError(f"an AES key is 16, 24 or 32 bytes, not {len(key)}")
    ciphers = _cryptography()
    if algorithm is Algorithm.AES_CTR:
        return _context(key, ciphers.modes.CTR(iv), encrypt).update(data)
    whole = len(data) - len(data) % BLOCK
    out = _context(key, ciphers.modes.CBC(iv), encrypt).update(data[:whole]) if whole else b""
    if whole < len(data):
        mask = _context(key, ciphers.modes.ECB(), True).update(iv)
        out += _xor(data[whole:], mask)
    return out


# --- events -------------------------------------------------------------------------------


def event_iv(nonce: bytes, offset: int) -> bytes:
    """The IV of the event at file ``offset`` (the offset wraps at 4 GiB, as the server's)."""
    return nonce + U32.pack(offset & 0xFFFFFFFF)


def crypt_event(
    data: bytes | bytearray | memoryview,
    offset: int,
    nonce: bytes,
    key: bytes,
    algorithm: Algorithm,
    *,
    encrypt: bool,
) -> bytes:
    """One event between its plaintext and on-disk forms (the same byte shuffle both ways,
    around the cipher). ``offset`` is the event's file offset; errors are located there."""
    size = len(data)
    if size < HEADER_LEN:
        raise DecodeError(f"truncated: encrypted event of {size} bytes", offset=offset)
    length = bytes(data[EVENT_LENGTH_OFFSET:LOG_POS_OFFSET])
    if U32.unpack(length)[0] != size:
        raise DecodeError(
            f"event length field says {U32.unpack(length)[0]}, event has {size} bytes",
            offset=offset + EVENT_LENGTH_OFFSET,
        )
    # The timestamp takes the length field's place: type code and server id, timestamp, rest.
    cipher_input = (
        bytes(data[TYPE_CODE_OFFSET:EVENT_LENGTH_OFFSET])
        + bytes(data[TIMESTAMP_OFFSET:TYPE_CODE_OFFSET])
        + bytes(data[LOG_POS_OFFSET:])
    )
    out = aes_nopad(cipher_input, key, event_iv(nonce, offset), algorithm, encrypt=encrypt)
    return out[_MOVED:EVENT_LENGTH_OFFSET] + out[:_MOVED] + length + out[EVENT_LENGTH_OFFSET:]


def crypto_problem(crypto: StartEncryptionEvent, key: bytes) -> str | None:
    """Why events cannot be en- or decrypted after ``crypto`` with ``key`` (None if they can)."""
    if crypto.scheme != SCHEME:
        return f"unknown binlog encryption scheme {crypto.scheme} (MariaDB has only {SCHEME})"
    if len(crypto.nonce) != NONCE_LEN:
        return f"the nonce is {len(crypto.nonce)} bytes, not {NONCE_LEN}"
    if len(key) not in KEY_SIZES:
        return f"the key is {len(key)} bytes, not 16, 24 or 32"
    return None
