"""Encrypted binlogs (encrypt_binlog=ON): key files, the per-event AES layout, the file reader
and writer with keys, the golden files captured from MariaDB 10.11, and (with a real server)
MariaDB reading a file this codec encrypted."""

from __future__ import annotations

import io
import random
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from hypothesis import given
from hypothesis import strategies as st

from decoder.binlog_file import iter_raw_events, read_binlog
from decoder.core import decode_event
from decoder.encryption import decrypt_event
from encoder.binlog_file import BinlogWriter
from encoder.core import encode_event
from encoder.encryption import encrypt_event, start_encryption_event
from fakemaster.cli import main
from fakemaster.vocabulary.constants import BINLOG_MAGIC, EventFlag, EventType
from fakemaster.vocabulary.context import BinlogContext
from fakemaster.vocabulary.encryption import (
    Algorithm,
    BinlogKeys,
    KeyFileError,
    aes_nopad,
    decrypt_key_file,
    event_iv,
    parse_key_file,
)
from fakemaster.vocabulary.errors import ChecksumError, DecodeError, EncodeError
from fakemaster.vocabulary.events import (
    Event,
    FormatDescriptionEvent,
    HeartbeatEvent,
    StartEncryptionEvent,
    StopEvent,
)
from fakemaster.vocabulary.header import CRC, TYPE_CODE_OFFSET, event_crc
from scenarios.strategies.streams import event_streams
from tests.peers.fixtures import MariaDBFactory
from tests.peers.policy import require_peer

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "binlogs" / "encrypted"
FILE_KEY = "fakemaster-secret"
VARIANTS = {"aes_cbc": Algorithm.AES_CBC, "aes_ctr": Algorithm.AES_CTR}
GOLDEN_FILES = [(variant, n) for variant in VARIANTS for n in (1, 2)]
FIRST_ENCRYPTED = 296  # FDE at 4 (252 bytes), START_ENCRYPTION at 256 (40 bytes)

keys_bytes = st.sampled_from([16, 24, 32]).flatmap(lambda n: st.binary(min_size=n, max_size=n))
nonces = st.binary(min_size=12, max_size=12)
algorithm_choices = st.sampled_from(list(Algorithm))


def golden_keys(variant: str, algorithm: Algorithm | None = None) -> BinlogKeys:
    if variant == "aes_ctr":  # the server read the encrypted form of this key file
        return BinlogKeys.from_key_file(
            GOLDEN / "aes_ctr.keys.enc", filekey=FILE_KEY, algorithm=algorithm
        )
    return BinlogKeys.from_key_file(GOLDEN / f"{variant}.keys", algorithm=algorithm)


def golden_file(variant: str, n: int) -> Path:
    return GOLDEN / f"{variant}-bin.{n:06d}.encrypted"


def raw_file_events(data: bytes) -> list[tuple[int, bytes]]:
    """Events of a file's bytes as stored (no decryption), by their length fields."""
    out = []
    pos = len(BINLOG_MAGIC)
    while pos < len(data):
        length = int.from_bytes(data[pos + 9 : pos + 13], "little")
        out.append((pos, data[pos : pos + length]))
        pos += length
    return out


def as_dumped(start_encryption: bytes) -> bytes:
    """A START_ENCRYPTION as the dump thread sends it: IGNORABLE added, CRC recomputed."""
    patched = bytearray(start_encryption)
    patched[17] |= EventFlag.IGNORABLE
    end = len(patched) - 4
    CRC.pack_into(patched, end, event_crc(patched[:end], patched[4]))
    return bytes(patched)


def write_file(events: list[Event], keys: BinlogKeys | None, fix_positions: bool = False) -> bytes:
    out = io.BytesIO()
    writer = BinlogWriter(out, encryption=keys, fix_positions=fix_positions)
    for event in events:
        writer.write(event)
    return out.getvalue()


def with_start_encryption(events: list[Event], start: StartEncryptionEvent) -> list[Event]:
    return [events[0], start, *events[1:]]


# --- AES as MariaDB's my_aes_crypt(ENCRYPTION_FLAG_NOPAD) --------------------------------


