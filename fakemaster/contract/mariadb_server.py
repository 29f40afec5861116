"""Run a real MariaDB server (``mariadbd``): the test suite's peers (``tests.peers.mariadb``
re-exports this module), and the contract tests' real replica (the ``mariadb_replica`` adapter
and the ``fake_master_replica`` fixture of :mod:`fakemaster.contract.pytest`).

Each :class:`MariaDBServer` owns a private temporary directory holding its
datadir, binlogs, socket, pid file, error log and a ``files`` directory that
is the server's ``secure_file_priv`` (so ``LOAD DATA INFILE`` works).  It
listens on 127.0.0.1 on a free TCP port, never touches the system service
or ``/etc/mysql`` (``--no-defaults``) and several instances can run at once.

Start-up is kept fast by initialising one *template* datadir per process with
``mariadb-install-db`` and copying it for every instance.

Typical use::

    with MariaDBServer({"binlog_row_image": "MINIMAL"}) as server:
        server.execute("CREATE DATABASE d")
        ...
        server.stop()                 # clean shutdown: last binlog gets STOP
        files = server.binlog_files()

Environment knobs:

* ``FAKEMASTER_MARIADBD`` / ``FAKEMASTER_MARIADB_INSTALL_DB``: explicit
  paths of the binaries;
* ``FAKEMASTER_KEEP_MARIADB=1``: do not delete the instance directory at
  :meth:`MariaDBServer.close` (for post-mortem debugging).
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from fakemaster.contract.server_lifetime import death_bound, reap_stale_instances, write_owner

__all__ = [
    "BINLOG_BASENAME",
    "DEFAULT_OPTIONS",
    "HOW_TO_INSTALL",
    "INSTALL_SCRIPT",
    "MariaDBServer",
    "MariaDBStartError",
    "PeerMissing",
    "find_install_db",
    "find_mariadbd",
    "mariadb_available",
]

INSTALL_SCRIPT = "scripts/install-deps.sh"
HOW_TO_INSTALL = (
    f"run `{INSTALL_SCRIPT}` as root from the repository root "
    "(Debian 12: apt-get install mariadb-server mariadb-client)"
)

BINLOG_BASENAME = "mysql-bin"

#: Options every instance gets unless overridden.  Keys use underscores;
#: values: ``None`` -> bare ``--flag``; ``True``/``False`` -> ``ON``/``OFF``.
DEFAULT_OPTIONS: dict[str, Any] = {
    "server_id": 1,
    "binlog_format": "ROW",
    "max_allowed_packet": "64M",
    "character_set_server": "utf8mb4",
    "collation_server": "utf8mb4_general_ci",
    "default_time_zone": "+00:00",
    "skip_name_resolve": None,
    "innodb_buffer_pool_size": "32M",
    "innodb_log_file_size": "16M",
    "innodb_flush_log_at_trx_commit": 2,
    "innodb_doublewrite": 0,
    "innodb_use_native_aio": 0,
    "max_connections": 64,
    "loose_feedback": "OFF",
}

#: Options that must already be in effect when the datadir is created;
#: instances that set one of them get their own template.
_INIT_OPTIONS = frozenset(
    {
        "innodb_page_size",
        "innodb_log_file_size",
        "innodb_checksum_algorithm",
        "innodb_data_file_path",
        "innodb_undo_tablespaces",
        "lower_case_table_names",
    }
)


class PeerMissing(RuntimeError):
    """The MariaDB binaries are not installed."""


class MariaDBStartError(RuntimeError):
    """mariadbd did not come up; the message includes its error log."""


# --------------------------------------------------------------------------
# binaries


def _which(names: Iterable[str], extra_dirs: Iterable[str]) -> str | None:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    for d in extra_dirs:
        for name in names:
            p = Path(d) / name
            if p.is_file() and os.access(p, os.X_OK):
                return str(p)
    return None


_SBIN_DIRS = ("/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin", "/usr/local/mysql/bin")


def find_mariadbd() -> str | None:
    env = os.environ.get("FAKEMASTER_MARIADBD")
    if env:
        return env if os.access(env, os.X_OK) else None
    return _which(["mariadbd"], _SBIN_DIRS)


def find_install_db() -> str | None:
    env = os.environ.get("FAKEMASTER_MARIADB_INSTALL_DB")
    if env:
        return env if os.access(env, os.X_OK) else None
    return _which(["mariadb-install-db", "mysql_install_db"], _SBIN_DIRS)


def mariadb_available() -> bool:
    """True when mariadbd, mariadb-install-db and pymysql are all present."""
    try:
        import pymysql  # type: ignore[import-untyped]  # noqa: F401
    except ImportError:
        return False
    return find_mariadbd() is not None and find_install_db() is not None


def _require_binaries() -> tuple[str, str]:
    mariadbd = find_mariadbd()
    install_db = find_install_db()
    missing = [n for n, p in (("mariadbd", mariadbd), ("mariadb-install-db", install_db)) if not p]
    if missing:
        raise PeerMissing(
            f"MariaDB is not installed ({', '.join(missing)} not found); {HOW_TO_INSTALL}"
        )
    try:
        import pymysql  # noqa: F401
    except ImportError as e:
        raise PeerMissing(
            f"pymysql is not installed; run `python3 -m pip install -e '.[test]'` ({e})"
        ) from e
    assert mariadbd and install_db
    return mariadbd, install_db


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


# --------------------------------------------------------------------------
# options


def _norm_key(key: str) -> str:
    return key.strip().lstrip("-").replace("-", "_")


def _fmt_option(key: str, value: Any) -> str:
    flag = "--" + key.replace("_", "-")
    if value is None:
        return flag
    if value is True:
        return f"{flag}=ON"
    if value is False:
        return f"{flag}=OFF"
    return f"{flag}={value}"


# --------------------------------------------------------------------------
# template datadirs (one mariadb-install-db run per process and init-options)

_template_lock = threading.Lock()
_templates: dict[tuple[Any, ...], Path] = {}
_template_root: Path | None = None


def _template_datadir(install_db: str, mariadbd: str, init_opts: dict[str, Any]) -> Path:
    global _template_root
    key = (install_db, mariadbd, tuple(sorted((k, str(v)) for k, v in init_opts.items())))
    with _template_lock:
        cached = _templates.get(key)
        if cached is not None and cached.is_dir():
            return cached
        if _template_root is None:
            _template_root = Path(tempfile.mkdtemp(prefix="fm-mariadb-templates-"))
            atexit.register(shutil.rmtree, _template_root, True)
        target = _template_root / f"t{len(_templates)}"
        # A private tmpdir: bootstraps of parallel test processes must not share /tmp's files.
        bootstrap_tmp = _template_root / f"t{len(_templates)}-tmp"
        bootstrap_tmp.mkdir()
        cmd = [
            install_db,
            "--no-defaults",
            f"--datadir={target}",
            "--auth-root-authentication-method=normal",
            "--skip-test-db",
            "--skip-name-resolve",
            "--innodb-buffer-pool-size=16M",
            "--innodb-use-native-aio=0",
            f"--tmpdir={bootstrap_tmp}",
            *(_fmt_option(k, v) for k, v in init_opts.items()),
        ]
        if _is_root():
            cmd.append("--user=root")
        basedir = Path(mariadbd).resolve().parent.parent
        if (basedir / "share").is_dir():
            cmd.append(f"--basedir={basedir}")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise MariaDBStartError(
                f"mariadb-install-db failed (rc={proc.returncode}): {' '.join(cmd)}\n"
                f"--- stdout ---\n{proc.stdout}\n--- stderr ---\n{proc.stderr}"
            )
        _templates[key] = target
        return target


# --------------------------------------------------------------------------
# live-instance bookkeeping: kill leftovers when the interpreter exits

_live: weakref.WeakSet[MariaDBServer] = weakref.WeakSet()
_INSTANCE_PREFIX = "fm-mariadb-"


@atexit.register
def _kill_leftovers() -> None:
    for server in list(_live):
        try:
            server.kill()
        except Exception:
            pass


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class MariaDBServer:
    """One private mariadbd instance.

    ``options`` are extra server options (e.g. ``{"binlog_row_image":
    "MINIMAL", "log_bin_compress": "ON"}``), merged over
    :data:`DEFAULT_OPTIONS`; ``server_id`` is a shortcut for the option of
    the same name.  The binlog basename is always ``<binlog_dir>/mysql-bin``
    unless ``log_bin`` is given explicitly.
    """

    def __init__(
        self,
        options: Mapping[str, Any] | None = None,
        *,
        server_id: int | None = None,
        start_timeout: float = 60.0,
        base_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        self._mariadbd, self._install_db = _require_binaries()
        merged: dict[str, Any] = {_norm_key(k): v for k, v in DEFAULT_OPTIONS.items()}
        for k, v in (options or {}).items():
            merged[_norm_key(k)] = v
        if server_id is not None:
            merged["server_id"] = server_id
        self.options = merged
        self.start_timeout = start_timeout
        self._base_dir_parent = base_dir
        self._root: Path | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._port: int | None = None
        self.startup_seconds: float | None = None

    # -- paths -------------------------------------------------------------

    @property
    def root(self) -> Path:
        if self._root is None:
            raise RuntimeError("server has not been started")
        return self._root

    @property
    def datadir(self) -> Path:
        return self.root / "data"

    @property
    def binlog_dir(self) -> Path:
        return self.root / "binlog"

    @property
    def files_dir(self) -> Path:
        """The server's ``secure_file_priv`` directory (LOAD DATA INFILE)."""
        return self.root / "files"

    @property
    def socket_path(self) -> Path:
        return self.root / "mysqld.sock"

    @property
    def error_log(self) -> Path:
        return self.root / "error.log"

    @property
    def pid_file(self) -> Path:
        return self.root / "mysqld.pid"

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("server has not been started")
        return self._port

    @property
    def host(self) -> str:
        return "127.0.0.1"

    @property
    def server_id(self) -> int:
        return int(self.options["server_id"])

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def is_running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def error_log_text(self) -> str:
        try:
            return self.error_log.read_text(errors="replace")
        except (FileNotFoundError, RuntimeError):
            return ""

    @property
    def binlog_index(self) -> Path:
        log_bin = self.options.get("log_bin")
        if isinstance(log_bin, str) and log_bin not in ("ON", "1"):
            base = Path(log_bin)
            if not base.is_absolute():
                base = self.datadir / base
        else:
            base = self.binlog_dir / BINLOG_BASENAME
        index = self.options.get("log_bin_index")
        if index:
            p = Path(str(index))
            return p if p.is_absolute() else self.datadir / p
        return base.with_name(base.name + ".index")

    def binlog_files(self) -> list[Path]:
        """Binlog files listed in the index file, oldest first."""
        try:
            lines = self.binlog_index.read_text().splitlines()
        except FileNotFoundError:
            return []
        out = []
        for line in lines:
            line = line.strip()
            if not line:
                continue
            p = Path(line)
            out.append(p if p.is_absolute() else (self.datadir / p).resolve())
        return out

    # -- lifecycle ---------------------------------------------------------

    def _command(self) -> list[str]:
        opts = dict(self.options)
        opts.setdefault("log_bin", str(self.binlog_dir / BINLOG_BASENAME))
        cmd = [
            self._mariadbd,
            "--no-defaults",
            f"--datadir={self.datadir}",
            f"--tmpdir={self.root / 'tmp'}",
            f"--bind-address={self.host}",
            f"--port={self._port}",
            f"--socket={self.socket_path}",
            f"--pid-file={self.pid_file}",
            f"--log-error={self.error_log}",
            f"--secure-file-priv={self.files_dir}",
        ]
        if _is_root():
            cmd.append("--user=root")
        cmd += [_fmt_option(k, v) for k, v in opts.items()]
        return cmd

    def start(self) -> MariaDBServer:
        if self.is_running():
            return self
        t0 = time.monotonic()
        init_opts = {k: v for k, v in self.options.items() if k in _INIT_OPTIONS}
        template = _template_datadir(self._install_db, self._mariadbd, init_opts)
        if self._root is None:
            # Servers left by a test process that was killed (a timeout's SIGTERM) go first.
            parent = Path(self._base_dir_parent or tempfile.gettempdir())
            reap_stale_instances(
                parent, _INSTANCE_PREFIX, delete=os.environ.get("FAKEMASTER_KEEP_MARIADB") != "1"
            )
            self._root = Path(tempfile.mkdtemp(prefix=_INSTANCE_PREFIX, dir=parent))
            write_owner(self._root)
            shutil.copytree(template, self.datadir, symlinks=True)
            for sub in ("binlog", "files", "tmp"):
                (self.root / sub).mkdir()
        last_error: Exception | None = None
        for _attempt in range(5):
            self._port = _free_port()
            try:
                self._spawn_and_wait()
                break
            except MariaDBStartError as e:
                last_error = e
                if (
                    "Address already in use" in str(e)
                    or "errno: 98" in str(e)
                    or "error: 98" in str(e)
                ):
                    continue  # somebody grabbed the port; try another one
                raise
        else:
            assert last_error is not None
            raise last_error
        self.startup_seconds = time.monotonic() - t0
        _live.add(self)
        return self

    def _spawn_and_wait(self) -> None:
        log_offset = self.error_log.stat().st_size if self.error_log.exists() else 0
        self._proc = subprocess.Popen(
            death_bound(self._command()),  # dies with this process, even when it is killed
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a Ctrl-C in pytest must not hit mariadbd first
        )
        deadline = time.monotonic() + self.start_timeout
        import pymysql

        delay = 0.02
        while True:
            rc = self._proc.poll()
            if rc is not None:
                self._proc = None
                raise MariaDBStartError(
                    f"mariadbd exited with rc={rc} during start-up; error log:\n"
                    + self.error_log_text()[log_offset:]
                )
            if self._ready_in_log(log_offset):
                try:
                    conn = pymysql.connect(
                        host=self.host, port=self._port, user="root", password="", connect_timeout=2
                    )
                    conn.close()
                    return
                except pymysql.err.OperationalError:
                    pass
            if time.monotonic() > deadline:
                self.kill()
                raise MariaDBStartError(
                    f"mariadbd did not accept connections within {self.start_timeout}s; error log:\n"
                    + self.error_log_text()[log_offset:]
                )
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)

    def _ready_in_log(self, offset: int) -> bool:
        # Cheap check before trying to connect: avoids connecting to a port
        # that some other process might own.
        return "ready for connections" in self.error_log_text()[offset:]

    def stop(self, timeout: float = 60.0) -> None:
        """Clean shutdown (SQL ``SHUTDOWN``, then SIGTERM); waits for exit.

        After a clean stop the last binlog file is closed with a STOP event.
        """
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                conn = self.connect(connect_timeout=5, read_timeout=timeout)
                try:
                    with conn.cursor() as cur:
                        cur.execute("SHUTDOWN")
                finally:
                    try:
                        conn.close()
                    except Exception:
                        pass
            except Exception:
                try:
                    proc.send_signal(signal.SIGTERM)
                except ProcessLookupError:
                    pass
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(timeout=timeout)
                except subprocess.TimeoutExpired:
                    self.kill()
                    raise RuntimeError(
                        "mariadbd did not stop within the timeout; killed it. Error log:\n"
                        + self.error_log_text()
                    ) from None
        self._proc = None
        _live.discard(self)

    def kill(self) -> None:
        """Hard stop (SIGKILL); the last binlog is left without STOP event."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=30)
        self._proc = None
        _live.discard(self)

    def restart(self) -> MariaDBServer:
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop (cleanly if possible) and delete the instance directory."""
        try:
            if self.is_running():
                self.stop()
        finally:
            self.kill()
            if self._root is not None and os.environ.get("FAKEMASTER_KEEP_MARIADB") != "1":
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

    def __enter__(self) -> MariaDBServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "running" if self.is_running() else "stopped"
        return f"<MariaDBServer {state} port={self._port} root={self._root}>"

    # -- SQL ---------------------------------------------------------------

    def connect(self, **kw: Any) -> Any:
        """A pymysql connection as root over TCP (autocommit, utf8mb4).

        Keyword arguments override the defaults and are passed to
        ``pymysql.connect``.
        """
        import pymysql

        params: dict[str, Any] = {
            "host": self.host,
            "port": self.port,
            "user": "root",
            "password": "",
            "charset": "utf8mb4",
            "autocommit": True,
            "connect_timeout": 10,
            "max_allowed_packet": 64 * 1024 * 1024,
        }
        params.update(kw)
        return pymysql.connect(**params)

    def execute(self, sql: str | Iterable[str], **connect_kw: Any) -> list[tuple[Any, ...]]:
        """Run one statement or a list of statements in one fresh session.

        Returns the rows of the last statement (empty list if none).
        """
        statements = [sql] if isinstance(sql, str) else list(sql)
        conn = self.connect(**connect_kw)
        try:
            rows: list[tuple[Any, ...]] = []
            with conn.cursor() as cur:
                for stmt in statements:
                    cur.execute(stmt)
                    rows = list(cur.fetchall()) if cur.description else []
            return rows
        finally:
            conn.close()

    def query_one(self, sql: str) -> Any:
        rows = self.execute(sql)
        return rows[0][0] if rows else None

    def version(self) -> str:
        return str(self.query_one("SELECT VERSION()"))

    def create_replication_user(
        self,
        user: str,
        password: str,
        host: str = "%",
        privileges: str = "REPLICATION SLAVE, BINLOG MONITOR, SELECT",
    ) -> None:
        """Create a user allowed to dump the binlog (and read metadata)."""
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(
                    "CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (user, host, password)
                )
                cur.execute(f"GRANT {privileges} ON *.* TO %s@%s", (user, host))
        finally:
            conn.close()

    def flush_binary_logs(self) -> None:
        self.execute("FLUSH BINARY LOGS")

    def master_status(self) -> tuple[str, int]:
        rows = self.execute("SHOW MASTER STATUS")
        return str(rows[0][0]), int(rows[0][1])

    def wait_for_binlog_checkpoint(self, timeout: float = 60.0) -> str:
        """Until the newest binlog file holds the BINLOG_CHECKPOINT naming itself; its name.

        After a rotation the server writes that event on its own, in a background thread,
        once the transactions of the older files are durable in the engines: a binlog read
        before it differs from one read after, so a test comparing two reads waits first.
        From then on the binlog changes only with new transactions.
        """
        deadline = time.monotonic() + timeout
        while True:
            last, _ = self.master_status()
            events = self.execute(f"SHOW BINLOG EVENTS IN '{last}'")
            if any(row[2] == "Binlog_checkpoint" and row[5] == f"{last}" for row in events):
                return last
            if time.monotonic() >= deadline:
                kinds = [str(row[2]) for row in events]
                raise TimeoutError(f"no BINLOG_CHECKPOINT naming {last} after {timeout} s: {kinds}")
            time.sleep(0.05)

    # -- as a replica ------------------------------------------------------

    def change_master(
        self,
        host: str,
        port: int,
        user: str,
        password: str,
        *,
        use_gtid: str = "slave_pos",
        log_file: str | None = None,
        log_pos: int | None = None,
        heartbeat_period: float | None = None,
        connect_retry: int = 1,
    ) -> None:
        """``CHANGE MASTER TO`` a primary (``use_gtid``: ``slave_pos``, ``current_pos`` or
        ``no``; with ``no``, ``log_file``/``log_pos`` say where to start)."""
        import pymysql.converters  # type: ignore[import-untyped]

        def quote(text: str) -> str:
            escaped: str = pymysql.converters.escape_string(text)
            return "'" + escaped + "'"

        options = [
            f"MASTER_HOST={quote(host)}",
            f"MASTER_PORT={int(port)}",
            f"MASTER_USER={quote(user)}",
            f"MASTER_PASSWORD={quote(password)}",
            f"MASTER_USE_GTID={use_gtid}",
            f"MASTER_CONNECT_RETRY={int(connect_retry)}",
        ]
        if log_file is not None:
            options.append(f"MASTER_LOG_FILE={quote(log_file)}")
        if log_pos is not None:
            options.append(f"MASTER_LOG_POS={int(log_pos)}")
        if heartbeat_period is not None:
            options.append(f"MASTER_HEARTBEAT_PERIOD={heartbeat_period}")
        self.execute("CHANGE MASTER TO " + ", ".join(options))

    def slave_status(self) -> dict[str, Any]:
        """``SHOW SLAVE STATUS`` as a dict (empty when no primary is configured)."""
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute("SHOW SLAVE STATUS")
                row = cur.fetchone()
                if row is None:
                    return {}
                return dict(zip([d[0] for d in cur.description], row, strict=True))
        finally:
            conn.close()

    def status_variable(self, name: str) -> str | None:
        """A ``SHOW GLOBAL STATUS`` value (None if the server has no such variable)."""
        rows = self.execute(f"SHOW GLOBAL STATUS LIKE '{name}'")
        return str(rows[0][1]) if rows else None
