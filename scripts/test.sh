#!/usr/bin/env bash
# Every check CI runs: lint (with the complexity limit), format, types, then the whole test
# suite (real peers included). The gates are configured in pyproject.toml.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k rows`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m ruff check .
python3 -m ruff format --check .
python3 -m mypy
python3 -m pytest -q -p no:cacheprovider --durations=30 "$@"