@given(st.binary(max_size=200), keys_bytes, st.binary(min_size=16, max_size=16), algorithm_choices)
def test_aes_nopad_keeps_the_length_and_inverts(
    data: bytes, key: bytes, iv: bytes, algorithm: Algorithm
) -> None:
    encrypted = aes_nopad(data, key, iv, algorithm, encrypt=True)
    assert len(encrypted) == len(data)
    assert aes_nopad(encrypted, key, iv, algorithm, encrypt=False) == data


@given(st.binary(max_size=100), keys_bytes, st.binary(min_size=16, max_size=16))
def test_cbc_tail_is_xored_with_the_ecb_encrypted_original_iv(
    data: bytes, key: bytes, iv: bytes
) -> None:
    whole = len(data) // 16 * 16
    encryptor = Cipher(algorithms.AES(key), modes.CBC(iv)).encryptor()
    head = encryptor.update(data[:whole]) + encryptor.finalize()
    mask = Cipher(algorithms.AES(key), modes.ECB()).encryptor().update(iv)
    tail = bytes(byte ^ mask[i] for i, byte in enumerate(data[whole:]))
    assert aes_nopad(data, key, iv, Algorithm.AES_CBC, encrypt=True) == head + tail


@given(st.binary(max_size=100), keys_bytes, st.binary(min_size=16, max_size=16))
def test_ctr_counts_from_the_whole_iv(data: bytes, key: bytes, iv: bytes) -> None:
    expected = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor().update(data)
    assert aes_nopad(data, key, iv, Algorithm.AES_CTR, encrypt=True) == expected


def test_aes_key_sizes() -> None:
    with pytest.raises(ValueError, match="16, 24 or 32"):
        aes_nopad(b"x" * 20, bytes(20), bytes(16), Algorithm.AES_CBC, encrypt=True)


def test_event_iv_is_the_nonce_and_the_offset_mod_4_gib() -> None:
    nonce = bytes(range(12))
    assert event_iv(nonce, 0x01020304) == nonce + bytes([4, 3, 2, 1])
    assert event_iv(nonce, (1 << 32) + 5) == event_iv(nonce, 5)


# --- events -------------------------------------------------------------------------------


def encoded(events: list[Event]) -> list[bytes]:
    ctx = BinlogContext()
    return [encode_event(event, ctx) for event in events]


def plain_events() -> st.SearchStrategy[bytes]:
    """Encoded events of every family, from streams with and without CRC32s."""
    return event_streams(max_groups=4).map(encoded).flatmap(st.sampled_from)


@given(
    plain_events(),
    st.integers(0, (1 << 33)),
    nonces,
    keys_bytes,
    algorithm_choices,
    st.integers(1, 0xFFFFFFFF),
)
def test_event_round_trip(
    plain: bytes, offset: int, nonce: bytes, key: bytes, algorithm: Algorithm, version: int
) -> None:
    crypto = StartEncryptionEvent(key_version=version, nonce=nonce)
    stored = encrypt_event(plain, offset, crypto, key, algorithm=algorithm)
    assert len(stored) == len(plain)
    assert stored[9:13] == plain[9:13]  # the length stays in clear for framing
    assert stored != plain
    assert decrypt_event(stored, offset, crypto, key, algorithm=algorithm) == plain
    # the IV holds the offset: the same event elsewhere is stored differently
    assert encrypt_event(plain, offset + 1, crypto, key, algorithm=algorithm) != stored
    assert encrypt_event(plain, offset + (1 << 32), crypto, key, algorithm=algorithm) == stored


def test_event_layout_moves_the_timestamp_and_keeps_the_length() -> None:
    """Against an independent rendering of MariaDB's write_header/maybe_write_event_len."""
    plain = encode_event(StopEvent(timestamp=0x11223344, server_id=7, log_pos=999), BinlogContext())
    key, nonce, offset = bytes(range(16)), bytes(range(100, 112)), 1234
    iv = nonce + offset.to_bytes(4, "little")
    cipher_input = plain[4:9] + plain[0:4] + plain[13:]  # 4 + 5 + ... = len(plain) - 4
    encryptor = Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor()
    out = encryptor.update(cipher_input)
    expected = out[5:9] + out[0:5] + len(plain).to_bytes(4, "little") + out[9:]
    crypto = StartEncryptionEvent(nonce=nonce)
    assert encrypt_event(plain, offset, crypto, key, algorithm=Algorithm.AES_CTR) == expected


