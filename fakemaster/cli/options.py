"""The options every command spells the same way, defined once (issue #24).

* :class:`CommandParser`: the parser of the root and of every command and sub-command (argparse
  makes a sub-command's parser of its parent's class). It refuses abbreviated long options
  (``serve --version`` is not ``--version-string``) and answers ``-V``/``--version`` with
  ``fakemaster <version>``, as ``mariadb-binlog -V`` does.
* :func:`add_connection_options`: ``--host``, ``-P``/``--port``, ``-u``/``--user``,
  ``-p``/``--password``, as the mariadb tools name them (``-h`` stays help). ``-p`` or
  ``--password`` without a value asks for the password on the terminal; without the option the
  password is ``$FAKEMASTER_PASSWORD`` (empty when unset), so it need not be on the command line.
* :func:`add_deprecated_alias`: an old spelling kept working for scripts, hidden from the help,
  with a note on stderr naming the new one.

Kept light: ``serve`` builds its parser with this module and nothing else of the commands'.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fakemaster.cli.common import int_range

if TYPE_CHECKING:
    import ssl

__all__ = [
    "CONNECTION_OPTIONS",
    "PASSWORD_ENV",
    "CommandParser",
    "DeprecatedAlias",
    "add_client_compress_option",
    "add_client_tls_options",
    "add_connection_options",
    "add_deprecated_alias",
    "add_port_option",
    "client_tls_context",
    "version_text",
]

# The environment variable a password is read from when no option gives it (the contract
# runner hands clients FAKEMASTER_HOST, FAKEMASTER_PASSWORD... under the same prefix).
PASSWORD_ENV = "FAKEMASTER_PASSWORD"

# Each connection option's dest and option strings: what every command that takes it spells.
CONNECTION_OPTIONS: dict[str, tuple[str, ...]] = {
    "host": ("--host",),
    "port": ("-P", "--port"),
    "user": ("-u", "--user"),
    "password": ("-p", "--password"),
}


def version_text() -> str:
    """What ``--version`` prints: ``fakemaster <version>``."""
    from fakemaster import __version__

    return f"fakemaster {__version__}"


class CommandParser(argparse.ArgumentParser):
    """An ArgumentParser that accepts no abbreviation of a long option and has ``-V``/
    ``--version``. ``add_subparsers`` makes the commands' parsers of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False  # a prefix of an option is an error, never a guess
        super().__init__(*args, **kwargs)
        self.add_argument(
            "-V",
            "--version",
            action="version",
            version=version_text(),
            help="print the version (fakemaster X.Y.Z) and exit",
        )


