#!/usr/bin/env bash
# Install what the test-suite needs on a fresh Debian 12 machine (run as root).
#
#   scripts/install-deps.sh               # MariaDB server/client, Java 17, Node.js + tests/node (npm ci) + pip install -e '.[test]'
#   scripts/install-deps.sh --no-mariadb  # only the Python part
#
# Idempotent: re-running it is cheap. The tests never use the system MariaDB
# service: they start private mariadbd instances (own datadir, port, socket;
# see tests/peers/mariadb.py). So this script keeps the packaged service from
# starting, and shuts it down if it runs anyway (only that one server, by its
# own pid file / socket).
#
# Environment: PYTHON (default python3).
set -euo pipefail

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PYTHON="${PYTHON:-python3}"
WITH_MARIADB=1

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; }

for arg in "$@"; do
    case "$arg" in
        --no-mariadb) WITH_MARIADB=0 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "unknown argument: $arg" >&2; usage >&2; exit 2 ;;
    esac
done

log() { echo "[install-deps] $*"; }

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

packages_installed() {
    local p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || return 1
    done
}

stop_system_mariadb() {
    # Stop the packaged server if a post-install (or anyone) started it.
    # Only touches the server of the system datadir, never our test instances.
    local pidfile sock pid
    for pidfile in /run/mysqld/mysqld.pid /var/run/mysqld/mysqld.pid; do
        [ -s "$pidfile" ] || continue
        pid="$(cat "$pidfile")"
        kill -0 "$pid" 2>/dev/null || continue
        log "stopping the system MariaDB service (pid $pid) so it holds no port"
        sock=/run/mysqld/mysqld.sock
        if ! timeout 60 mariadb-admin --no-defaults --protocol=socket -S "$sock" -uroot shutdown 2>/dev/null; then
            as_root kill -TERM "$pid" 2>/dev/null || true
        fi
        # mariadbd removes its pid file when it has shut down cleanly
        for _ in $(seq 1 120); do
            { kill -0 "$pid" 2>/dev/null && [ -e "$pidfile" ]; } || break
            sleep 0.5
        done
        if kill -0 "$pid" 2>/dev/null && [ -e "$pidfile" ]; then
            log "system mariadbd $pid did not stop; killing it"
            as_root kill -KILL "$pid" 2>/dev/null || true
        fi
    done
}

install_mariadb() {
    # tcpdump: the scapy tests capture loopback traffic with it. mydumper (0.10 in Debian 12)
    # and percona-toolkit (3.2.1): the real-tools differential runs them against both servers.
    local pkgs=(mariadb-server mariadb-client tcpdump mydumper percona-toolkit)
    if packages_installed "${pkgs[@]}" && command -v mariadb-install-db >/dev/null \
        && { command -v mariadbd >/dev/null || [ -x /usr/sbin/mariadbd ]; }; then
        log "MariaDB packages already installed"
    else
        # Keep the package's post-install from starting the system service
        # (standard Debian policy-rc.d mechanism), unless a policy exists.
        local policy=/usr/sbin/policy-rc.d created_policy=0
        if [ ! -e "$policy" ]; then
            printf '#!/bin/sh\nexit 101\n' | as_root tee "$policy" >/dev/null
            as_root chmod 755 "$policy"
            created_policy=1
        fi
        log "apt-get update"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        log "apt-get install ${pkgs[*]}"
        local rc=0
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
            --no-install-recommends "${pkgs[@]}" || rc=$?
        if [ "$created_policy" -eq 1 ]; then as_root rm -f "$policy"; fi
        [ "$rc" -eq 0 ] || { log "apt-get install failed (rc=$rc)"; exit "$rc"; }
    fi
    stop_system_mariadb
    local mariadbd
    mariadbd="$(command -v mariadbd || echo /usr/sbin/mariadbd)"
    log "$("$mariadbd" --no-defaults --version)"
}

install_java() {
    # PySpark (the [spark] extra, in '.[test]') runs on a Java 17 runtime.
    if command -v java >/dev/null && java -version 2>&1 | grep -q 'version "\(1[7-9]\|2[0-9]\)'; then
        log "$(java -version 2>&1 | head -1)"
        return
    fi
    log "apt-get install openjdk-17-jre-headless"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        openjdk-17-jre-headless
}

install_chromium() {
    # Headless Chromium: the test of check's HTML report opens it in a real browser
    # (chromium --headless --dump-dom, tests/integration/test_check_html_report.py).
    if packages_installed chromium; then
        log "chromium already installed"
    else
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        log "apt-get install chromium"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
    fi
    log "$(chromium --version 2>/dev/null || echo 'chromium: not runnable')"
}

install_node() {
    # Node.js and the Node clients the integration tests run (tests/node/package.json:
    # mysql2's execute(), the prepared-statement protocol), pinned by its package-lock.json.
    if ! command -v npm >/dev/null; then
        log "apt-get install nodejs npm"
        as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
        as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
            nodejs npm
    fi
    log "node $(node --version): npm ci in tests/node"
    (cd "$REPO_ROOT/tests/node" && npm ci --no-audit --no-fund --loglevel=error)
}

install_compiler() {
    # The package's one C extension (the dump's framing of small events) needs a compiler and
    # Python's headers; without them the package installs and frames in Python, about 3x slower
    # on a first dump, and CI's tests of the extension fail (tests/fakemaster/core/test_dump_framing.py).
    local include
    include="$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
    if command -v cc >/dev/null && [ -f "$include/Python.h" ]; then
        log "C compiler and Python headers present ($include)"
        return
    fi
    log "apt-get install gcc libc6-dev python3-dev"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        gcc libc6-dev python3-dev
}

install_python() {
    cd "$REPO_ROOT"
    install_compiler
    local extra=()
    # Debian's system Python is "externally managed" (PEP 668); outside a
    # virtualenv pip then needs --break-system-packages.
    if "$PYTHON" - <<'EOF'
import os, sys, sysconfig
in_venv = sys.prefix != sys.base_prefix
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
sys.exit(0 if (not in_venv and os.path.exists(marker)) else 1)
EOF
    then
        extra+=(--break-system-packages)
    fi
    # editable_mode=compat: a .pth file that puts the checkout on sys.path, instead of
    # setuptools' default import finder, which every Python start pays for (about 8 ms of
    # `python -c pass`, measured in a throw-away venv: 15.3 -> 7.5 ms), `serve` included. The
    # four packages, the console script and the tests' imports work the same from any cwd.
    log "$PYTHON -m pip install -e '.[test]' --config-settings editable_mode=compat ${extra[*]}"
    "$PYTHON" -m pip install -q "${extra[@]}" --config-settings editable_mode=compat -e '.[test]'
    # An editable install is never byte-compiled: without .pyc files every `serve` compiles
    # its modules again (about 40 ms of its start-up).
    log "$PYTHON -m compileall fakemaster encoder decoder scenarios"
    "$PYTHON" -m compileall -q -j 0 fakemaster encoder decoder scenarios
}

if [ "$WITH_MARIADB" -eq 1 ]; then
    install_mariadb
    install_java
    install_node
    install_chromium
else
    log "--no-mariadb: skipping the apt part"
fi
install_python
log "done"