def test_event_errors_are_located() -> None:
    plain = encode_event(StopEvent(), BinlogContext())
    crypto = StartEncryptionEvent(nonce=bytes(12))
    key = bytes(16)
    with pytest.raises(DecodeError) as info:
        decrypt_event(plain[:15], 500, crypto, key)
    assert info.value.offset == 500
    with pytest.raises(DecodeError, match="length field says 23") as info:
        decrypt_event(plain + b"x", 500, crypto, key)
    assert info.value.offset == 509
    with pytest.raises(DecodeError, match="scheme 2"):
        decrypt_event(plain, 500, replace(crypto, scheme=2), key)
    with pytest.raises(DecodeError, match="not 16, 24 or 32"):
        decrypt_event(plain, 500, crypto, bytes(10))
    with pytest.raises(EncodeError, match="scheme 2"):
        encrypt_event(plain, 500, replace(crypto, scheme=2), key)
    with pytest.raises(EncodeError, match="nonce"):
        encrypt_event(plain, 500, replace(crypto, nonce=bytes(11)), key)
    with pytest.raises(EncodeError, match="length field"):
        encrypt_event(plain + b"x", 500, crypto, key)


def test_start_encryption_event_gets_a_fresh_nonce() -> None:
    first, second = start_encryption_event(), start_encryption_event(key_version=3)
    assert len(first.nonce) == 12 and first.nonce != second.nonce
    assert (first.scheme, first.key_version, second.key_version) == (1, 1, 3)
    assert start_encryption_event(nonce=bytes(12)).nonce == bytes(12)


# --- files --------------------------------------------------------------------------------


@given(event_streams(), nonces, keys_bytes, algorithm_choices, st.integers(1, 5))
def test_encrypted_file_round_trip(
    events: list[Event], nonce: bytes, key: bytes, algorithm: Algorithm, version: int
) -> None:
    events = with_start_encryption(events, start_encryption_event(key_version=version, nonce=nonce))
    keys = BinlogKeys({1: {version: key}, 2: {version: bytes(16)}}, algorithm=algorithm)
    plain = write_file(events, None)
    stored = write_file(events, keys)
    assert len(stored) == len(plain)
    plain_raw, stored_raw = raw_file_events(plain), raw_file_events(stored)
    assert stored_raw[:2] == plain_raw[:2]  # FDE and START_ENCRYPTION in clear
    assert all(s != p for (_, s), (_, p) in zip(stored_raw[2:], plain_raw[2:], strict=True))
    assert list(iter_raw_events(io.BytesIO(stored), keys=keys)) == plain_raw
    assert [event for _, event in read_binlog(io.BytesIO(stored), keys=keys)] == events
    # decrypted and re-encrypted: the same bytes
    reread = [event for _, event in read_binlog(io.BytesIO(stored), keys=keys)]
    assert write_file(reread, keys) == stored


@given(event_streams(), nonces, keys_bytes, algorithm_choices)
def test_the_algorithm_is_found_from_the_first_encrypted_event(
    events: list[Event], nonce: bytes, key: bytes, algorithm: Algorithm
) -> None:
    # Real files have end offsets as log_pos, which identifies the mode even without CRC32s.
    events = [e for e in events if not (isinstance(e, HeartbeatEvent) and e.position is not None)]
    events = with_start_encryption(events, start_encryption_event(nonce=nonce))
    stored = write_file(events, BinlogKeys({1: {1: key}}, algorithm=algorithm), fix_positions=True)
    plain = write_file(events, None, fix_positions=True)
    assert list(iter_raw_events(io.BytesIO(stored), keys=BinlogKeys({1: {1: key}}))) == (
        raw_file_events(plain)
    )


def checksummed_file(keys: BinlogKeys, start: StartEncryptionEvent) -> tuple[bytes, list[Event]]:
    events: list[Event] = [
        FormatDescriptionEvent(),
        start,
        StopEvent(timestamp=5, log_pos=4 + 256 + 40 + 23),
    ]
    return write_file(events, keys), events


