#!/usr/bin/env bash
# The Spark tests (tests/fakemaster/spark) under each PySpark minor version the `spark` extra allows, in
# throw-away virtual environments: the newest 4.0.x, 4.1.x (no admission control for Python
# streaming sources), 4.2.x (the first with it) and 4.3.x by default. Not part of CI (minutes
# per version).
#
#   bash scripts/spark-versions.sh [DIR] [VERSION...]
#
# DIR holds one venv per version (DIR/venv-spark-4.0, ...; made if absent, reused otherwise;
# default: a new temporary directory, removed at the end). VERSIONs are pip specifiers' X.Y
# (default: 4.0 4.1 4.2 4.3). Needs python3 (3.11+) with venv, Java 17, network access to
# PyPI, and what tests/fakemaster/spark needs (MariaDB 10.11 for the real-primary tests). One version at
# a time; a summary line per version at the end (the exact pyspark, pyarrow and py4j versions
# tested); the exit status is non-zero when any version failed. Extra pytest arguments: PYTEST_ARGS.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

if [[ $# -ge 1 ]]; then
  base=$1
  shift
  mkdir -p "$base"
  base=$(cd "$base" && pwd)
else
  base=$(mktemp -d "${TMPDIR:-/tmp}/fakemaster-spark-versions.XXXXXX")
  trap 'rm -rf "$base"' EXIT
fi
versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || versions=(4.0 4.1 4.2 4.3)

# The test extra's peers, less the linters (pyproject.toml [project.optional-dependencies]).
deps=(pytest pytest-asyncio pytest-timeout hypothesis pymysql mysql-replication
  mysql-connector-python cryptography scapy pyarrow numpy)

summary=()
status=0
for version in "${versions[@]}"; do
  venv=$base/venv-spark-$version
  echo "=== PySpark $version.* in $venv" >&2
  if [[ ! -x $venv/bin/python ]]; then
    python3 -m venv "$venv" || { summary+=("$version: venv failed"); status=1; continue; }
  fi
  if ! "$venv/bin/python" -m pip install -q --upgrade pip \
    || ! "$venv/bin/python" -m pip install -q "pyspark==$version.*" "${deps[@]}"; then
    summary+=("$version: install failed")
    status=1
    continue
  fi
  installed=$("$venv/bin/python" -c 'from importlib.metadata import version as v
print(" ".join(f"{n} {v(n)}" for n in ("pyspark", "pyarrow", "py4j")))')
  # PYTHONPATH: the checkout, not an installed copy (the Spark workers inherit it too).
  # shellcheck disable=SC2086
  if PYTHONPATH=$repo HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci} \
    "$venv/bin/python" -m pytest -p no:cacheprovider -q tests/fakemaster/spark ${PYTEST_ARGS:-}; then
    summary+=("$version: passed ($installed)")
  else
    summary+=("$version: FAILED ($installed)")
    status=1
  fi
done
echo "=== summary" >&2
printf '%s\n' "${summary[@]}"
exit $status
