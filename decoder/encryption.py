"""Encrypted binlog files: keys and event decryption (mirror of encoder/encryption.py).

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
imported only when something is decrypted.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from decoder.primitives import U32
from fakemaster.constants import HEADER_LEN, EventFlag, EventType
from fakemaster.errors import DecodeError, FakemasterError
from fakemaster.events import StartEncryptionEvent
from fakemaster.header import event_crc

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers import CipherContext

SCHEME = 1  # the only binlog crypto scheme MariaDB has
SYSTEM_DATA_KEY_ID = 1  # ENCRYPTION_KEY_SYSTEM_DATA: the key id of binlogs (and redo logs)
KEY_SIZES = (16, 24, 32)
NONCE_LEN = 12
BLOCK = 16
START_ENCRYPTION_BODY_LEN = 17
_LENGTH_OFFSET = 9
_LOG_POS_OFFSET = 13
_FLAGS_OFFSET = 17
_CRC_LEN = 4


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
    padded = decryptor.update(ciphertext) + decryptor.finalize()
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
    length = bytes(data[_LENGTH_OFFSET : _LENGTH_OFFSET + 4])
    if U32.unpack(length)[0] != size:
        raise DecodeError(
            f"event length field says {U32.unpack(length)[0]}, event has {size} bytes",
            offset=offset + _LENGTH_OFFSET,
        )
    cipher_input = bytes(data[4:9]) + bytes(data[0:4]) + bytes(data[13:])
    out = aes_nopad(cipher_input, key, event_iv(nonce, offset), algorithm, encrypt=encrypt)
    return out[5:9] + out[0:5] + length + out[9:]


def _binlog_key(crypto: StartEncryptionEvent, key: bytes, offset: int) -> None:
    if crypto.scheme != SCHEME:
        raise DecodeError(
            f"unknown binlog encryption scheme {crypto.scheme} (MariaDB has only {SCHEME})",
            offset=offset,
        )
    if len(crypto.nonce) != NONCE_LEN:
        raise DecodeError(f"the nonce is {len(crypto.nonce)} bytes, not 12", offset=offset)
    if len(key) not in KEY_SIZES:
        raise DecodeError(f"the key is {len(key)} bytes, not 16, 24 or 32", offset=offset)


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
    end = len(data) - _CRC_LEN
    return end >= HEADER_LEN and event_crc(data[:end], data[4]) == U32.unpack_from(data, end)[0]


def looks_decrypted(plain: bytes, offset: int) -> bool:
    """Whether ``plain`` (an event from file ``offset``) has a valid CRC32 or a log_pos equal
    to its end offset: a wrong key or mode gives neither but by a 2^-31 chance."""
    if has_valid_crc(plain):
        return True
    return bool(U32.unpack_from(plain, _LOG_POS_OFFSET)[0] == (offset + len(plain)) & 0xFFFFFFFF)


def parse_start_encryption(data: bytes, offset: int) -> StartEncryptionEvent:
    """The START_ENCRYPTION fields of raw event bytes (header fields left at their defaults)."""
    end = HEADER_LEN + START_ENCRYPTION_BODY_LEN
    if len(data) < end:
        raise DecodeError(
            f"truncated: START_ENCRYPTION of {len(data)} bytes, needs {end}",
            offset=offset,
            event_type="START_ENCRYPTION",
        )
    return StartEncryptionEvent(
        scheme=data[HEADER_LEN],
        key_version=U32.unpack_from(data, HEADER_LEN + 1)[0],
        nonce=bytes(data[HEADER_LEN + 5 : end]),
    )


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
        self._with_crc = len(data) >= HEADER_LEN + START_ENCRYPTION_BODY_LEN + _CRC_LEN
        self._key: bytes | None = None
        self._algorithm = keys.algorithm if keys is not None else None
        self._plain = False

    @staticmethod
    def starts(header: bytes | bytearray | memoryview) -> bool:
        """Whether the event with this header starts encryption: a START_ENCRYPTION, unless
        flagged IGNORABLE as the dump thread sends it (a file saved from a replication stream,
        e.g. by ``mariadb-binlog --raw``, then holds plaintext events, which the server's
        readers take as they are)."""
        return header[4] == EventType.START_ENCRYPTION and not (
            header[_FLAGS_OFFSET] & EventFlag.IGNORABLE
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
            # START_ENCRYPTION: a plaintext file it is.
            is_fde = data[4] == EventType.FORMAT_DESCRIPTION
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
                if len(data) - 4 >= BLOCK:
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