def test_without_keys_an_encrypted_event_needs_a_key() -> None:
    stored, _ = checksummed_file(
        BinlogKeys({1: {1: bytes(16)}}), start_encryption_event(nonce=bytes(range(12)))
    )
    _needs_a_key(stored)


def test_an_encrypted_event_whose_type_byte_reads_as_an_fde_still_needs_a_key() -> None:
    """The event after START_ENCRYPTION is ciphertext: once in 256 nonces its type byte is the
    FDE's code (a CI run failed so, with a random nonce). Its length field does not say its
    length, so it is no plaintext FDE."""
    keys = BinlogKeys({1: {1: bytes(16)}})
    for number in range(1 << 16):
        stored, _ = checksummed_file(keys, start_encryption_event(nonce=number.to_bytes(12, "big")))
        if stored[4 + 252 - 4 + 40 + 4 + TYPE_CODE_OFFSET] == EventType.FORMAT_DESCRIPTION:
            break
    else:
        raise AssertionError("no nonce made the type byte an FDE's")
    _needs_a_key(stored)


def _needs_a_key(stored: bytes) -> None:
    for read in (iter_raw_events, read_binlog):
        with pytest.raises(DecodeError, match="needs the binlog key") as info:
            list(read(io.BytesIO(stored)))
        assert info.value.offset == 4 + 252 - 4 + 40 + 4  # the event after START_ENCRYPTION
        assert "START_ENCRYPTION at offset 256" in str(info.value)


def test_keys_without_the_files_key_version() -> None:
    stored, _ = checksummed_file(
        BinlogKeys({1: {3: bytes(16)}}), start_encryption_event(key_version=3)
    )
    with pytest.raises(DecodeError, match="no key id 1 version 3"):
        list(
            read_binlog(io.BytesIO(stored), keys=BinlogKeys({1: {1: bytes(16)}, 3: {3: bytes(16)}}))
        )
    with pytest.raises(EncodeError, match="no key id 1 version 3"):
        checksummed_file(BinlogKeys({1: {1: bytes(16)}}), start_encryption_event(key_version=3))


def test_wrong_key_or_wrong_algorithm() -> None:
    key = bytes(range(32))
    stored, events = checksummed_file(
        BinlogKeys({1: {1: key}}, algorithm="AES_CTR"), start_encryption_event()
    )
    assert [e for _, e in read_binlog(io.BytesIO(stored), keys=BinlogKeys({1: {1: key}}))] == events
    with pytest.raises(DecodeError, match="wrong key") as info:
        list(read_binlog(io.BytesIO(stored), keys=BinlogKeys({1: {1: bytes(32)}})))
    assert info.value.offset == 296
    with pytest.raises(ChecksumError) as checksum:
        list(read_binlog(io.BytesIO(stored), keys=BinlogKeys({1: {1: key}}, algorithm="aes_cbc")))
    assert checksum.value.offset == 296 + 23 - 4


def test_plaintext_after_start_encryption_passes_without_keys_and_fails_with_them() -> None:
    keys = BinlogKeys({1: {1: bytes(16)}})
    plain, events = checksummed_file(keys, start_encryption_event())
    plain = write_file(events, None)  # START_ENCRYPTION kept, nothing encrypted
    assert [event for _, event in read_binlog(io.BytesIO(plain))] == events
    with pytest.raises(DecodeError, match="valid CRC32 as it is"):
        list(read_binlog(io.BytesIO(plain), keys=keys))


def test_a_plaintext_fde_after_start_encryption_passes_without_keys() -> None:
    """A server never writes an FDE after START_ENCRYPTION; one in clear, whose own version
    may mean no CRC32, marks a plaintext file."""
    events: list[Event] = [
        start_encryption_event(),
        FormatDescriptionEvent(server_version="5.0.0", checksum_alg=None),
        StopEvent(),
    ]
    assert [event for _, event in read_binlog(io.BytesIO(write_file(events, None)))] == events


