"""``serve`` reports what the served binlog says, takes ``--variable NAME=VALUE`` for what it
cannot say, refuses options that contradict it, and serves TLS with ``--ssl-cert``/``--ssl-key``
(checked with pymysql and the real ``mariadb --ssl`` client).

Expected variables come from the real MariaDB 10.11 that wrote the golden files
(``expected.json``)."""

from __future__ import annotations

import datetime
import json
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any

import pymysql
import pytest

from tests.fakemaster.cli.test_serve_cli import REPO, run_cli, serve
from tests.peers.policy import require_peer

GOLDEN = REPO / "tests" / "golden" / "binlogs"
CHECKED = (
    "version",
    "binlog_checksum",
    "server_id",
    "binlog_row_metadata",
    "character_set_server",
    "collation_server",
)


def golden_dir(tmp_path: Path, variant: str) -> tuple[Path, dict[str, str]]:
    """The variant's files with an index, and the variables its server answered."""
    data = json.loads((GOLDEN / variant / "expected.json").read_text("utf-8"))
    directory = tmp_path / variant
    directory.mkdir()
    for name in data["binlog_files"]:
        shutil.copy(GOLDEN / variant / name, directory / name)
    (directory / "mysql-bin.index").write_text(
        "".join(f"./{name}\n" for name in data["binlog_files"])
    )
    return directory, {str(k): str(v) for k, v in data["server_variables"].items()}


def select(host: str, port: int, sql: str, **connect: Any) -> tuple[Any, ...]:
    conn = pymysql.connect(host=host, port=port, user="root", password="", **connect)
    try:
        with conn.cursor() as cur:
            cur.execute(sql)
            row = cur.fetchone()
            assert row is not None
            return tuple(row)
    finally:
        conn.close()


@pytest.mark.parametrize("variant", ["full_metadata", "checksum_none"])
def test_serve_reports_what_the_binlog_dir_says(tmp_path: Path, variant: str) -> None:
    directory, expected = golden_dir(tmp_path, variant)
    with serve("--binlog-dir", str(directory)) as served:
        assert f"server_id {expected['server_id']}, MariaDB {expected['version']}" in (
            served.first_line
        )
        row = select(served.host, served.port, "SELECT " + ", ".join(f"@@{v}" for v in CHECKED))
        assert [str(value) for value in row] == [expected[name] for name in CHECKED]
        status, _stdout, stderr = served.stop()
        assert status == 0 and "internal error" not in stderr, stderr


def test_variables_say_what_the_binlog_cannot(tmp_path: Path) -> None:
    directory, _expected = golden_dir(tmp_path, "default")
    with serve(
        "--binlog-dir",
        str(directory),
        "--variable",
        "max_allowed_packet=64M",
        "--variable",
        "log-slave-updates=ON",
        "--variable",
        "gtid_strict_mode=1",
    ) as served:
        row = select(
            served.host,
            served.port,
            "SELECT @@max_allowed_packet, @@log_slave_updates, @@gtid_strict_mode",
        )
        assert row == (64 << 20, 1, 1)
        served.stop()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--server-id", "5"], "server_id: configured 5, but the served binlog says 1"),
        (
            ["--binlog-checksum", "NONE"],
            "binlog_checksum: configured NONE, but the served binlog says CRC32",
        ),
        (
            ["--variable", "binlog_row_metadata=FULL"],
            "binlog_row_metadata: configured FULL, but the served binlog says NO_LOG",
        ),
        (
            ["--variable", "character_set_server=latin1"],
            "character_set_server: configured latin1, but the served binlog says utf8mb4",
        ),
        (["--server-version", "10.6.0-MariaDB"], "version: configured 10.6.0-MariaDB"),
    ],
)
def test_an_option_the_binlog_contradicts_is_one_error_line(
    tmp_path: Path, options: list[str], message: str
) -> None:
    directory, _expected = golden_dir(tmp_path, "default")
    result = run_cli("serve", "--port", "0", "--binlog-dir", str(directory), *options)
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_the_demo_is_checked_too() -> None:
    # The demo's TABLE_MAPs carry column names: FULL.
    result = run_cli("serve", "--port", "0", "--variable", "binlog_row_metadata=NO_LOG")
    assert result.returncode == 1
    assert "binlog_row_metadata: configured NO_LOG, but the served binlog says FULL" in (
        result.stderr
    )


