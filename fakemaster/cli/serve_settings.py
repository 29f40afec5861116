"""The ``serve`` options made a ServerConfig, and those that say what a binlog cannot: system
variables and TLS.

``--variable NAME=VALUE`` sets a global system variable the way a server option does
(``--max-allowed-packet=64M``, ``--binlog-row-metadata=FULL``); ``--ssl-cert`` and
``--ssl-key`` give the server its certificate, as MariaDB's options of the same names. A
password-less account is offered beyond this machine only when told to.
"""

from __future__ import annotations

import argparse
import ipaddress
import ssl
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.cli.common import CommandError, load_key_file
from fakemaster.config.variables import Value, lookup, setting_value
from fakemaster.vocabulary.errors import ConfigError

if TYPE_CHECKING:
    from fakemaster.config.accounts import Account
    from fakemaster.config.server_config import ServerConfig
    from fakemaster.store import BinlogStore

__all__ = [
    "account_setting",
    "check_exposure",
    "is_loopback_host",
    "options_config",
    "served_config",
    "server_tls_context",
    "variable_setting",
]


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


def account_setting(text: str) -> Account:
    """``--account USER[@HOST]:PASSWORD[:GRANTS]`` (fakemaster.config.account_spec); a usage
    error naming what is wrong otherwise."""
    from fakemaster.config.account_spec import AccountSpecError, parse_account

    try:
        return parse_account(text)
    except AccountSpecError as exc:
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


def _global(name: str, value: Any) -> Any:
    """The value of global ``name`` when the server option says ``value``."""
    from fakemaster.config.server_config import ServerConfig

    return ServerConfig(variables={name: value}).global_variables()[name]


def options_config(args: argparse.Namespace, **fields: Any) -> ServerConfig:
    """The ServerConfig the options describe (ConfigError for a contradictory one)."""
    from fakemaster.config.server_config import ServerConfig

    variables = dict(getattr(args, "scenario_variables", {}))
    for name, value in args.variables:
        if name in variables and _global(name, variables[name]) != _global(name, value):
            raise CommandError(
                f"--variable {name}={value} contradicts the scenario's {name}={variables[name]}"
            )
        variables[name] = value
    given = {
        "server_id": args.server_id,
        "version": args.version_string,
        "binlog_checksum": args.checksum,
    }
    for name, value in given.items():
        if value is not None and name in variables and variables[name] != value:
            raise CommandError(f"{name} is given twice: {value!r} and {variables[name]!r}")
    # A scenario's accounts, then --account ones (which win for the same user name).
    accounts = (*getattr(args, "scenario_accounts", ()), *getattr(args, "accounts", ()))
    return ServerConfig(
        host=args.host,
        port=args.port,
        server_id=args.server_id,
        version=args.version_string,
        user=args.user,
        password=args.password,
        binlog_checksum=args.checksum,
        gtid_domain_id=args.gtid_domain_id or 0,
        semi_sync_enabled=args.semi_sync,
        semi_sync_timeout_ms=args.semi_sync_timeout,
        default_heartbeat_period_ns=round((args.heartbeat or 0) * 1e9),
        variables=variables,
        frame_cache_bytes=args.frame_cache_mb << 20,
        frame_cache_dir=args.frame_cache_dir,
        dump_thread_niceness=args.dump_thread_niceness,
        accounts=accounts,
        **fields,
    )


def served_config(args: argparse.Namespace, store: BinlogStore) -> ServerConfig:
    """The ServerConfig ``serve`` runs with: the options', the served binlog's basename, the
    keys of ``--key-file`` and the TLS context of ``--ssl-cert``/``--ssl-key``."""
    keys = load_key_file(args.key_file)
    tls = None
    if args.ssl_cert is not None or args.ssl_key is not None:
        if args.ssl_cert is None or args.ssl_key is None:
            raise CommandError("--ssl-cert and --ssl-key go together")
        tls = server_tls_context(args.ssl_cert, args.ssl_key)
    return options_config(args, binlog_basename=store.basename, binlog_keys=keys, ssl_context=tls)


def check_exposure(config: ServerConfig, allowed: bool) -> None:
    """Refuse to offer a password-less account beyond this machine unless told to."""
    if allowed or is_loopback_host(config.host):
        return
    open_accounts = sorted(
        user for user, account in config.all_accounts().items() if not account.password
    )
    if open_accounts:
        raise CommandError(
            f"--host {config.host} is not a loopback address and account(s) "
            f"{', '.join(map(repr, open_accounts))} have no password: give --password, or "
            "--allow-empty-password-remote to serve them anyway"
        )