def test_an_ignorable_start_encryption_starts_nothing() -> None:
    """The dump thread's form: a file saved from a replication stream holds plain events."""
    keys = BinlogKeys({1: {1: bytes(16)}})
    start = start_encryption_event(flags=EventFlag.IGNORABLE)
    events: list[Event] = [FormatDescriptionEvent(), start, StopEvent(timestamp=1)]
    stored = write_file(events, keys)
    assert stored == write_file(events, None)
    assert [event for _, event in read_binlog(io.BytesIO(stored), keys=keys)] == events
    assert [event for _, event in read_binlog(io.BytesIO(stored))] == events


def test_write_raw_is_never_encrypted() -> None:
    keys = BinlogKeys({1: {1: bytes(16)}})
    out = io.BytesIO()
    writer = BinlogWriter(out, encryption=keys)
    writer.write(FormatDescriptionEvent())
    writer.write(start_encryption_event())
    stop = encode_event(StopEvent(), BinlogContext())
    writer.write_raw(stop)
    assert out.getvalue().endswith(stop)


# --- key files ----------------------------------------------------------------------------

KEY_16 = "00112233445566778899aabbccddeeff"
KEY_24 = "000102030405060708090a0b0c0d0e0f1011121314151617"
KEY_32 = "F5502320F8429037B8DAEF761B189D12F5502320F8429037B8DAEF761B189D12"


def test_key_file_forms() -> None:
    text = (
        "# comment\r\n"
        "\n"
        "   \t\n"
        f"  1;{KEY_16}\r\n"
        f"2;{KEY_24}  trailing words are ignored\n"
        f"4294967295;{KEY_32}\n"
        f"2;{KEY_32}\n"  # a later line replaces an earlier one
        "  # indented comment"
    )
    assert parse_key_file(text.encode()) == {
        1: bytes.fromhex(KEY_16),
        2: bytes.fromhex(KEY_32),
        4294967295: bytes.fromhex(KEY_32),
    }
    keys = BinlogKeys.parse(text, algorithm="AES_CTR")
    assert keys.key(1) == bytes.fromhex(KEY_16)
    assert keys.key(2) is None and keys.key(1, key_id=2) == bytes.fromhex(KEY_32)
    assert keys.key_ids == {1: (1,), 2: (1,), 4294967295: (1,)}
    assert keys.algorithm is Algorithm.AES_CTR
    assert KEY_16 not in repr(keys) and "aes_ctr" in repr(keys)


@given(
    st.dictionaries(st.integers(1, 0xFFFFFFFF), keys_bytes, min_size=0, max_size=6).map(
        lambda keys: {1: bytes(16), **keys}
    ),
    st.booleans(),
)
def test_key_file_round_trip(keys: dict[int, bytes], upper: bool) -> None:
    lines = [
        f"{key_id};{key.hex().upper() if upper else key.hex()}" for key_id, key in keys.items()
    ]
    assert parse_key_file("\n".join(lines).encode()) == keys


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "system key id 1 is missing"),
        (f"2;{KEY_16}\n", "system key id 1 is missing"),
        (f"0;{KEY_16}\n", "invalid key id at line 1"),
        (f"4294967296;{KEY_16}\n", "invalid key id"),
        ("9" * 5000 + f";{KEY_16}\n", "invalid key id"),
        (f"x;{KEY_16}\n", "syntax error at line 1, column 1"),
        (f"1:{KEY_16}\n", "syntax error at line 1, column 2"),
        (f"1;{KEY_16}\n1;{KEY_16[:-1]}\n", "invalid key at line 2: 31 hex digits"),
        (f"1;{KEY_32}00\n", "66 hex digits"),
        ("1;" + "ab" * 20 + "\n", "40 hex digits"),
        (f"1;{KEY_16}\n   ", "syntax error at line 2"),  # the plugin's rule for a last line
    ],
)
def test_key_file_errors(text: str, message: str) -> None:
    with pytest.raises(KeyFileError, match=message):
        parse_key_file(text.encode())


def test_binlog_keys_checks_key_sizes() -> None:
    with pytest.raises(KeyFileError, match="20 bytes"):
        BinlogKeys({1: {1: bytes(20)}})
    with pytest.raises(ValueError, match="unknown encryption algorithm"):
        BinlogKeys({1: {1: bytes(16)}}, algorithm="aes_gcm")