@pytest.mark.parametrize(
    "option",
    [
        "no_such_variable=1",
        "binlog_row_metadata=SOME",
        "max_allowed_packet=lots",
        "log_slave_updates=maybe",
        "character_set_server=klingon",
        "server_id=-1",
        "noequals",
    ],
)
def test_bad_variables_are_usage_errors(option: str) -> None:
    result = run_cli("serve", "--variable", option)
    assert result.returncode == 2, result.stderr
    assert "usage:" in result.stderr and "--variable" in result.stderr


# --- TLS ------------------------------------------------------------------------------------


def self_signed(tmp_path: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "fakemaster test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp_path / "server-cert.pem", tmp_path / "server-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def test_ssl_cert_and_key_serve_tls(tmp_path: Path) -> None:
    cert, key = self_signed(tmp_path)
    with serve("--ssl-cert", str(cert), "--ssl-key", str(key)) as served:
        conn = pymysql.connect(
            host=served.host,
            port=served.port,
            user="root",
            password="",
            ssl={"check_hostname": False, "verify_mode": 0},
        )
        try:
            assert isinstance(conn._sock, ssl.SSLSocket)
            with conn.cursor() as cur:
                cur.execute("SELECT @@have_ssl")
                assert cur.fetchone() == ("YES",)
        finally:
            conn.close()
        client = shutil.which("mariadb")
        require_peer("mariadb (client)", client is not None, "apt-get install mariadb-client")
        assert client is not None
        # --ssl makes the client refuse a server that does not switch to TLS.
        result = subprocess.run(
            [
                client,
                "--no-defaults",
                f"--host={served.host}",
                f"--port={served.port}",
                "--user=root",
                "--ssl",
                "--skip-ssl-verify-server-cert",
                "--batch",
                "--skip-column-names",
                "-e",
                "SELECT @@have_ssl, VERSION()",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.split() == ["YES", "10.11.19-MariaDB-log"]
        status, _stdout, stderr = served.stop()
        assert status == 0 and "internal error" not in stderr, stderr


@pytest.mark.parametrize(
    ("files", "message"),
    [
        (["--ssl-cert", "CERT"], "--ssl-cert and --ssl-key go together"),
        (["--ssl-cert", "CERT", "--ssl-key", "CERT"], "cannot use the certificate"),
        (["--ssl-cert", "MISSING", "--ssl-key", "KEY"], "cannot use the certificate"),
    ],
)
def test_bad_tls_files_are_one_error_line(tmp_path: Path, files: list[str], message: str) -> None:
    cert, key = self_signed(tmp_path)
    paths = {"CERT": str(cert), "KEY": str(key), "MISSING": str(tmp_path / "missing.pem")}
    result = run_cli("serve", "--port", "0", *[paths.get(part, part) for part in files])
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_the_frame_cache_options_reach_the_configuration(tmp_path: Path) -> None:
    from fakemaster.cli import build_parser
    from fakemaster.cli.serve_settings import options_config
    from fakemaster.config.server_config import ServerConfig

    defaults = options_config(build_parser().parse_args(["serve"]))
    assert defaults.frame_cache_bytes == ServerConfig().frame_cache_bytes
    assert defaults.frame_cache_dir is None
    args = ["serve", "--frame-cache-mb", "0", "--frame-cache-dir", str(tmp_path)]
    chosen = options_config(build_parser().parse_args(args))
    assert (chosen.frame_cache_bytes, chosen.frame_cache_dir) == (0, str(tmp_path))
    assert (
        options_config(
            build_parser().parse_args(["serve", "--frame-cache-mb", "3"])
        ).frame_cache_bytes
        == 3 << 20
    )
