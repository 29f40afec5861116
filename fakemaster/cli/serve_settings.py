"""The ``serve`` options that say what a binlog cannot: system variables and TLS.

``--variable NAME=VALUE`` sets a global system variable the way a server option does
(``--max-allowed-packet=64M``, ``--binlog-row-metadata=FULL``); ``--ssl-cert`` and
``--ssl-key`` give the server its certificate, as MariaDB's options of the same names.
"""

from __future__ import annotations

import argparse
import ipaddress
import ssl
from pathlib import Path

from fakemaster.config.variables import Value, lookup, setting_value
from fakemaster.vocabulary.errors import ConfigError

__all__ = ["is_loopback_host", "server_tls_context", "variable_setting"]


def variable_setting(text: str) -> tuple[str, Value]:
    """``NAME=VALUE`` as (variable name, typed value); a usage error for an unknown variable
    or a value the server would refuse. Dashes in the name count as underscores."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    var = lookup(name.strip().replace("-", "_"))
    if var is None:
        raise argparse.ArgumentTypeError(f"unknown system variable {name.strip()!r}")
    try:
        return var.name, setting_value(var, value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def server_tls_context(cert: Path, key: Path) -> ssl.SSLContext:
    """The server side of TLS with a PEM certificate (chain) and its private key; ConfigError
    naming the files when they cannot be used."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(certfile=cert, keyfile=key)
    except (OSError, ssl.SSLError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise ConfigError(
            f"cannot use the certificate {cert} with the key {key}: {reason}",
            variable="ssl_cert",
        ) from None
    return context


def is_loopback_host(host: str) -> bool:
    """Whether listening on ``host`` reaches only this machine: a loopback address or
    "localhost". Any other name counts as remote (it may resolve anywhere), and so does ""
    (every interface)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
