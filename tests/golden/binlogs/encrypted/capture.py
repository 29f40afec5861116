#!/usr/bin/env python3
"""Capture the encrypted golden binlogs of this directory from a real MariaDB 10.11.

For each variant (``aes_cbc``, ``aes_ctr``) this starts a private mariadbd (see
tests/peers/mariadb.py) with ``encrypt_binlog=ON`` and the file_key_management plugin, runs a
small workload (events of every length modulo 16, a one-kilobyte row, DDL, statement-based
events, XA, one FLUSH BINARY LOGS so that a ROTATE is encrypted and the second file has its own
nonce), stops it cleanly, and keeps (names that do not end in digits, so that tests reading
every golden binlog file without keys leave them alone)

    <variant>-bin.00000N.encrypted  the files as the server wrote them (encrypted)
    <variant>-bin.00000N.dump       the same files as the server's dump thread sends them
                                (decrypted by the server), via
                                mariadb-binlog --read-from-remote-server --raw

The aes_cbc server reads ``aes_cbc.keys`` (key id 1: 256 bits); the aes_ctr server reads
``aes_ctr.keys.enc`` (``aes_ctr.keys`` encrypted with ``openssl enc -aes-256-cbc -md sha1
-k fakemaster-secret``; key id 1: 192 bits) with ``file_key_management_filekey``.

Usage (from the repository root): python tests/golden/binlogs/encrypted/capture.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[3]
sys.path.insert(0, str(REPO_ROOT))

from tests.peers.mariadb import MariaDBServer  # noqa: E402

FILE_KEY = "fakemaster-secret"

VARIANTS: dict[str, dict[str, str]] = {
    "aes_cbc": {
        "file_key_management_filename": str(HERE / "aes_cbc.keys"),
        "file_key_management_encryption_algorithm": "AES_CBC",
    },
    "aes_ctr": {
        "file_key_management_filename": str(HERE / "aes_ctr.keys.enc"),
        "file_key_management_filekey": FILE_KEY,
        "file_key_management_encryption_algorithm": "AES_CTR",
    },
}


def workload() -> tuple[list[str], list[str]]:
    """Statements before and after FLUSH BINARY LOGS."""
    first = [
        "CREATE DATABASE enc",
        "CREATE TABLE enc.t (id INT PRIMARY KEY, name VARCHAR(200), payload BLOB,"
        " amount DECIMAL(10,2), at DATETIME(6)) ENGINE=InnoDB",
    ]
    # One row per transaction, the name growing by a byte: every event length modulo 16.
    first += [
        f"INSERT INTO enc.t VALUES ({i}, '{'n' * i}', NULL, {i}.25, '2024-01-02 03:04:05.{i:06d}')"
        for i in range(1, 33)
    ]
    first += [
        "INSERT INTO enc.t VALUES (100, 'big', REPEAT('0123456789abcdef', 64), 1, NULL)",
        "UPDATE enc.t SET amount = amount * 2 WHERE id < 10",
        "DELETE FROM enc.t WHERE id % 3 = 0",
        "ALTER TABLE enc.t ADD COLUMN note TEXT",
    ]
    second = [
        "SET SESSION binlog_format = 'STATEMENT'",
        "INSERT INTO enc.t (id, name) VALUES (200, CONCAT('stmt-', @@server_id))",
        "SET SESSION binlog_format = 'ROW'",
        "BEGIN",
        "INSERT INTO enc.t (id, name, note) VALUES (201, 'in trx', 'é ü')",
        "UPDATE enc.t SET note = 'updated' WHERE id = 100",
        "COMMIT",
        "XA START 'fm'",
        "INSERT INTO enc.t (id, name) VALUES (202, 'xa')",
        "XA END 'fm'",
        "XA PREPARE 'fm'",
        "XA COMMIT 'fm'",
        "DROP TABLE enc.t",
    ]
    return first, second


def dump(server: MariaDBServer, name: str, target: Path) -> None:
    prefix = target / "dumped-"
    subprocess.run(
        [
            "mariadb-binlog",
            "--no-defaults",
            "--read-from-remote-server",
            "--raw",
            f"--host={server.host}",
            f"--port={server.port}",
            "--user=root",
            f"--result-file={prefix}",
            name,
        ],
        check=True,
        timeout=60,
    )
    shutil.move(f"{prefix}{name}", target / f"{name}.dump")


def capture(variant: str, options: dict[str, str]) -> None:
    server = MariaDBServer(
        {
            "plugin_load_add": "file_key_management",
            "encrypt_binlog": "ON",
            "log_bin": f"{variant}-bin",
            **options,
        }
    )
    try:
        server.start()
        print(variant, server.version())
        first, second = workload()
        server.execute(first)
        server.flush_binary_logs()
        server.execute(second)
        server.stop()
        files = server.binlog_files()[:2]
        for path in files:
            shutil.copyfile(path, HERE / f"{path.name}.encrypted")
        server.start()  # the dump thread reads the closed files
        for path in files:
            dump(server, path.name, HERE)
    finally:
        server.close()


def main() -> None:
    for variant, options in VARIANTS.items():
        capture(variant, options)


if __name__ == "__main__":
    main()