class _PasswordAction(argparse.Action):
    """``-pSECRET``/``--password=SECRET`` give the password; ``-p``/``--password`` alone ask
    for it on the terminal, as the mariadb tools do."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        if values is None:
            try:
                import getpass  # terminal handling, only to prompt

                values = getpass.getpass("Enter password: ")
            except (EOFError, OSError):
                parser.error(f"{option_string}: no password given and none could be read")
        setattr(namespace, self.dest, values)


class DeprecatedAlias(argparse.Action):
    """An old spelling of an option: stores like the new one (through ``convert``, which may
    set several attributes) and says on stderr which spelling to use."""

    def __init__(
        self,
        option_strings: Sequence[str],
        dest: str,
        replacement: str = "",
        convert: Callable[[str, argparse.Namespace], None] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.replacement = replacement
        self.convert = convert

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        print(
            f"note: {option_string} is deprecated: use {self.replacement}",
            file=sys.stderr,
        )
        if self.convert is not None:
            try:
                self.convert(str(values), namespace)
            except ValueError as exc:
                parser.error(f"{option_string}: {exc}")
        else:
            setattr(namespace, self.dest, values)


def add_deprecated_alias(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    option: str,
    *,
    replacement: str,
    dest: str,
    convert: Callable[[str, argparse.Namespace], None] | None = None,
    **kwargs: Any,
) -> None:
    """Keep ``option`` working as ``replacement``, hidden from the help."""
    parser.add_argument(
        option,
        dest=dest,
        action=DeprecatedAlias,
        replacement=replacement,
        convert=convert,
        default=argparse.SUPPRESS,
        help=argparse.SUPPRESS,
        **kwargs,
    )


def add_port_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    *,
    help: str,
    default: int | None,
    low: int = 1,
) -> None:
    """``-P``/``--port``: a TCP port from ``low`` to 65535."""
    parser.add_argument(
        *CONNECTION_OPTIONS["port"],
        dest="port",
        type=int_range(low, 65535),
        default=default,
        metavar="PORT",
        help=help,
    )


def add_connection_options(
    parser: argparse.ArgumentParser,
    *,
    listening: bool,
    host: str,
    port: int,
    user: str,
) -> None:
    """``--host``, ``-P``/``--port``, ``-u``/``--user``, ``-p``/``--password`` with their
    defaults: of the server a command runs (``listening``), or of the one it connects to."""
    group = parser.add_argument_group(
        "connection",
        "The password may also come from the environment variable "
        f"{PASSWORD_ENV}; -p or --password without a value asks for it.",
    )
    group.add_argument(
        *CONNECTION_OPTIONS["host"],
        dest="host",
        default=host,
        metavar="HOST",
        help=("address to listen on" if listening else "the server to connect to")
        + f" (default: {host})",
    )
    add_port_option(
        group,
        help=(
            f"TCP port to listen on (default: {port}; 0 picks a free one)"
            if listening
            else f"its TCP port (default: {port})"
        ),
        default=port,
        low=0 if listening else 1,
    )
    group.add_argument(
        *CONNECTION_OPTIONS["user"],
        dest="user",
        default=user,
        metavar="USER",
        help=(
            f"the account replicas log in with (default: {user}); root has all privileges, "
            "any other name those of GRANT REPLICATION SLAVE, REPLICATION CLIENT"
            if listening
            else f"the account to log in with (default: {user}); it needs REPLICATION SLAVE"
        ),
    )
    group.add_argument(
        *CONNECTION_OPTIONS["password"],
        dest="password",
        nargs="?",
        action=_PasswordAction,
        default=os.environ.get(PASSWORD_ENV, ""),
        metavar="PASSWORD",
        help=f"its password (default: ${PASSWORD_ENV}, else none); without a value: ask",
    )


def add_client_tls_options(parser: argparse.ArgumentParser) -> None:
    """The mariadb client's TLS options, for a command that connects to a primary."""
    group = parser.add_argument_group(
        "TLS",
        "As the mariadb client's: --ssl asks for TLS (never falling back to a plain "
        "connection); --ssl-ca or --ssl-verify-server-cert also verify the server's "
        "certificate and its name.",
    )
    group.add_argument("--ssl", action="store_true", help="connect with TLS")
    group.add_argument(
        "--ssl-ca", type=Path, metavar="FILE", help="CA certificates (PEM) to verify the server"
    )
    group.add_argument(
        "--ssl-verify-server-cert",
        action="store_true",
        help="verify the server's certificate (the system's CAs without --ssl-ca) and name",
    )
    group.add_argument("--ssl-cert", type=Path, metavar="FILE", help="client certificate (PEM)")
    group.add_argument("--ssl-key", type=Path, metavar="FILE", help="its private key (PEM)")


def add_client_compress_option(parser: argparse.ArgumentParser) -> None:
    """The mariadb client's ``--compress`` (``-C``), for a command that connects to a primary."""
    parser.add_argument(
        "-C",
        "--compress",
        action="store_true",
        help="use the compressed protocol when the primary offers it",
    )


def client_tls_context(args: argparse.Namespace) -> ssl.SSLContext | None:
    """The TLS context the options of :func:`add_client_tls_options` ask for (None: plain).
    OSError/ssl.SSLError for unreadable files (the caller reports them)."""
    wanted = args.ssl or args.ssl_ca or args.ssl_verify_server_cert or args.ssl_cert
    if not wanted:
        return None
    from fakemaster.client.tls import tls_context

    return tls_context(
        ca=args.ssl_ca,
        verify=bool(args.ssl_ca or args.ssl_verify_server_cert),
        cert=args.ssl_cert,
        key=args.ssl_key,
    )