def test_encrypted_key_files_made_by_openssl(tmp_path: Path) -> None:
    plain = BinlogKeys.from_key_file(GOLDEN / "aes_ctr.keys")
    assert BinlogKeys.from_key_file(GOLDEN / "aes_ctr.keys.enc", filekey=FILE_KEY) == plain
    pbkdf2 = BinlogKeys.from_key_file(
        GOLDEN / "aes_ctr.keys.pbkdf2.enc",
        filekey=FILE_KEY,
        digest="sha256",
        pbkdf2_iterations=1000,
    )
    assert pbkdf2 == plain
    secret_file = tmp_path / "secret"
    secret_file.write_text(FILE_KEY + "\n")
    from_file = BinlogKeys.from_key_file(GOLDEN / "aes_ctr.keys.enc", filekey=f"FILE:{secret_file}")
    assert from_file == plain
    with pytest.raises(KeyFileError, match="wrong file key|key file"):
        BinlogKeys.from_key_file(GOLDEN / "aes_ctr.keys.enc", filekey="not-the-secret")
    with pytest.raises(KeyFileError, match="its file key is needed"):
        BinlogKeys.from_key_file(GOLDEN / "aes_ctr.keys.enc")
    with pytest.raises(KeyFileError, match="not encrypted"):
        BinlogKeys.from_key_file(GOLDEN / "aes_ctr.keys", filekey=FILE_KEY)
    with pytest.raises(KeyFileError, match="unknown digest"):
        decrypt_key_file((GOLDEN / "aes_ctr.keys.enc").read_bytes(), FILE_KEY, digest="md5")


# --- golden files from MariaDB 10.11 ------------------------------------------------------


@pytest.mark.parametrize(("variant", "n"), GOLDEN_FILES)
def test_golden_decrypts_to_what_the_server_sends(variant: str, n: int) -> None:
    """Our decryption of the server's file equals the server's own (its dump thread's)."""
    ours = list(iter_raw_events(golden_file(variant, n), keys=golden_keys(variant)))
    dumped = raw_file_events((GOLDEN / f"{variant}-bin.{n:06d}.dump").read_bytes())
    assert [offset for offset, _ in ours] == [offset for offset, _ in dumped]
    assert ours[1][1][4] == EventType.START_ENCRYPTION
    expected = [data for _, data in dumped]
    expected[1] = ours[1][1]
    assert as_dumped(ours[1][1]) == dumped[1][1]
    assert [data for _, data in ours] == expected


@pytest.mark.parametrize(("variant", "n"), GOLDEN_FILES)
def test_golden_events_decode_and_encode_back(variant: str, n: int) -> None:
    path = golden_file(variant, n)
    keys = golden_keys(variant)
    raw = list(iter_raw_events(path, keys=keys))
    decoding, encoding = BinlogContext(), BinlogContext()
    for offset, data in raw:
        event = decode_event(data, decoding, offset=offset)  # verifies every CRC32
        assert event.log_pos == offset + len(data)
        assert encode_event(event, encoding) == data
        encoding.observe(event)
    assert [type(event) for _, event in read_binlog(path, keys=keys)] == [
        type(decode_event(data, BinlogContext(), verify_checksum=False))
        if data[4] == EventType.FORMAT_DESCRIPTION
        else type(event)
        for (_, data), (_, event) in zip(raw, read_binlog(path, keys=keys), strict=True)
    ]
    # Encrypted events of every length modulo 16: each AES_CBC tail length is checked.
    encrypted = [data for offset, data in raw if offset >= FIRST_ENCRYPTED]
    if n == 1:
        assert {(len(data) - 4) % 16 for data in encrypted} == set(range(16))
    assert raw[-1][1][4] == (EventType.ROTATE if n == 1 else EventType.STOP)


@pytest.mark.parametrize(("variant", "n"), GOLDEN_FILES)
def test_golden_reencrypts_to_the_same_bytes(variant: str, n: int) -> None:
    path = golden_file(variant, n)
    keys = golden_keys(variant, VARIANTS[variant])
    events = [event for _, event in read_binlog(path, keys=keys)]
    assert write_file(events, keys) == path.read_bytes()


