"""``serve`` refuses to offer a password-less account beyond loopback unless told to."""

from __future__ import annotations

import pytest

from fakemaster.cli.serve_settings import is_loopback_host
from tests.fakemaster.cli.test_serve_cli import run_cli, serve


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost", "LOCALHOST"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback_host(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.0.2.1", "example.org"])
def test_hosts_other_machines_may_reach(host: str) -> None:
    assert not is_loopback_host(host)


def test_a_remote_host_with_an_empty_password_is_one_error_line() -> None:
    result = run_cli("serve", "--port", "0", "--host", "0.0.0.0")
    assert result.returncode == 1
    assert result.stdout == ""  # it never listened
    assert result.stderr.startswith(
        "error: --host 0.0.0.0 is not a loopback address and account(s) 'root' have no password"
    ), result.stderr
    assert "--allow-empty-password-remote" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("options", [["--password", "secret"], ["--allow-empty-password-remote"]])
def test_a_password_or_the_explicit_option_lets_it_listen(options: list[str]) -> None:
    with serve("--host", "0.0.0.0", *options) as served:
        assert served.host == "0.0.0.0"
        status, _, stderr = served.stop()
    assert status == 0, stderr