@pytest.mark.parametrize("variant", VARIANTS)
def test_golden_algorithm_and_key_are_needed(variant: str) -> None:
    path = golden_file(variant, 1)
    other = Algorithm.AES_CTR if VARIANTS[variant] is Algorithm.AES_CBC else Algorithm.AES_CBC
    with pytest.raises(ChecksumError) as info:
        list(read_binlog(path, keys=golden_keys(variant, other)))
    assert FIRST_ENCRYPTED < info.value.offset < FIRST_ENCRYPTED + 100
    with pytest.raises(DecodeError, match="needs the binlog key") as missing:
        list(read_binlog(path))
    assert missing.value.offset == FIRST_ENCRYPTED
    # the server's dump of the same file reads without keys
    assert len(list(read_binlog(GOLDEN / f"{variant}-bin.000001.dump"))) == len(
        list(read_binlog(path, keys=golden_keys(variant)))
    )


def test_dump_command_key_file(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(golden_file("aes_cbc", 2))
    assert main(["dump", path, "--key-file", str(GOLDEN / "aes_cbc.keys")]) == 0
    listing = capsys.readouterr().out
    assert "Start_encryption scheme 1 key_version 1" in listing
    assert "INSERT INTO enc.t (id, name) VALUES (200, CONCAT('stmt-', @@server_id))" in listing
    assert "Stop" in listing.splitlines()[-1]
    assert main(["dump", path]) == 1
    assert "needs the binlog key" in capsys.readouterr().err
    assert main(["dump", path, "--key-file", str(GOLDEN / "aes_ctr.keys.enc")]) == 1
    assert "its file key is needed" in capsys.readouterr().err


# --- a real MariaDB reads a file this codec encrypted -------------------------------------


def mariadb_binlog() -> str:
    found = shutil.which("mariadb-binlog") or shutil.which("mysqlbinlog")
    require_peer("mariadb-binlog", found is not None, "apt-get install mariadb-client")
    assert found is not None
    return found


@pytest.mark.mariadb
@pytest.mark.slow
@pytest.mark.parametrize(("variant", "key_size"), [("aes_cbc", 16), ("aes_ctr", 32)])
def test_mariadb_reads_a_file_we_encrypted(
    mariadb_factory: MariaDBFactory, tmp_path: Path, variant: str, key_size: int
) -> None:
    client = mariadb_binlog()
    algorithm = VARIANTS[variant]
    rng = random.Random(f"{variant}-{key_size}")  # a new key and nonce, the same on every run
    key = rng.randbytes(key_size)
    key_file = tmp_path / "keys"
    key_file.write_text(f"1;{key.hex()}\n2;{rng.randbytes(16).hex()}\n")
    keys = BinlogKeys.from_key_file(key_file, algorithm=algorithm)
    # The golden file's events, under a new key and nonce.
    events = [event for _, event in read_binlog(golden_file(variant, 1), keys=golden_keys(variant))]
    assert isinstance(events[1], StartEncryptionEvent)
    events[1] = replace(events[1], nonce=rng.randbytes(12))
    ours = write_file(events, keys)
    plain = raw_file_events(write_file(events, None))

    server = mariadb_factory(
        {
            "plugin_load_add": "file_key_management",
            "file_key_management_filename": str(key_file),
            "file_key_management_encryption_algorithm": algorithm.value,
            "encrypt_binlog": "ON",
            "log_bin": "fm-enc-bin",
        }
    )
    server.stop()
    target = server.binlog_files()[0]
    target.write_bytes(ours)
    server.start()

    shown = server.execute(f"SHOW BINLOG EVENTS IN '{target.name}'")
    assert [int(row[1]) for row in shown] == [offset for offset, _ in plain]
    assert [int(row[4]) for row in shown] == [offset + len(data) for offset, data in plain]

    prefix = tmp_path / "dumped-"
    subprocess.run(
        [
            client,
            "--no-defaults",
            "--read-from-remote-server",
            "--raw",
            f"--host={server.host}",
            f"--port={server.port}",
            "--user=root",
            f"--result-file={prefix}",
            target.name,
        ],
        check=True,
        timeout=60,
        capture_output=True,
    )
    dumped = raw_file_events(Path(f"{prefix}{target.name}").read_bytes())
    expected = list(plain)
    expected[1] = (expected[1][0], as_dumped(expected[1][1]))
    assert dumped == expected
